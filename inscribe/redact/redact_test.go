package redact

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/session/source"
)

// Planted secrets of well-known kinds. None is real: they have the shape
// gitleaks looks for, and high entropy where its rules ask for it.
var planted = map[string]string{
	"aws-access-token":    "AKIAZ7QX3M5N2PLKWJ4R",
	"github-pat":          "ghp_R8x2mQ7vLk4Tz9Wc1Np5Hs3Jd6Fb0Ga2Ye4U",
	"slack-bot-token":     "xoxb-285719364082-4917382645091-Qm8Lr2Xv7Kp4Tz9Wc1Np5Hs3",
	"stripe-access-token": "sk_live_51Hx8Qm2Lr7Xv4Kp9Tz3Wc6Np1Hs5Jd",
}

func newRedactor(t testing.TB) *Redactor {
	t.Helper()
	d, err := NewDetector(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &Redactor{Detector: d, Key: []byte("0123456789abcdef0123456789abcdef")}
}

func TestFindsPlanted(t *testing.T) {
	r := newRedactor(t)
	for rule, secret := range planted {
		text := "here it is: " + secret + " and more"
		fs := r.Detector.Find(text)
		if len(fs) != 1 || fs[0].Secret != secret || fs[0].Rule != rule {
			t.Errorf("%s: found %+v", rule, fs)
		}
		out, reps := r.Text(text)
		if strings.Contains(out, secret) || len(reps) != 1 {
			t.Errorf("%s: %q, %+v", rule, out, reps)
		}
		if !MarkerPattern().MatchString(out) {
			t.Errorf("%s: no marker in %q", rule, out)
		}
		// Idempotent: nothing more is found in the redacted text.
		if again, reps := r.Text(out); again != out || len(reps) != 0 {
			t.Errorf("%s: redacting twice changed %q to %q", rule, out, again)
		}
	}
}

func TestMarkerStable(t *testing.T) {
	r := newRedactor(t)
	a, b := r.Marker("x", "secret-one"), r.Marker("x", "secret-one")
	if a != b || a == r.Marker("x", "secret-two") {
		t.Errorf("markers %q %q", a, b)
	}
	if !MarkerPattern().MatchString(a) {
		t.Errorf("marker %q does not match MarkerPattern", a)
	}
}

func TestPrivateKeyAcrossChunks(t *testing.T) {
	r := newRedactor(t)
	key := "-----BEGIN RSA PRIVATE KEY-----\n" + strings.Repeat("MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n", 30) + "-----END RSA PRIVATE KEY-----\n"
	text := strings.Repeat("filler line of an output\n", 150) + key + "after\n"
	out, reps := r.Text(text)
	if strings.Contains(out, "MIIEowIBAAKCAQEAu1SU1Lf") || len(reps) == 0 {
		t.Errorf("private key not redacted: %+v", reps)
	}
}

func TestLineKeepsJSONValid(t *testing.T) {
	r := newRedactor(t)
	line := []byte(`{"type":"user","uuid":"u1","message":{"role":"user","content":[{"type":"text","text":"my key is AKIAZ7QX3M5"},{"type":"text","text":"N2PLKWJ4R ok, and again \"AKIAZ7QX3M5N2PLKWJ4R\""}]},"signature":"AKIAZ7QX3M5N2PLKWJ4R"}`)
	fields := fieldsOf(t, line, "message.content.0.text", "message.content.1.text")
	out, reps := r.Line(line, fields)
	if !json.Valid(out) {
		t.Fatalf("invalid JSON: %s", out)
	}
	var v struct {
		Message struct {
			Content []struct{ Text string }
		}
		Signature string
	}
	json.Unmarshal(out, &v)
	if v.Signature != "AKIAZ7QX3M5N2PLKWJ4R" {
		t.Errorf("a field that is not text changed: %s", out)
	}
	for _, c := range v.Message.Content {
		if strings.Contains(c.Text, "AKIAZ7QX3M5") || strings.Contains(c.Text, "N2PLKWJ4R") {
			t.Errorf("left in %q", c.Text)
		}
	}
	if len(reps) < 2 {
		t.Errorf("replacements %+v", reps)
	}
}

// fieldsOf returns the fields of line at the paths given.
func fieldsOf(t *testing.T, line []byte, paths ...string) []source.TextField {
	t.Helper()
	var out []source.TextField
	for _, p := range paths {
		s, e, err := locateForTest(line, p)
		if err != nil {
			t.Fatal(p, err)
		}
		var text string
		json.Unmarshal(line[s:e], &text)
		out = append(out, source.TextField{Path: p, Start: s, End: e, Text: text})
	}
	return out
}

func TestCorpusHasNoSecretsInSamples(t *testing.T) {
	r := newRedactor(t)
	for _, s := range []string{
		"export function apiKeyFromEnv(name: string) { return process.env[name] }",
		"the token count was 12345; the key: value pairs are listed below",
		"https://github.com/scribe-archive/scribe/blob/main/README.md",
		"11111111-1111-4111-8111-111111111111",
	} {
		if fs := r.Detector.Find(s); len(fs) != 0 {
			t.Errorf("%q: false positive %+v", s, fs)
		}
	}
}

func TestSettings(t *testing.T) {
	dir := t.TempDir()
	if s, err := Load(dir); s != nil || err != nil {
		t.Fatalf("no file: %v %v", s, err)
	}
	s := New()
	if err := s.Write(dir); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir)
	if err != nil || !got.Redact || string(got.Key) != string(s.Key) {
		t.Fatalf("load: %+v %v", got, err)
	}
	got.SetRedact(false)
	if err := got.Write(dir); err != nil {
		t.Fatal(err)
	}
	off, err := Load(dir)
	if err != nil || off.Redact || string(off.Key) != string(s.Key) {
		t.Fatalf("off: %+v %v", off, err)
	}
	if _, err := off.Redactor(); err != nil {
		t.Fatal(err)
	}
}

