package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/internal/jsonpatch"
	"github.com/scribe-archive/scribe/internal/testkit/testenv"
)

// The secrets of issue 32's audit that survived inscription, planted
// again. None is real.
const (
	auditStripe  = "sk_live_72Jy9Rn3Ms8Yw5Lq0Ua4Xd7Oq2It6Ke"
	auditGoogle  = "AIzaSyD4Qm2Lr7Xv4Kp9Tz3Wc6Np1Hs5JdXq7mZ"
	auditAWSID   = "AKIAZ7QX3M5N2PLKWJ4R"
	auditAWSKey  = "Yp7Kr3Wv8Lq2Tz6Nc1Xm5Hs9Jd4Fb0Ga3Ue7Q2rX"
	auditJWT     = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhdWRpdC0zMiIsImlhdCI6MTcwMDAwMDAwMH0.Xq7mLv4Tz9Wc1Np5Hs3Jd6Fb0Ga2YeQ4K8r2XqQm8"
	auditBranch  = "ghp_Ua4Xd7Oq2It6KeR9Ws3Lz8Pm1Vb5Nc0Hy7Tq"
	auditMeta    = "xoxb-385719364082-5917382645091-Lq0Ua4Xd7Oq2It6KeR9Ws3Lz"
	auditSplitL  = "sk_live_93Kz0So4Nt" // found alone: a Stripe key of its own
	auditSplitR  = "9Zx6Mr1Vb5Ye3Ju7Lf"
	auditUnknown = "Vq7mK2xL9pR4tZ8w" // a password no rule finds, beside one that is found
)

// auditEncoded is a .env line with a key, in base64.
var auditEncoded = base64.StdEncoding.EncodeToString([]byte("aws_access_key_id=AKIAQ2W7VB3XKM5NPT6Y\n"))

var auditSecrets = []string{auditStripe, auditGoogle, auditAWSID, auditAWSKey, auditJWT, auditBranch, auditMeta,
	auditSplitL, auditSplitR, auditEncoded, "AKIAQ2W7VB3XKM5NPT6Y"}

