package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/inscribe/redact"
	"github.com/scribe-archive/scribe/internal/jsonpatch"
	"github.com/scribe-archive/scribe/internal/testkit/realclient"
	"github.com/scribe-archive/scribe/internal/testkit/storetest"
	"github.com/scribe-archive/scribe/internal/testkit/testenv"
)

// Planted secrets, of the kinds issue 15 lists. None is real: each has the
// shape its rule looks for.
const (
	awsKey     = "AKIAQ4Z7VB2XKM5NPT3W"
	dbPassword = "Vq7mK2xL9pR4tZ8w"
	dbURL      = "postgres://app_user:" + dbPassword + "@db.internal.example:5432/prod"
	slackToken = "xoxb-285719364082-4917382645091-Qm8Lr2Xv7Kp4Tz9Wc1Np5Hs3"
	githubPAT  = "ghp_K8r2Xq7mLv4Tz9Wc1Np5Hs3Jd6Fb0Ga2YeQ4"
	jwtToken   = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJzY3JpYmUtdGVzdCIsImlhdCI6MTcwMDAwMDAwMH0.Qm8Lr2Xv7Kp4Tz9Wc1Np5Hs3Jd6Fb0Ga2YeQ4K8r2Xq"
	stripeKey  = "sk_live_51Hx8Qm2Lr7Xv4Kp9Tz3Wc6Np1Hs5Jd"
	envSecret  = "Zq8Lr2Xv7Kp4Tz9Wc1Np5Hs3Jd6Fb0Ga2YeQ4K8r"
	inputKey   = "Hx8Qm2Lr7Xv4Kp9Tz3Wc6Np1"
	imagePAT   = "ghp_Tz9Wc1Np5Hs3Jd6Fb0Ga2YeQ4K8r2Xq7mLv4"
	splitLeft  = "glpat-Xq7mLv4Tz9"
	splitRight = "Wc1Np5Hs3J"
	// An npm token cut between two text blocks of one assistant message,
	// which Claude Code writes as two lines.
	crossLeft  = "npm_Xq7mLv4Tz9Wc1Np5"
	crossRight = "Hs3Jd6Fb0Ga2YeQ4K8r2"
	pemBody    = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACCq7mLv4Tz9Wc1Np5Hs3Jd6Fb0Ga2YeQ4K8r2Xq7mLv4QAAAJgq7mLv4Tz9Wc\n1Np5Hs3Jd6Fb0Ga2YeQ4K8r2Xq7mLv4Tz9Wc1Np5Hs3Jd6Fb0Ga2YeQ4K8r2Xq7mLv4Tz9W\n"
	privateKey = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + pemBody + "-----END OPENSSH PRIVATE KEY-----"
)

// secretStrings are what must not be anywhere in a redacting store.
var secretStrings = []string{awsKey, dbPassword, slackToken, githubPAT, jwtToken, stripeKey, envSecret, inputKey, imagePAT,
	splitLeft, splitRight, crossLeft, crossRight, "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"}

// plantedSession writes a copy of the sample session 1111… with secrets
// planted in its text, into a projects folder under dir, and returns the
// transcript's path.
func plantedSession(t *testing.T, dir string) string {
	t.Helper()
	const id = "11111111-1111-4111-8111-111111111111"
	src := filepath.Join(testenv.Projects(t), "-home-dev-src-tools-thinking", id+".jsonl")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	set := func(n int, path string, v any) {
		t.Helper()
		enc, _ := json.Marshal(v)
		if s, ok := v.(string); ok {
			enc = jsonpatch.EncodeString(s)
		}
		out, err := jsonpatch.Patch(lines[n-1], path, enc)
		if err != nil {
			t.Fatalf("line %d: %s: %v", n, path, err)
		}
		lines[n-1] = out
	}
	prompt := "create hello.py please; the AWS key is " + awsKey + " and the database is " + dbURL
	for i := range lines {
		lines[i] = bytes.ReplaceAll(lines[i], []byte("create hello.py please"), []byte(prompt))
	}
	// Thinking, a reply, a tool input (a JWT in a command), a .env dump in
	// a tool's output (in the result and in the client's copy of it).
	set(19, "message.content.0.thinking", "The user wants a file. The Slack bot token "+slackToken+" is in the notes.")
	set(20, "message.content.0.text", "Let me check the directory with the token "+githubPAT+".")
	set(21, "message.content.0.input.command", "curl -H 'Authorization: Bearer "+jwtToken+"' https://api.example.com/v1/items; ls -la")
	env := "STRIPE_SECRET_KEY=" + stripeKey + "\nAWS_SECRET_ACCESS_KEY=" + envSecret + "\nDATABASE_URL=" + dbURL + "\n"
	set(24, "message.content.0.content", env)
	set(24, "toolUseResult.stdout", env)
	// A key inside a tool's input.
	set(28, "message.content.0.input.content", "API_KEY = \""+inputKey+"\"\nprint('hello')\n")
	// A private key in a command's output.
	set(52, "message.content.0.content", "Exit code 3\n"+privateKey+"\nerr")
	set(52, "toolUseResult", "Error: Exit code 3\n"+privateKey+"\nerr")
	// A token in an image's file name, and one split across two content
	// blocks of a prompt.
	set(46, "message.content", []map[string]string{
		{"type": "text", "text": "now read missing.txt and run a failing command; the screenshot is /tmp/shots/" + imagePAT + ".png; my GitLab token is " + splitLeft},
		{"type": "text", "text": splitRight + " (the rest of it)"},
	})
	// A token cut between two lines: the last reply (msg_0008) is a
	// thinking block then a text block, each a line; the thinking block
	// becomes a text block that ends with the token's start.
	set(54, "message.content", []map[string]string{{"type": "text", "text": "Noting it for later: the npm token is " + crossLeft}})
	set(55, "message.content.0.text", crossRight+" (that was the whole token). Done.")
	p := filepath.Join(dir, "projects", "-home-dev-src-tools-thinking", id+".jsonl")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, append(bytes.Join(lines, []byte("\n")), '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	if keep := os.Getenv("SCRIBE_KEEP_PLANTED"); keep != "" {
		// A copy to look at by hand.
		os.WriteFile(keep, append(bytes.Join(lines, []byte("\n")), '\n'), 0o644)
	}
	return p
}