func TestOwnRules(t *testing.T) {
	src := New().Src
	src = append(src, []byte("\n[[rules]]\nid = \"acme-token\"\nregex = '''acme_[a-z0-9]{16}'''\nkeywords = [\"acme_\"]\n\n[[allowlists]]\nregexes = ['''AKIAZ7QX3M5N2PLKWJ4R''']\n")...)
	d, err := NewDetector(src)
	if err != nil {
		t.Fatal(err)
	}
	fs := d.Find("use acme_0123456789abcdef and AKIAZ7QX3M5N2PLKWJ4R")
	if len(fs) != 1 || fs[0].Rule != "acme-token" {
		t.Errorf("found %+v", fs)
	}
	if _, err := NewDetector([]byte("[[rules]]\nid = \"bad\"\nregex = '''([a-'''\n")); err == nil {
		t.Error("a bad rule was accepted")
	}
	// An empty stop word ("a," split at its comma) lets nothing be.
	d, err = NewDetector([]byte("[[allowlists]]\nstopwords = \"example,\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if fs := d.Find("use AKIAZ7QX3M5N2PLKWJ4R"); len(fs) != 1 {
		t.Errorf("with an empty stop word: found %+v", fs)
	}
	// A rule's error names its place in the file.
	_, err = NewDetector([]byte("[[rules]]\nid = \"a\"\nregex = \"x\"\n[[rules]]\nid = \"a\"\nregex = \"y\"\n[[rules]]\nid = \"c\"\n"))
	if err == nil || !strings.Contains(err.Error(), "rule 3 (c)") {
		t.Errorf("a rule without regex, third in its file: %v", err)
	}
}

func TestSiblings(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"message.content.3.text", "message.content.4.text", true},
		{"message.content.3.text", "message.content.5.text", false},
		{"message.content.9.text", "message.content.10.text", true},
		{"message.content.3.text", "message.content.4.thinking", false},
		{"a.1", "a.2", true},
		{"a.1", "b.2", false},
		{"x.13.y", "x.14.y", true},
		{"x.3", "x.13", false},
		{"toolUseResult.stdout", "toolUseResult.stderr", false},
	} {
		if got := siblings(c.a, c.b); got != c.want {
			t.Errorf("siblings(%q, %q) = %v", c.a, c.b, got)
		}
	}
}

// TestJoint: a token cut between two texts (two lines of one message) is
// replaced in both, each part by the token's marker; a token whole in one
// of them is left to Line.
func TestJoint(t *testing.T) {
	r := newRedactor(t)
	const left, right = "npm_Xq7mLv4Tz9Wc1Np5", "Hs3Jd6Fb0Ga2YeQ4K8r2"
	a, b, reps := r.Joint("the npm token is "+left, right+" and more")
	m := r.Marker("npm-access-token", left+right)
	if a != "the npm token is "+m || b != m+" and more" || len(reps) != 1 {
		t.Errorf("got %q, %q, %+v", a, b, reps)
	}
	for _, rep := range reps {
		if strings.Contains(rep.Excerpt, left) || strings.Contains(rep.Excerpt, right) {
			t.Errorf("the excerpt shows the token: %q", rep.Excerpt)
		}
	}
	if a, b, reps := r.Joint("the npm token is "+left+right, " and more"); len(reps) != 0 || !strings.HasSuffix(a, right) || b != " and more" {
		t.Errorf("a token whole in the first text: %q, %q, %+v", a, b, reps)
	}
}

// TestDetectorOnFirstUse: a store's redactor loads gitleaks' rules when it
// first scans a text, not before (an append with nothing new scans none),
// and a store's rules that cannot be read are reported at once.
func TestDetectorOnFirstUse(t *testing.T) {
	r, err := New().Redactor()
	if err != nil {
		t.Fatal(err)
	}
	if r.Detector != nil {
		t.Error("the detector is loaded before any text is scanned")
	}
	if out, _ := r.Text("the AWS key is AKIAQ4Z7VB2XKM5NPT3W"); strings.Contains(out, "AKIA") || r.Detector == nil {
		t.Errorf("after a scan: %q, detector %v", out, r.Detector)
	}
	bad := New()
	bad.Src = append(bad.Src, "\n[[rules]]\nid = \"x\"\nregex = '''(['''\n"...)
	if _, err := bad.Redactor(); err == nil {
		t.Error("a rule that does not compile is not reported")
	}
}