// auditProjects writes the sample sessions 1111… and 3333… (with its
// subagent) with the audit's secrets planted: in the prompt's prose, in
// the branch every line records, in the subagent's description
// (meta.json), and a Stripe key cut between the two lines of one reply
// whose first half is a key of its own shape.
func auditProjects(t *testing.T, dir string) string {
	t.Helper()
	projects := filepath.Join(dir, "projects")
	for _, p := range []string{"-home-dev-src-tools-thinking", "-home-dev-src-subagent"} {
		testenv.CopyTree(t, filepath.Join(testenv.Projects(t), p), filepath.Join(projects, p))
	}
	edit := func(p string, fn func([][]byte) [][]byte) {
		t.Helper()
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		lines := fn(bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")))
		if err := os.WriteFile(p, append(bytes.Join(lines, []byte("\n")), '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	set := func(line []byte, path, v string) []byte {
		t.Helper()
		out, err := jsonpatch.Patch(line, path, jsonpatch.EncodeString(v))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return out
	}
	branch := []byte(`"gitBranch":"` + auditBranch + `"`)
	prompt := "create hello.py please; the stripe key is " + auditStripe + ", the google key is " + auditGoogle +
		". The access key id is " + auditAWSID + " and secret " + auditAWSKey + ". Use the token " + auditJWT +
		". Or run echo " + auditEncoded + " | base64 -d. Also DB_PASS=" + auditUnknown + " AWS=" + auditAWSID + " there"
	edit(filepath.Join(projects, "-home-dev-src-tools-thinking", "11111111-1111-4111-8111-111111111111.jsonl"), func(lines [][]byte) [][]byte {
		for i := range lines {
			lines[i] = bytes.ReplaceAll(lines[i], []byte(`"gitBranch":"HEAD"`), branch)
			lines[i] = bytes.ReplaceAll(lines[i], []byte("create hello.py please"), []byte(prompt))
		}
		// msg_0008: a thinking block (line 54) made a text block that ends
		// with the key's start, then its text block (55).
		lines[53] = set(lines[53], "message.content", "")
		lines[53], _ = jsonpatch.Patch(lines[53], "message.content", []byte(`[{"type":"text","text":`+string(jsonpatch.EncodeString("the new stripe key is "+auditSplitL))+`}]`))
		lines[54] = set(lines[54], "message.content.0.text", auditSplitR+" (that was the whole key). Done.")
		return lines
	})
	sub := filepath.Join(projects, "-home-dev-src-subagent", "33333333-3333-4333-8333-333333333333")
	for _, p := range []string{sub + ".jsonl", filepath.Join(sub, "subagents", "agent-a851eb1970e603fa2.jsonl")} {
		edit(p, func(lines [][]byte) [][]byte {
			for i := range lines {
				lines[i] = bytes.ReplaceAll(lines[i], []byte(`"gitBranch":"HEAD"`), branch)
			}
			return lines
		})
	}
	meta := filepath.Join(sub, "subagents", "agent-a851eb1970e603fa2.meta.json")
	edit(meta, func(lines [][]byte) [][]byte {
		return [][]byte{set(lines[0], "description", "Find python files with the token "+auditMeta)}
	})
	return projects
}

// TestAuditSecretsStayOut: the planted secrets of issue 32's audit (6) are
// in no file of the store, of the exports or of the html site, and scan
// shows none of them, nor the password beside one that no rule finds.
func TestAuditSecretsStayOut(t *testing.T) {
	dir := t.TempDir()
	projects := auditProjects(t, dir)
	root := filepath.Join(dir, "store")
	if code, out, errOut := runScribe(t, "--root", root, "inscribe", projects); code != 0 {
		t.Fatalf("inscribe: %d\n%s%s", code, out, errOut)
	}
	if hits := grepTree(t, root, auditSecrets); len(hits) > 0 {
		t.Errorf("secrets left in the store:\n%s", strings.Join(hits, "\n"))
	}
	for _, id := range []string{"11111111-1111-4111-8111-111111111111", "33333333-3333-4333-8333-333333333333"} {
		if code, out, errOut := runScribe(t, "--root", root, "export-claude", id, "--out", filepath.Join(dir, "export")); code != 0 {
			t.Fatalf("export %s: %d\n%s%s", id, code, out, errOut)
		}
	}
	if hits := grepTree(t, filepath.Join(dir, "export"), auditSecrets); len(hits) > 0 {
		t.Errorf("secrets in the exports:\n%s", strings.Join(hits, "\n"))
	}
	if code, out, errOut := runScribe(t, "--root", root, "html", "--out", filepath.Join(dir, "site")); code != 0 {
		t.Fatalf("html: %d\n%s%s", code, out, errOut)
	}
	if hits := grepTree(t, filepath.Join(dir, "site"), auditSecrets); len(hits) > 0 {
		t.Errorf("secrets in the html site:\n%s", strings.Join(hits, "\n"))
	}
	if code, out, errOut := runScribe(t, "--root", root, "scan", "--store"); code != 0 {
		t.Errorf("scan --store: %d\n%s%s", code, out, errOut)
	}
	// scan of the sources lists them, masked, and shows no neighbour.
	code, out, _ := runScribe(t, "--root", root, "scan", "--json", projects)
	if code != 1 {
		t.Errorf("scan of the sources: status %d, want 1", code)
	}
	var found []struct{ Kind, Excerpt string }
	if err := json.Unmarshal([]byte(out), &found); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, f := range found {
		kinds[f.Kind] = true
	}
	for _, k := range []string{"stripe-access-token", "gcp-api-key", "aws-access-token", "aws-secret-access-key", "jwt", "github-pat", "slack-bot-token"} {
		if !kinds[k] {
			t.Errorf("scan lists no %s (it lists %v)", k, kinds)
		}
	}
	for _, s := range append(auditSecrets, auditUnknown) {
		if strings.Contains(out, s) {
			t.Errorf("scan prints %s…", s[:8])
		}
	}
}

// TestAuditSplitPrefixThenAppend: inscribing the audit's session up to the
// line that ends with the first part of the cut key, then appending the
// rest, gives what inscribing the whole gives (the key's first part,
// replaced alone at first, is replaced as the whole key's part).
func TestAuditSplitPrefixThenAppend(t *testing.T) {
	dir := t.TempDir()
	projects := auditProjects(t, dir)
	src := filepath.Join(projects, "-home-dev-src-tools-thinking", "11111111-1111-4111-8111-111111111111.jsonl")
	whole, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	ref := filepath.Join(dir, "ref")
	if code, out, errOut := runScribe(t, "--root", ref, "inscribe", src); code != 0 {
		t.Fatalf("inscribe: %d\n%s%s", code, out, errOut)
	}
	key, err := os.ReadFile(filepath.Join(ref, "redact.toml"))
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "cut")
	os.MkdirAll(root, 0o700)
	os.WriteFile(filepath.Join(root, "redact.toml"), key, 0o600)
	lines := bytes.SplitAfter(whole, []byte("\n"))
	os.WriteFile(src, bytes.Join(lines[:54], nil), 0o644)
	if code, out, errOut := runScribe(t, "--root", root, "inscribe", src); code != 0 {
		t.Fatalf("inscribe the prefix: %d\n%s%s", code, out, errOut)
	}
	os.WriteFile(src, whole, 0o644)
	if code, out, errOut := runScribe(t, "--root", root, "append", src); code != 0 {
		t.Fatalf("append: %d\n%s%s", code, out, errOut)
	}
	want, got := storeFilesOf(t, ref), storeFilesOf(t, root)
	for n, w := range want {
		if !bytes.Equal(got[n], w) {
			t.Errorf("%s differs from a whole inscription", n)
		}
	}
	if hits := grepTree(t, root, auditSecrets); len(hits) > 0 {
		t.Errorf("secrets left in the store:\n%s", strings.Join(hits, "\n"))
	}
}