// runScribe runs scribe in this process and returns its status and output.
func runScribe(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(args, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// grepTree returns the files under root that hold any of needles.
func grepTree(t *testing.T, root string, needles []string) []string {
	t.Helper()
	var hits []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := os.ReadFile(p)
		for _, n := range needles {
			if bytes.Contains(b, []byte(n)) {
				hits = append(hits, p+": "+n[:8]+"…")
			}
		}
		// A name too.
		for _, n := range needles {
			if strings.Contains(p, n) {
				hits = append(hits, "name "+p)
			}
		}
		return nil
	})
	return hits
}

// plantedStore inscribes the planted session (plantedSession) into a new
// store, with flags; it returns the scratch folder, the session and the
// store's root.
func plantedStore(t *testing.T, flags ...string) (dir, src, root string) {
	t.Helper()
	dir = t.TempDir()
	src = plantedSession(t, dir)
	root = filepath.Join(dir, "store")
	args := append(append([]string{"--root", root, "inscribe"}, flags...), src)
	if code, out, errOut := runScribe(t, args...); code != 0 {
		t.Fatalf("inscribe: %d\n%s%s", code, out, errOut)
	}
	return dir, src, root
}

// TestSecretsStayOut: every planted secret is replaced in every file of
// the store (indexes included), check reports each replacement as
// redacted, and the export resumes in the real client.
func TestSecretsStayOut(t *testing.T) {
	dir, src, root := plantedStore(t)
	if _, err := os.Stat(filepath.Join(root, "redact.toml")); err != nil {
		t.Fatalf("a new store records its choice: %v", err)
	}
	if hits := grepTree(t, root, secretStrings); len(hits) > 0 {
		t.Errorf("secrets left in the store:\n%s", strings.Join(hits, "\n"))
	}
	// scan lists every planted secret in the source, and none in the
	// store.
	code, out, _ := runScribe(t, "--root", root, "scan", "--json", src)
	if code != 1 {
		t.Errorf("scan of the source: status %d, want 1", code)
	}
	kinds := map[string]bool{}
	var secrets []struct{ Kind, Excerpt string }
	json.Unmarshal([]byte(out), &secrets)
	for _, s := range secrets {
		kinds[s.Kind] = true
	}
	for _, k := range []string{"aws-access-token", "url-password", "slack-bot-token", "github-pat", "curl-auth-header", "generic-api-key", "stripe-access-token", "private-key", "gitlab-pat", "npm-access-token"} {
		if !kinds[k] {
			t.Errorf("scan does not list a %s (it lists %v)", k, kinds)
		}
	}
	for _, s := range secretStrings {
		if strings.Contains(out, s) {
			t.Errorf("scan prints a secret: %s…", s[:8])
		}
	}
	if code, out, errOut := runScribe(t, "--root", root, "scan", "--store"); code != 0 {
		t.Errorf("scan --store of a redacting store: status %d\n%s%s", code, out, errOut)
	}

	// Appending again changes nothing.
	if _, out, _ := runScribe(t, "--root", root, "append", src); !strings.Contains(out, "0 inscribed, 0 appended, 1 unchanged") {
		t.Errorf("append after inscribe: %s", out)
	}

	// check --store: every line that held a secret is reported redacted,
	// and nothing else differs.
	checkRedacted(t, root, []int{1, 3, 15, 19, 20, 21, 24, 28, 46, 52, 54, 55}, secretStrings)

	// The export resumes in the real client, without the secrets.
	exp := filepath.Join(dir, "export")
	if code, out, errOut := runScribe(t, "--root", root, "export-claude", "1111", "--out", exp); code != 0 {
		t.Fatalf("export: %d\n%s%s", code, out, errOut)
	}
	exported := filepath.Join(exp, "11111111-1111-4111-8111-111111111111.jsonl")
	data, _ := os.ReadFile(exported)
	for i, l := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		if !json.Valid(l) {
			t.Errorf("export line %d is not JSON", i+1)
		}
	}
	if hits := grepTree(t, exp, secretStrings); len(hits) > 0 {
		t.Errorf("secrets in the export:\n%s", strings.Join(hits, "\n"))
	}
	bin := realclient.Claude(t)
	got, err := realclient.Probe(context.Background(), bin, exported, "")
	if err != nil {
		t.Fatalf("the real client does not resume the redacted export: %v", err)
	}
	if !bytes.Contains(got, []byte("[REDACTED:aws-access-token:")) {
		t.Errorf("the resumed conversation lacks the markers:\n%.2000s", got)
	}
	for _, s := range secretStrings {
		if bytes.Contains(got, []byte(s)) {
			t.Errorf("the resumed conversation holds %s…", s[:8])
		}
	}
}