// TestStopWords: the generic rule's stop words still keep a value from
// being a secret (scribe looks for them without gitleaks' trie).
func TestStopWords(t *testing.T) {
	r := newRedactor(t)
	if fs := r.Find(`api_key = "Zq8Lr2Xv7Kp4Tz9Wc1Np5Hs3Jd6Fb0"`); len(fs) != 1 {
		t.Fatalf("without a stop word: %+v", fs)
	}
	if fs := r.Find(`api_key = "Zq8Lr2Xv7AbstractWc1Np5Hs3Jd6Fb0"`); len(fs) != 0 {
		t.Errorf("a value holding a stop word (abstract) is a secret: %+v", fs)
	}
}

// TestExcerptMasksNeighbours: an excerpt masks the secret found and every
// word around it that looks like one, found by a rule or not, and shows
// no part of a word it cuts (issue 32, 6).
func TestExcerptMasksNeighbours(t *testing.T) {
	r := newRedactor(t)
	const unknown = "Vq7mK2xL9pR4tZ8w"         // a password no rule finds
	const longer = "zz9q8w7e6r5t4y3u2i1o0pazz" // letters and digits, no upper case
	text := "export DB_PASS=" + unknown + " AWS=" + planted["aws-access-token"] + " and " + longer + " done at 2026-11-22T09:26:16Z in hello.py"
	_, reps := r.Text(text)
	if len(reps) == 0 {
		t.Fatal("the AWS key is not found")
	}
	for _, rep := range reps {
		for _, s := range []string{unknown, longer, planted["aws-access-token"], unknown[8:], longer[:10]} {
			if strings.Contains(rep.Excerpt, s) {
				t.Errorf("the excerpt shows %q: %q", s, rep.Excerpt)
			}
		}
		if !strings.Contains(rep.Excerpt, "AWS=") {
			t.Errorf("the excerpt lost its context: %q", rep.Excerpt)
		}
	}
	// Words of prose, paths and times are shown.
	if got := maskLooking("done at 2026-11-22T09:26:16Z in /home/dev/src/tools-thinking/hello.py"); got != "done at 2026-11-22T09:26:16Z in /home/dev/src/tools-thinking/hello.py" {
		t.Errorf("maskLooking masks prose: %q", got)
	}
}

// TestProseDelimiters: the secrets of issue 32's audit that gitleaks'
// rules missed for what followed or preceded them are found and replaced
// whole: a key followed by punctuation, an AWS secret key in prose beside
// its access key id, a JWT ending a sentence, a secret in base64.
func TestProseDelimiters(t *testing.T) {
	r := newRedactor(t)
	const (
		stripe    = "sk_live_51Hx8Qm2Lr7Xv4Kp9Tz3Wc6Np1Hs5Jd"
		google    = "AIzaSyD4Qm2Lr7Xv4Kp9Tz3Wc6Np1Hs5JdXq7mZ"
		awsID     = "AKIAQ4Z7VB2XKM5NPT3W"
		awsSecret = "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"
		jwt       = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJzY3JpYmUtdGVzdCIsImlhdCI6MTcwMDAwMDAwMH0.Qm8Lr2Xv7Kp4Tz9Wc1Np5Hs3Jd6Fb0Ga2YeQ4K8r2Xq"
	)
	encoded := base64.StdEncoding.EncodeToString([]byte("aws_access_key_id=" + awsID + "\n"))
	for _, c := range []struct{ text, secret, rule string }{
		{"the key is " + stripe + ", and more", stripe, "stripe-access-token"},
		{"the key is " + stripe + ".", stripe, "stripe-access-token"},
		{"(" + stripe + ")", stripe, "stripe-access-token"},
		{"the google key is " + google + ".", google, "gcp-api-key"},
		{"the google key: " + google + ": done", google, "gcp-api-key"},
		{"the access key id is " + awsID + " and secret " + awsSecret + ".", awsSecret, "aws-secret-access-key"},
		{"and the secret is " + awsSecret + ", keep it", awsSecret, "aws-secret-access-key"},
		{"use the token " + jwt + ".", jwt, "jwt"},
		{"echo " + encoded + " | base64 -d", encoded, "aws-access-token"},
	} {
		out, _ := r.Text(c.text)
		if strings.Contains(out, c.secret) || !strings.Contains(out, "[REDACTED:"+c.rule+":") {
			t.Errorf("%q\n  gives %q, want the %s replaced", c.text, out, c.rule)
		}
	}
	// What is not a secret stays.
	for _, text := range []string{
		"the commit is 2f1c3e4d5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d, secret santa",
		"secret: /home/dev/src/tools/thinking/hello/world/path/deep",
		"a word base64 reads: ThisIsAVeryLongIdentifierNameOfSomeFunction",
		"the token is ey.",
	} {
		if out, reps := r.Text(text); len(reps) > 0 {
			t.Errorf("%q\n  gives %q: a false positive", text, out)
		}
	}
}
