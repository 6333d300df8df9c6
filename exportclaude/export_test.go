package exportclaude_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/exportclaude"
	"github.com/scribe-archive/scribe/exportcore"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/inscribe/document"
	"github.com/scribe-archive/scribe/internal/testkit/storetest"
	"github.com/scribe-archive/scribe/internal/testkit/testenv"
	"github.com/scribe-archive/scribe/session"
)

// TestMain writes every text of a conversion through a mark, as a text
// of a megabyte or more is written (exportcore.LongTexts): the goldens
// and the real clients judge the conversion written so. Every export
// keeps its graph nodes in a file, as one of a long session does
// (exportcodex's and exportgemini's tests export as a short one does).
func TestMain(m *testing.M) {
	exportcore.SetLongTextForTest(0)
	inscribe.SetGraphInFileForTest(0)
	os.Exit(m.Run())
}

// sourceBytes returns what a lossless export must give: the source, less a
// torn last line.
func sourceBytes(t *testing.T, p string) []byte {
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if i := bytes.LastIndexByte(data, '\n'); i < len(data)-1 {
		if tail := data[i+1:]; !json.Valid(tail) {
			data = data[:i+1]
		}
	}
	return data
}

// TestExportIsLossless: for every sample session, the export of its
// inscription is the source, byte for byte (its sidechains and kept files
// too), except a torn last line.
func TestExportIsLossless(t *testing.T) {
	s, projects := storetest.Samples(t)
	ts, err := storetest.Claude.Discover(projects)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range ts {
		t.Run(tr.ID, func(t *testing.T) {
			md, ok := s.FindDoc(tr.ID)
			if !ok {
				t.Fatal("not in the store")
			}
			out := t.TempDir()
			files, warnings, err := exportclaude.Session(storetest.Doc(t, md), storetest.Claude, out, exportclaude.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(warnings) > 0 {
				t.Errorf("warnings exporting an unedited document: %v", warnings)
			}
			want := map[string]string{tr.ID + ".jsonl": tr.Path}
			for _, sa := range tr.Sidechains {
				want[sa.Rel] = sa.Path
				if sa.MetaFile != "" {
					want[strings.TrimSuffix(sa.Rel, ".jsonl")+".meta.json"] = sa.MetaFile
				}
			}
			for _, f := range tr.Files {
				want[filepath.Join(tr.ID, f)] = filepath.Join(strings.TrimSuffix(tr.Path, ".jsonl"), f)
			}
			if len(files) != len(want) {
				t.Errorf("exported %d files, want %d", len(files), len(want))
			}
			for rel, src := range want {
				got, err := os.ReadFile(filepath.Join(out, rel))
				if err != nil {
					t.Errorf("%s: %v", rel, err)
					continue
				}
				if !bytes.Equal(got, sourceBytes(t, src)) {
					t.Errorf("%s differs from %s", rel, src)
				}
			}
		})
	}
}

// TestExportPublicCorpus: the same over the public corpus in ../shared.
func TestExportPublicCorpus(t *testing.T) {
	dir := t.TempDir()
	s, err := inscribe.OpenStore(filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range testenv.PublicTranscripts(t) {
		tr := storetest.ClaudeAt(p, strings.TrimSuffix(filepath.Base(p), ".jsonl"), filepath.Dir(p))
		for _, r := range s.Update(tr, inscribe.Options{}) {
			if r.Err != nil {
				t.Fatalf("%s: %v", p, r.Err)
			}
		}
		var buf bytes.Buffer
		md, _ := s.FindDoc(tr.ID)
		if _, err := exportclaude.Transcript(storetest.Doc(t, md), storetest.Claude, &buf); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if !bytes.Equal(buf.Bytes(), sourceBytes(t, p)) {
			t.Errorf("%s: export differs from the source", filepath.Base(p))
		}
	}
}

// TestExportCarriesEdits: an edit of a message in the markdown is in the
// export, in that message only; everything else stays byte for byte.
func TestExportCarriesEdits(t *testing.T) {
	s, projects := storetest.Samples(t)
	id := "11111111-1111-4111-8111-111111111111"
	md, _ := s.FindDoc(id)
	doc, _ := os.ReadFile(md)
	edits := []struct{ old, new string }{
		{"\ncreate hello.py please\n", "\ncreate hello.py please [redacted]\n"},                                       // a prompt (string content)
		{"\nDone. I created `hello.py`.\n", "\nDone. I created `hello.py`, with \"quotes\".\n"},                       // an assistant text
		{"\nBoth failed as expected.\n", "\nBoth failed, as expected.\n"},                                             // thinking
		{"scribe:field command\nls -la\n", "scribe:field command\nls -l\n"},                                           // a tool input (a shell command)
		{"drwxr-xr-x 3 root root 4096 Nov 22 09:26 ..\n", "drwxr-xr-x 3 root root 4096 Nov 22 09:26 ..\n(trimmed)\n"}, // a tool result
	}
	edited := string(doc)
	for _, e := range edits {
		if strings.Count(edited, e.old) != 1 {
			t.Fatalf("%q is not in the document exactly once", e.old)
		}
		edited = strings.Replace(edited, e.old, e.new, 1)
	}
	if err := os.WriteFile(md, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	warnings, err := exportclaude.Transcript(storetest.Doc(t, md), storetest.Claude, &buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) > 0 {
		t.Errorf("warnings: %v", warnings)
	}
	src := sourceBytes(t, filepath.Join(projects, "-home-dev-src-tools-thinking", id+".jsonl"))
	gotLines, srcLines := strings.Split(buf.String(), "\n"), strings.Split(string(src), "\n")
	if len(gotLines) != len(srcLines) {
		t.Fatalf("export has %d lines, source %d", len(gotLines), len(srcLines))
	}
	changed := 0
	for i := range srcLines {
		if gotLines[i] != srcLines[i] {
			changed++
		}
	}
	if changed != len(edits) {
		t.Errorf("%d lines changed, want %d (one per edit)", changed, len(edits))
	}
	for _, want := range []string{
		`"content":"create hello.py please [redacted]"`,
		`"text":"Done. I created ` + "`hello.py`" + `, with \"quotes\"."`,
		`"thinking":"Both failed, as expected."`,
		`"command":"ls -l"`,
		`09:26 ..\n(trimmed)"`,
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("export lacks %s", want)
		}
	}
	// Inscribing the export gives the edited document back.
	out := t.TempDir()
	p := filepath.Join(out, id+".jsonl")
	os.WriteFile(p, buf.Bytes(), 0o644)
	s2, _ := inscribe.OpenStore(filepath.Join(out, "data"))
	for _, r := range s2.Update(storetest.ClaudeAt(p, id, out), inscribe.Options{}) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		a, _ := document.Parse([]byte(edited), md)
		got, _ := os.ReadFile(r.Doc)
		b, err := document.Parse(got, r.Doc)
		if err != nil {
			t.Fatal(err)
		}
		// The summary placeholder quotes the first prompt, which was edited.
		a.Meta.Source, b.Meta.Source, a.Summary, b.Summary = "", "", "", ""
		if !document.Equal(a, b) {
			t.Error("inscribing the export does not give the edited document")
		}
	}
}

// TestExportWarnsOnStructuralEdits: what the transcript cannot express is
// reported, not silently dropped.
func TestExportWarnsOnStructuralEdits(t *testing.T) {
	s, _ := storetest.Samples(t)
	md, _ := s.FindDoc("22222222-2222-4222-8222-222222222222")
	doc, _ := os.ReadFile(md)
	edited := strings.Replace(string(doc), `"time":"2026-11-22T09:26:19.`, `"time":"2027-11-22T09:26:19.`, 1)
	if edited == string(doc) {
		t.Fatal("no timestamp to edit")
	}
	os.WriteFile(md, []byte(edited), 0o644)
	var buf bytes.Buffer
	warnings, err := exportclaude.Transcript(storetest.Doc(t, md), storetest.Claude, &buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0].Error(), "not carried") {
		t.Errorf("warnings = %v, want one about the timestamp", warnings)
	}
}