// TestNoRedact: --no-redact keeps every byte, records nothing, and the
// store is the one scribe wrote before it redacted.
func TestNoRedact(t *testing.T) {
	_, src, root := plantedStore(t, "--no-redact")
	if _, err := os.Stat(filepath.Join(root, "redact.toml")); err == nil {
		t.Error("--no-redact wrote redact.toml")
	}
	rf, _ := os.ReadFile(filepath.Join(root, "sessions", "claude", "11111111-1111-4111-8111-111111111111", "rounds", "001.json"))
	if !bytes.Contains(rf, []byte(awsKey)) {
		t.Error("--no-redact replaced a secret")
	}
	// Later appends do the same: the store records no redaction.
	if code, _, _ := runScribe(t, "--root", root, "append", src); code != 0 {
		t.Fatal("append")
	}
	if _, err := os.Stat(filepath.Join(root, "redact.toml")); err == nil {
		t.Error("append wrote redact.toml in a store without it")
	}
	// The gate: scan --store finds what the store holds.
	// (The npm token cut between two lines included.)
	if code, out, _ := runScribe(t, "--root", root, "scan", "--store"); code != 1 || !strings.Contains(out, "aws-access-token") || !strings.Contains(out, "npm-access-token") {
		t.Errorf("scan --store of a store holding secrets: status %d\n%s", code, out)
	}
	// A person deletes the key from the document by hand: check finds the
	// round files still hold it, and offers forget, without showing it.
	md := filepath.Join(root, "sessions", "claude", "11111111-1111-4111-8111-111111111111.md")
	doc, _ := os.ReadFile(md)
	edited := bytes.Replace(doc, []byte("the AWS key is "+awsKey+" and"), []byte("the AWS key is  and"), -1)
	if bytes.Equal(edited, doc) {
		t.Fatal("the key is not in the document's first message")
	}
	os.WriteFile(md, edited, 0o644)
	code, out, _ := runScribe(t, "--root", root, "check", "--store")
	if code != 1 || !strings.Contains(out, "scribe forget --secret VALUE 11111111-1111-4111-8111-111111111111") {
		t.Errorf("check --store after a hand edit: status %d\n%s", code, out)
	}
	if strings.Contains(out, awsKey) {
		t.Errorf("check shows the deleted key:\n%s", out)
	}
}

// checkRedacted runs check --store, which must report nothing but
// redacted entries, without a diff (it would show the secret), one on
// each of the lines want, and print none of secrets.
func checkRedacted(t *testing.T, root string, want []int, secrets []string) {
	t.Helper()
	code, out, errOut := runScribe(t, "--root", root, "check", "--store", "--json")
	if code != 0 {
		t.Fatalf("check --store: %d\n%s%s", code, out, errOut)
	}
	var reps []struct {
		Findings []struct {
			Kind, Field, Msg, Diff string
			Line                   int
		}
	}
	if err := json.Unmarshal([]byte(out), &reps); err != nil {
		t.Fatal(err)
	}
	lines := map[int]bool{}
	for _, r := range reps {
		for _, f := range r.Findings {
			if f.Kind != "redacted" {
				t.Errorf("finding %+v", f)
			}
			if f.Diff != "" {
				t.Errorf("a redacted finding shows a diff: %+v", f)
			}
			lines[f.Line] = true
		}
	}
	for _, n := range want {
		if !lines[n] {
			t.Errorf("line %d is not reported redacted (reported: %v)", n, lines)
		}
	}
	for _, s := range secrets {
		if strings.Contains(out, s) {
			t.Errorf("check prints a secret: %s…", s[:8])
		}
	}
}

