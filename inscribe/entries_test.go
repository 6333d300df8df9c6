package inscribe

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/session"
)

// TestRoundEntries reads every round file of the bundled store, one with
// an entry longer than the reader's buffer, and one laid out otherwise
// than scribe writes (compact JSON), an entry at a time: the entries are
// those the file holds, and CopyEntry gives each one's JSON.
func TestRoundEntries(t *testing.T) {
	check := func(t *testing.T, d *Doc, n int) {
		t.Helper()
		want, err := d.Round(n)
		if err != nil {
			t.Fatal(err)
		}
		r, err := d.RoundEntries(n)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		for i := 0; ; i++ {
			e, at, err := r.Next()
			if err == io.EOF {
				if i != len(want.Entries) {
					t.Fatalf("round %d: %d entries, want %d", n, i, len(want.Entries))
				}
				return
			}
			if err != nil {
				t.Fatalf("round %d: %v", n, err)
			}
			w := want.Entries[i]
			if e.Line != w.Line || e.NoNewline != w.NoNewline || !bytes.Equal(e.JSON, w.JSON) || (e.Text == nil) != (w.Text == nil) || (e.Base64 == nil) != (w.Base64 == nil) {
				t.Fatalf("round %d, entry %d: %+v, want %+v", n, i, e, w)
			}
			if at.Len > 0 {
				got, err := d.ReadEntry(at)
				if err != nil || !bytes.Equal(got, w.JSON) {
					t.Fatalf("round %d, entry %d: ReadEntry %.80q, %v; want %.80q", n, i, got, err, w.JSON)
				}
			}
		}
	}
	s, err := OpenStore(filepath.Join("..", "data"))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := s.Docs()
	if err != nil || len(docs) == 0 {
		t.Fatalf("the bundled store's documents: %d, %v", len(docs), err)
	}
	for _, d := range docs {
		ns, err := d.Rounds()
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range ns {
			check(t, d, n)
		}
	}

	// A long entry, a text entry, none, and a compact file.
	dir := t.TempDir()
	d := &Doc{path: filepath.Join(dir, "s.md")}
	if err := os.MkdirAll(filepath.Join(dir, "s", "rounds"), 0o755); err != nil {
		t.Fatal(err)
	}
	long := `{"type":"user","message":{"content":"` + strings.Repeat("x", 200<<10) + `"}}`
	r := &session.Round{N: 1, Entries: []session.Entry{{Line: 1, Raw: []byte(`{"a":1}`)}, {Line: 2, Raw: []byte(long)}, {Line: 3, Raw: []byte("not json"), Invalid: true}, {Line: 4, Raw: []byte(`{"b":2}`), NoNewline: true}}}
	write := func(n int, r *session.Round) {
		var buf bytes.Buffer
		if err := writeRoundTo(&buf, roundHeader(r), r, nil); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(roundPath(d.folder(), n), buf.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(1, r)
	write(2, &session.Round{N: 2})
	rf, err := d.Round(1)
	if err != nil {
		t.Fatal(err)
	}
	compact, _ := json.Marshal(rf)
	os.WriteFile(roundPath(d.folder(), 3), compact, 0o600)
	for n := 1; n <= 3; n++ {
		check(t, d, n)
	}
}