// TestExportRefusesToOverwrite: a different existing file stays unless
// forced; an identical one is left alone.
func TestExportRefusesToOverwrite(t *testing.T) {
	s, _ := storetest.Samples(t)
	md, _ := s.FindDoc("22222222-2222-4222-8222-222222222222")
	out := t.TempDir()
	target := filepath.Join(out, "22222222-2222-4222-8222-222222222222.jsonl")
	os.WriteFile(target, []byte("someone else's\n"), 0o644)
	if _, _, err := exportclaude.Session(storetest.Doc(t, md), storetest.Claude, out, exportclaude.Options{}); err == nil {
		t.Fatal("overwrote a different file")
	}
	if b, _ := os.ReadFile(target); string(b) != "someone else's\n" {
		t.Fatal("the existing file changed")
	}
	files, _, err := exportclaude.Session(storetest.Doc(t, md), storetest.Claude, out, exportclaude.Options{Force: true})
	if err != nil || !files[0].Written {
		t.Fatalf("forced export: %v %v", files, err)
	}
	fi, _ := os.Stat(target)
	files, _, err = exportclaude.Session(storetest.Doc(t, md), storetest.Claude, out, exportclaude.Options{})
	if err != nil || files[0].Written {
		t.Fatalf("identical export: written=%v err=%v", files[0].Written, err)
	}
	if fi2, _ := os.Stat(target); !fi2.ModTime().Equal(fi.ModTime()) {
		t.Error("an identical file was rewritten")
	}
}