// treeBytes reads every file of a store but its lock files.
func treeBytes(t *testing.T, root string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == ".lock" {
			return err
		}
		b, _ := os.ReadFile(p)
		out[p] = b
		return nil
	})
	return out
}

// TestForget: forget removes a phrase from every file of the store (the
// indexes too), search no longer finds it, check reads the change as
// redacted, and a second forget changes nothing.
func TestForget(t *testing.T) {
	_, src, root := plantedStore(t)
	const phrase = "missing.txt"
	if _, out, _ := runScribe(t, "--root", root, "search", "missing.txt"); strings.Contains(out, "no rounds match") {
		t.Fatalf("search does not find the phrase before forget:\n%s", out)
	}
	code, out, errOut := runScribe(t, "--root", root, "forget", "--secret", phrase)
	if code != 0 || !strings.Contains(out, "forgot ") || strings.Contains(out, "forgot 0 ") {
		t.Fatalf("forget: %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "still holds it") {
		t.Errorf("forget does not say the source still holds it:\n%s", errOut)
	}
	if hits := grepTree(t, root, []string{phrase}); len(hits) > 0 {
		t.Errorf("the phrase is left in the store:\n%s", strings.Join(hits, "\n"))
	}
	if _, out, _ := runScribe(t, "--root", root, "search", "missing.txt"); !strings.Contains(out, "no rounds match") {
		t.Errorf("search still finds it:\n%s", out)
	}
	if code, out, errOut := runScribe(t, "--root", root, "check", "--store"); code != 0 {
		t.Errorf("check --store after forget: %d\n%s%s", code, out, errOut)
	}
	before := treeBytes(t, root)
	code, out, _ = runScribe(t, "--root", root, "forget", "--secret", phrase)
	if code != 0 || !strings.Contains(out, "forgot 0 occurrences in 0 sessions") {
		t.Errorf("a second forget: %d\n%s", code, out)
	}
	after := treeBytes(t, root)
	for p, b := range before {
		if !bytes.Equal(after[p], b) {
			t.Errorf("a second forget changed %s", p)
		}
	}
	// An append of the unchanged source changes nothing either.
	if _, out, _ := runScribe(t, "--root", root, "append", src); !strings.Contains(out, "1 unchanged") {
		t.Errorf("append after forget: %s", out)
	}
	// A pattern.
	if code, out, _ := runScribe(t, "--root", root, "forget", `hello\.py`); code != 0 || strings.Contains(out, "forgot 0 ") {
		t.Errorf("forget PATTERN: %d\n%s", code, out)
	}
	if hits := grepTree(t, root, []string{"hello.py"}); len(hits) > 0 {
		t.Errorf("hello.py is left in the store:\n%s", strings.Join(hits, "\n"))
	}
	if code, _, _ := runScribe(t, "--root", root, "forget", "x*"); code != 2 {
		t.Errorf("a pattern that matches the empty text is refused, status %d", code)
	}
}

// TestDataSameRedacted: the repository's data/ is the inscription of the
// samples without redaction (it has no redact.toml); inscribing them with
// redaction gives the same bytes, file for file, since the samples hold no
// secret (and the detector finds none: no false positive).
func TestDataSameRedacted(t *testing.T) {
	red, err := redact.New().Redactor()
	if err != nil {
		t.Fatal(err)
	}
	s, _ := storetest.RepositoryRedacted(t, red)
	repo := filepath.Join(testenv.RepoRoot(t), "data")
	if _, err := os.Stat(filepath.Join(repo, redact.File)); err == nil {
		t.Errorf("data/ has a %s", redact.File)
	}
	files := func(root string) map[string][]byte {
		out := map[string][]byte{}
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") || strings.Contains(d.Name(), ".db") || d.Name() == "catalog-stamps.json" {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			out[rel], _ = os.ReadFile(p)
			return nil
		})
		return out
	}
	got, want := files(filepath.Join(s.Root, "sessions")), files(filepath.Join(repo, "sessions"))
	if len(got) != len(want) {
		t.Errorf("%d files with redaction, %d in data/sessions", len(got), len(want))
	}
	for n, w := range want {
		if !bytes.Equal(got[n], w) {
			t.Errorf("data/sessions/%s differs when inscribed with redaction", n)
		}
	}
}

