package exportclaude_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/scribe-archive/scribe/exportclaude"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/internal/testkit/storetest"
	"github.com/scribe-archive/scribe/internal/testkit/testenv"
)

// Bytes that are not UTF-8 inside JSON strings (a prompt, a reply, thinking,
// a tool's output) show as U+FFFD in the document, and the export gives
// them back byte for byte from the round files, as the format promises
// (issue 14).
func TestInvalidUTF8RoundTrips(t *testing.T) {
	const id = "11111111-1111-4111-8111-111111111111"
	data, err := os.ReadFile(filepath.Join(testenv.Projects(t), "-home-dev-src-tools-thinking", id+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct{ old, new string }{
		{`"content":"create hello.py please"`, "\"content\":\"create \xff hello.py please\""},
		{`"type":"thinking","thinking":"The user wants a fil`, "\"type\":\"thinking\",\"thinking\":\"The user \xfe\xff wants a fil"},
		{`"type":"tool_result","content":"total 8`, "\"type\":\"tool_result\",\"content\":\"total \xc3 8"},
		{`"type":"text","text":"`, "\"type\":\"text\",\"text\":\"\xed\xa0\x80"}, // a surrogate half
	} {
		if !bytes.Contains(data, []byte(r.old)) {
			t.Fatalf("the sample no longer holds %s", r.old)
		}
		data = bytes.Replace(data, []byte(r.old), []byte(r.new), 1)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "projects", "p", id+".jsonl")
	if err := os.MkdirAll(filepath.Dir(src), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(src, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := inscribe.OpenStore(filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range s.Update(storetest.ClaudeAt(src, id, filepath.Dir(src)), inscribe.Options{Verify: true}) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	md, _ := s.FindDoc(id)
	var out bytes.Buffer
	warnings, err := exportclaude.Transcript(storetest.Doc(t, md), storetest.Claude, &out)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) > 0 {
		t.Errorf("warnings exporting an unedited document: %v", warnings)
	}
	if !bytes.Equal(out.Bytes(), data) {
		got, want := bytes.Split(out.Bytes(), []byte("\n")), bytes.Split(data, []byte("\n"))
		for i := range min(len(got), len(want)) {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("line %d differs:\n got %q\nwant %q", i+1, got[i], want[i])
			}
		}
		t.Fatalf("the export has %d lines, the source %d", len(got), len(want))
	}
}