// TestExportWarnsOnAddedMessages: messages added by hand at the end of a
// document are not exported, and the warning counts them in good English.
func TestExportWarnsOnAddedMessages(t *testing.T) {
	s, _ := storetest.Samples(t)
	md, _ := s.FindDoc("22222222-2222-4222-8222-222222222222")
	doc, _ := os.ReadFile(md)
	last := string(doc[strings.LastIndex(string(doc), "\n---\n\n### "):])
	for _, c := range []struct {
		copies int
		want   string
	}{
		{1, "1 message at the end of the document has no source entries"},
		{2, "2 messages at the end of the document have no source entries"},
	} {
		os.WriteFile(md, []byte(string(doc)+strings.Repeat(last, c.copies)), 0o644)
		var buf bytes.Buffer
		warnings, err := exportclaude.Transcript(storetest.Doc(t, md), storetest.Claude, &buf)
		if err != nil {
			t.Fatal(err)
		}
		if len(warnings) != 1 || !strings.Contains(warnings[0].Error(), c.want) {
			t.Errorf("with %d added: warnings = %v, want one saying %q", c.copies, warnings, c.want)
		}
	}
}

// TestExportDocumentBeforeNotes: a document written before the client's
// bookkeeping became notes holds a turn_duration entry as a message of its
// own. The export still gives the source back, with the person's edits,
// and warns of nothing.
func TestExportDocumentBeforeNotes(t *testing.T) {
	const id = "11111111-1111-4111-8111-111111111111"
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join(testenv.Projects(t), "-home-dev-src-tools-thinking", id+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	const after = `"content":[{"type":"text","text":"Done. I created ` + "`hello.py`" + `."}]`
	lines := strings.SplitAfter(string(src), "\n")
	var with []string
	for _, l := range lines {
		with = append(with, l)
		if strings.Contains(l, after) {
			with = append(with, `{"parentUuid":"0d6a2e72-c02b-4d00-b80d-c06f6f6d971f","isSidechain":false,"type":"system","subtype":"turn_duration","durationMs":228000,"messageCount":9,"timestamp":"2026-11-22T09:26:17.400Z","uuid":"5d5d5d5d-0000-4000-8000-000000000001","isMeta":false,"userType":"external","cwd":"/home/dev/src/tools-thinking","sessionId":"`+id+`","version":"2.1.328","gitBranch":"HEAD"}`+"\n")
		}
	}
	if len(with) != len(lines)+1 {
		t.Fatal("the transcript no longer holds the reply the test adds to")
	}
	p := filepath.Join(dir, id+".jsonl")
	os.WriteFile(p, []byte(strings.Join(with, "")), 0o644)
	s, err := inscribe.OpenStore(filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	var md string
	for _, r := range s.Update(storetest.ClaudeAt(p, id, dir), inscribe.Options{}) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		md = r.Doc
	}
	data, _ := os.ReadFile(md)
	d, err := document.Parse(data, md)
	if err != nil {
		t.Fatal(err)
	}
	// The document as scribe wrote it before: the entry a message of its
	// own, shown as recorded.
	var items []session.Item
	notes := 0
	for _, it := range d.Items {
		var kept []session.Block
		var own []session.Item
		for _, b := range it.Blocks {
			if b.Kind != session.KindNote {
				kept = append(kept, b)
				continue
			}
			notes++
			line := with[indexOf(with, "5d5d5d5d")]
			own = append(own, session.Item{Time: b.Time, Role: "system", Note: b.Label, IDs: []string{b.Entry},
				Blocks: []session.Block{{Kind: session.KindRaw, Label: "system", Text: strings.TrimSuffix(line, "\n")}}})
		}
		it.Blocks = kept
		items = append(append(items, it), own...)
	}
	if notes != 1 {
		t.Fatalf("%d notes, want 1", notes)
	}
	d.Items = items
	old := string(document.Render(d))
	old = strings.Replace(old, "\nBoth failed as expected.\n", "\nBoth failed, as expected.\n", 1)
	os.WriteFile(md, []byte(old), 0o644)

	var buf bytes.Buffer
	warnings, err := exportclaude.Transcript(storetest.Doc(t, md), storetest.Claude, &buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) > 0 {
		t.Errorf("warnings: %v", warnings)
	}
	want := strings.Replace(strings.Join(with, ""), `"thinking":"Both failed as expected."`, `"thinking":"Both failed, as expected."`, 1)
	if buf.String() != want {
		t.Errorf("the export is not the source with the edit")
	}
}

func indexOf(lines []string, sub string) int {
	for i, l := range lines {
		if strings.Contains(l, sub) {
			return i
		}
	}
	return -1
}