// TestNoFalsePositives: the generated corpora hold no real secret, so
// anything scan lists there is a false positive; there must be none. The
// public corpus's findings are listed (there are none today either).
func TestNoFalsePositives(t *testing.T) {
	shared := testenv.Shared(t)
	root := filepath.Join(t.TempDir(), "nostore")
	for _, dir := range []string{"corpus/claude-code-2.1.328/projects", "corpus/codex-0.169.0/sessions"} {
		code, out, errOut := runScribe(t, "--root", root, "scan", filepath.Join(shared, dir))
		if code != 0 {
			t.Errorf("scan %s: status %d (false positives):\n%s%s", dir, code, out, errOut)
		}
	}
	code, out, errOut := runScribe(t, "--root", root, "scan", filepath.Join(shared, "corpus/public"))
	if code == 2 {
		t.Fatalf("scan the public corpus: %s", errOut)
	}
	t.Logf("public corpus:\n%s", out)
}

// TestRedactPrefixThenAppend: with redaction, inscribing a prefix of a
// session and appending the rest gives the store that inscribing the whole
// gives, byte for byte (with the same key), at every cut: a cut between
// the two lines a token is cut between (54 and 55) included.
func TestRedactPrefixThenAppend(t *testing.T) {
	dir := t.TempDir()
	src := plantedSession(t, dir)
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
	want := storeFilesOf(t, ref)
	lines := bytes.SplitAfter(whole, []byte("\n"))
	for cut := 1; cut < len(lines)-1; cut++ { // the last is empty
		if testing.Short() && cut != 3 && cut != 20 && cut != 47 && cut != 54 {
			continue
		}
		root := filepath.Join(dir, fmt.Sprintf("cut%d", cut))
		os.MkdirAll(root, 0o700)
		os.WriteFile(filepath.Join(root, "redact.toml"), key, 0o600)
		os.WriteFile(src, bytes.Join(lines[:cut], nil), 0o644)
		if code, out, errOut := runScribe(t, "--root", root, "inscribe", src); code != 0 {
			t.Fatalf("cut %d: inscribe: %d\n%s%s", cut, code, out, errOut)
		}
		os.WriteFile(src, whole, 0o644)
		if code, out, errOut := runScribe(t, "--root", root, "append", src); code != 0 {
			t.Fatalf("cut %d: append: %d\n%s%s", cut, code, out, errOut)
		}
		got := storeFilesOf(t, root)
		for n, w := range want {
			if !bytes.Equal(got[n], w) {
				t.Errorf("cut %d: %s differs from a whole inscription", cut, n)
			}
		}
		if len(got) != len(want) {
			t.Errorf("cut %d: %d files, want %d", cut, len(got), len(want))
		}
	}
}

// storeFilesOf reads a store's files but its local bookkeeping (dot
// files) and its indexes (compared by their dumps elsewhere).
func storeFilesOf(t *testing.T, root string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") || strings.Contains(d.Name(), ".db") || d.Name() == "catalog-stamps.json" {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out[rel], _ = os.ReadFile(p)
		return nil
	})
	return out
}

// TestRepairRedacted: repair mends a redacting store's damaged round file
// from the source, redacted, and the store holds no secret after it.
func TestRepairRedacted(t *testing.T) {
	_, _, root := plantedStore(t)
	rf := filepath.Join(root, "sessions", "claude", "11111111-1111-4111-8111-111111111111", "rounds", "001.json")
	want, _ := os.ReadFile(rf)
	os.Remove(rf)
	if code, out, errOut := runScribe(t, "--root", root, "repair"); code != 0 {
		t.Fatalf("repair: %d\n%s%s", code, out, errOut)
	}
	if got, _ := os.ReadFile(rf); !bytes.Equal(got, want) {
		t.Error("the repaired round file is not the one inscribed")
	}
	if hits := grepTree(t, root, secretStrings); len(hits) > 0 {
		t.Errorf("secrets in the store after repair:\n%s", strings.Join(hits, "\n"))
	}
	if code, out, errOut := runScribe(t, "--root", root, "check", "--store"); code != 0 {
		t.Errorf("check --store after repair: %d\n%s%s", code, out, errOut)
	}
}

