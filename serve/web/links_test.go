package web_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/serve/web"
)

// TestNoFileThroughALinkOut: a document, a round file or a shown file of
// the store that is a link leading out of it (a store cloned from git, a
// sync tool, a person) is not read: no page, download or file of the
// server, and no file of the static site, holds what it leads to (issue
// 32, 5).
func TestNoFileThroughALinkOut(t *testing.T) {
	s, _ := sampleStore(t)
	outside := t.TempDir()
	const secret = "OUTSIDE-THE-STORE-0d1f"
	write := func(name string, data []byte) string {
		p := filepath.Join(outside, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	link := func(target, p string) {
		t.Helper()
		os.Remove(p)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	claude := filepath.Join(s.SessionsDir(), "claude")
	// A plain file, as /etc/passwd, and a document that parses, holding
	// the secret, both as documents of the store.
	link(write("passwd", []byte("root:x:0:0:"+secret+":/root:/bin/bash\n")), filepath.Join(claude, "linked-passwd.md"))
	doc, err := os.ReadFile(filepath.Join(claude, toolsSession+".md"))
	if err != nil {
		t.Fatal(err)
	}
	doc = []byte(strings.Replace(strings.ReplaceAll(string(doc), toolsSession, "linked-doc"), "create hello.py please", "create hello.py please "+secret, 1))
	link(write("doc.md", doc), filepath.Join(claude, "linked-doc.md"))
	// A shown file and a round file of a session of the store.
	link(write("shown.png", []byte(secret)), filepath.Join(claude, imageSession, "files", imageFile))
	rf, err := os.ReadFile(filepath.Join(claude, "22222222-2222-4222-8222-222222222222", "rounds", "001.json"))
	if err != nil {
		t.Fatal(err)
	}
	link(write("001.json", []byte(strings.Replace(string(rf), "first question", "first question "+secret, 1))), filepath.Join(claude, "22222222-2222-4222-8222-222222222222", "rounds", "001.json"))

	srv := serve(t, wire(t, s), web.Options{})
	for _, p := range []string{
		"/s/linked-passwd/", "/s/linked-passwd/document.md", "/s/linked-passwd/transcript.jsonl",
		"/s/linked-doc/", "/s/linked-doc/document.md", "/s/linked-doc/transcript.jsonl",
		"/s/" + imageSession + "/files/" + imageFile,
		"/s/22222222-2222-4222-8222-222222222222/transcript.jsonl",
	} {
		if pg := get(t, srv.URL+p); strings.Contains(pg.body, secret) {
			t.Errorf("%s (%d) shows what a link out of the store leads to", p, pg.status)
		}
	}
	site := t.TempDir()
	web.New(wire(t, s), web.Options{Logf: t.Logf}).WriteSite(t.Context(), site)
	filepath.WalkDir(site, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), secret) {
				t.Errorf("the site's %s holds what a link out of the store leads to", p)
			}
		}
		return nil
	})
}