// plantedRollout writes a copy of the sample Codex rollout aced… with
// secrets planted in its text (a prompt, reasoning, a reply, a call's
// arguments and outputs), under dir's sessions folder, and returns its
// path.
func plantedRollout(t *testing.T, dir string) string {
	t.Helper()
	const rel = "2026/11/23/rollout-2026-11-23T16-52-22-01a20952-aced-7670-b71b-a40087387e93.jsonl"
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "testdata", "codex", "sessions", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	// Each phrase is replaced wherever the client wrote it (the response
	// item, the event, the task's last message), as JSON string content.
	esc := func(s string) string { e := jsonpatch.EncodeString(s); return string(e[1 : len(e)-1]) }
	for _, r := range []struct{ old, new string }{
		{"create hello.py please", "create hello.py please; the AWS key is " + awsKey + " and the database is " + dbURL},
		{"I should check what exists before writing.", "I should check what exists before writing. The Slack bot token " + slackToken + " is in the notes."},
		{"Let me check the directory.", "Let me check the directory with the token " + githubPAT + "."},
		{esc(`{"cmd": "ls -la"}`), esc(`{"cmd": "curl -H 'Authorization: Bearer ` + jwtToken + `' https://api.example.com/v1/items; ls -la"}`)},
		{esc("Output:\ntotal 8\n"), esc("Output:\nSTRIPE_SECRET_KEY=" + stripeKey + "\nAWS_SECRET_ACCESS_KEY=" + envSecret + "\ntotal 8\n")},
		{esc("cat: missing.txt: No such file or directory\n"), esc(privateKey + "\n")},
	} {
		if !bytes.Contains(data, []byte(r.old)) {
			t.Fatalf("the sample rollout no longer holds %q", r.old)
		}
		data = bytes.ReplaceAll(data, []byte(r.old), []byte(r.new))
	}
	p := filepath.Join(dir, "sessions", filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCodexSecretsStayOut: a Codex rollout's planted secrets are in no
// file of the store, check reports them redacted, and the redacted export
// resumes in the real Codex client, markers in place of the secrets.
func TestCodexSecretsStayOut(t *testing.T) {
	dir := t.TempDir()
	src := plantedRollout(t, dir)
	root := filepath.Join(dir, "store")
	if code, out, errOut := runScribe(t, "--root", root, "inscribe", src); code != 0 {
		t.Fatalf("inscribe: %d\n%s%s", code, out, errOut)
	}
	secrets := []string{awsKey, dbPassword, slackToken, githubPAT, jwtToken, stripeKey, envSecret, "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"}
	if hits := grepTree(t, root, secrets); len(hits) > 0 {
		t.Errorf("secrets left in the store:\n%s", strings.Join(hits, "\n"))
	}
	// The lines that held a secret: the prompt (its response item, its
	// event, the turn's context), reasoning, a reply, a call's arguments
	// and two outputs.
	checkRedacted(t, root, []int{8, 11, 13, 14, 17, 44}, secrets)
	exp := filepath.Join(dir, "export")
	if code, out, errOut := runScribe(t, "--root", root, "export-codex", "01a20952-aced-7670-b71b-a40087387e93", "--out", exp); code != 0 {
		t.Fatalf("export-codex: %d\n%s%s", code, out, errOut)
	}
	if hits := grepTree(t, exp, secrets); len(hits) > 0 {
		t.Errorf("secrets in the export:\n%s", strings.Join(hits, "\n"))
	}
	cp := realclient.Codex(t)
	rel, _ := filepath.Rel(filepath.Join(dir, "sessions"), src)
	got, err := cp.Probe(filepath.Join(exp, rel))
	if err != nil {
		t.Fatalf("the real Codex client does not resume the redacted export: %v", err)
	}
	for _, m := range []string{"[REDACTED:aws-access-token:", "[REDACTED:slack-bot-token:", "[REDACTED:github-pat:", "[REDACTED:private-key:"} {
		if !bytes.Contains(got, []byte(m)) {
			t.Errorf("the resumed conversation lacks %s…]:\n%.3000s", m, got)
		}
	}
	for _, s := range secrets {
		if bytes.Contains(got, []byte(s)) {
			t.Errorf("the resumed conversation holds %s…", s[:8])
		}
	}
}

// TestRepairAfterForget: once something was forgotten, the round files
// differ from the source, which still holds it: that is the store's own
// doing, not damage. repair finds every session sound (issue 32, 8), and
// a document lost after the forget is rebuilt from the round files, not
// from the source: the forgotten text does not come back.
func TestRepairAfterForget(t *testing.T) {
	_, src, root := plantedStore(t)
	const phrase = "missing.txt"
	if code, out, errOut := runScribe(t, "--root", root, "forget", "--secret", phrase); code != 0 {
		t.Fatalf("forget: %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := runScribe(t, "--root", root, "repair"); code != 0 || !strings.Contains(out, "0 failed") {
		t.Fatalf("repair after forget: %d\n%s%s", code, out, errOut)
	}
	mds, _ := filepath.Glob(filepath.Join(root, "sessions", "*", "*.md"))
	var doc string
	for _, md := range mds {
		if filepath.Base(md) != "index.md" {
			doc = md
		}
	}
	if err := os.Remove(doc); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runScribe(t, "--root", root, "repair")
	if code != 0 || !strings.Contains(out, "1 repaired") {
		t.Fatalf("repair of the lost document: %d\n%s%s", code, out, errOut)
	}
	if hits := grepTree(t, root, []string{phrase}); len(hits) > 0 {
		t.Errorf("the repair brought the forgotten text back:\n%s", strings.Join(hits, "\n"))
	}
	if code, out, errOut := runScribe(t, "--root", root, "check", "--store"); code != 0 {
		t.Errorf("check --store: %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := runScribe(t, "--root", root, "append", src); code != 0 {
		t.Errorf("append: %d\n%s%s", code, out, errOut)
	}
}

// TestRedactSettingsLost: a store that replaced secrets and has lost its
// redact.toml refuses to go on (issue 32, 3), naming the file and the
// ways out, instead of storing the next secrets in the clear; --redact
// goes on redacting (a new key), --no-redact keeps secrets from then on,
// chosen on purpose.
func TestRedactSettingsLost(t *testing.T) {
	dir := t.TempDir()
	src := plantedSession(t, dir)
	full, _ := os.ReadFile(src)
	lines := bytes.SplitAfter(full, []byte("\n"))
	os.WriteFile(src, bytes.Join(lines[:22], nil), 0o644) // the AWS key, the Slack and GitHub tokens
	root := filepath.Join(dir, "store")
	if code, out, errOut := runScribe(t, "--root", root, "inscribe", src); code != 0 {
		t.Fatalf("inscribe: %d\n%s%s", code, out, errOut)
	}
	settings := filepath.Join(root, "redact.toml")
	if err := os.Remove(settings); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(src, full, 0o644) // the rest, with the other secrets
	for _, args := range [][]string{{"append", src}, {"inscribe", src}, {"repair"}} {
		code, out, errOut := runScribe(t, append([]string{"--root", root}, args...)...)
		if code == 0 || !strings.Contains(errOut, settings) || !strings.Contains(errOut, "--no-redact") || !strings.Contains(errOut, "--redact") {
			t.Errorf("%v without redact.toml: %d\n%s%s", args, code, out, errOut)
		}
	}
	if hits := grepTree(t, root, secretStrings); len(hits) > 0 {
		t.Errorf("secrets stored in the clear:\n%s", strings.Join(hits, "\n"))
	}
	if code, out, errOut := runScribe(t, "--root", root, "append", "--redact", src); code != 0 {
		t.Fatalf("append --redact: %d\n%s%s", code, out, errOut)
	}
	if hits := grepTree(t, root, secretStrings); len(hits) > 0 {
		t.Errorf("secrets stored in the clear:\n%s", strings.Join(hits, "\n"))
	}
	// --no-redact, on purpose: recorded, and the next runs go on.
	os.Remove(settings)
	if code, out, errOut := runScribe(t, "--root", root, "append", "--no-redact", src); code != 0 {
		t.Fatalf("append --no-redact: %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := runScribe(t, "--root", root, "append", src); code != 0 {
		t.Fatalf("append after --no-redact: %d\n%s%s", code, out, errOut)
	}
}

// TestForgetEveryForm: forget finds the text in every form the store
// writes it (issue 32, 4): markdown-escaped (a summary's first prompt, a
// catalog's title), in metadata (the git branch, in the round files and
// the document's head), and leaves no copy in the databases, their free
// pages included.
func TestForgetEveryForm(t *testing.T) {
	const secret = "zz_top_secret_value_9"
	dir := t.TempDir()
	src := filepath.Join(dir, "proj", "s.jsonl")
	os.MkdirAll(filepath.Dir(src), 0o755)
	var b bytes.Buffer
	parent := "null"
	for i := 0; i < 4; i++ {
		u, x := fmt.Sprintf("u-%d", i), fmt.Sprintf("x-%d", i)
		ts := fmt.Sprintf("2026-01-01T00:0%d:00.000Z", i)
		fmt.Fprintf(&b, `{"parentUuid":%s,"type":"user","message":{"role":"user","content":"use %s for *this* one"},"uuid":%q,"timestamp":%q,"cwd":"/home/me/app","gitBranch":"fix/%s","sessionId":"s"}`+"\n", parent, secret, u, ts, secret)
		fmt.Fprintf(&b, `{"parentUuid":%q,"type":"assistant","message":{"id":"n%d","role":"assistant","model":"m","content":[{"type":"text","text":"done with %s"}]},"uuid":%q,"timestamp":%q,"gitBranch":"fix/%s"}`+"\n", u, i, secret, x, ts, secret)
		parent = fmt.Sprintf("%q", x)
	}
	os.WriteFile(src, b.Bytes(), 0o644)
	root := filepath.Join(dir, "store")
	if code, out, errOut := runScribe(t, "--root", root, "inscribe", "--no-redact", src); code != 0 {
		t.Fatalf("inscribe: %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := runScribe(t, "--root", root, "search", "done"); code != 0 {
		t.Fatalf("search: %d\n%s%s", code, out, errOut)
	}
	forms := []string{secret, `zz\_top\_secret\_value\_9`, "top_secret_value", `top\_secret\_value`}
	if hits := grepTree(t, root, forms); len(hits) == 0 {
		t.Fatal("the store does not hold the text to forget")
	}
	code, out, errOut := runScribe(t, "--root", root, "forget", "--secret", secret)
	if code != 0 {
		t.Fatalf("forget: %d\n%s%s", code, out, errOut)
	}
	if hits := grepTree(t, root, forms); len(hits) > 0 {
		t.Errorf("forget left copies:\n%s\n%s", strings.Join(hits, "\n"), out)
	}
	if code, out, errOut := runScribe(t, "--root", root, "check", "--store"); code != 0 {
		t.Errorf("check --store: %d\n%s%s", code, out, errOut)
	}
}

// TestForgetLeavesNoFreePage: the store's index, rebuilt after a forget,
// keeps no copy of the text in the pages its old rows freed (issue 32, 4):
// the databases overwrite what they delete (secure_delete).
func TestForgetLeavesNoFreePage(t *testing.T) {
	dir := t.TempDir()
	proj := filepath.Join(dir, "proj")
	os.MkdirAll(proj, 0o755)
	for s := 0; s < 3; s++ {
		word := "common"
		if s == 1 {
			word = "qq_only_here_7"
		}
		var b bytes.Buffer
		parent := "null"
		for i := 0; i < 40; i++ {
			u, x := fmt.Sprintf("u-%d-%d", s, i), fmt.Sprintf("x-%d-%d", s, i)
			ts := fmt.Sprintf("2026-01-01T00:%02d:00.000Z", i)
			fmt.Fprintf(&b, `{"parentUuid":%s,"type":"user","message":{"role":"user","content":"question %d about %s %s"},"uuid":%q,"timestamp":%q,"cwd":"/home/me/app","sessionId":"s%d"}`+"\n", parent, i, word, strings.Repeat("lorem ipsum dolor ", 40), u, ts, s)
			fmt.Fprintf(&b, `{"parentUuid":%q,"type":"assistant","message":{"id":"n%d","role":"assistant","model":"m","content":[{"type":"text","text":"answer %d %s %s"}]},"uuid":%q,"timestamp":%q}`+"\n", u, i, i, word, strings.Repeat("sit amet ", 60), x, ts)
			parent = fmt.Sprintf("%q", x)
		}
		os.WriteFile(filepath.Join(proj, fmt.Sprintf("s%d.jsonl", s)), b.Bytes(), 0o644)
	}
	root := filepath.Join(dir, "store")
	for _, args := range [][]string{{"inscribe", "--no-redact", proj}, {"search", "lorem"}, {"forget", "--secret", "qq_only_here_7"}} {
		if code, out, errOut := runScribe(t, append([]string{"--root", root}, args...)...); code != 0 {
			t.Fatalf("%v: %d\n%s%s", args, code, out, errOut)
		}
	}
	if hits := grepTree(t, root, []string{"only_here"}); len(hits) > 0 {
		t.Errorf("forget left copies:\n%s", strings.Join(hits, "\n"))
	}
}

// TestRedactSettingsBroken: a redact.toml scribe cannot read is named with
// the line where it fails, if it knows it, and what to do (issue 32, 11).
func TestRedactSettingsBroken(t *testing.T) {
	_, src, root := plantedStore(t)
	settings := filepath.Join(root, "redact.toml")
	for name, text := range map[string]string{
		"toml":  "[scribe\nredact = true\n",
		"key":   "[scribe]\nredact = true\nkey = \"abcd\"\n",
		"nokey": "[scribe]\nredact = true\n",
	} {
		os.WriteFile(settings, []byte(text), 0o600)
		code, out, errOut := runScribe(t, "--root", root, "append", src)
		if code == 0 || !strings.Contains(errOut, settings) || !(strings.Contains(errOut, "fix") || strings.Contains(errOut, "restore")) {
			t.Errorf("%s: %d\n%s%s", name, code, out, errOut)
		}
	}
}
