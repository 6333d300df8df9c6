package inscribe

import (
	"io"
	"os"
	"testing"
)

// TestScratchFiles: a file given back is lent again from its start, with
// no name, only for a folder on its own file system; one larger than
// keepScratchSize comes back empty; no more than keepScratch are kept idle.
func TestScratchFiles(t *testing.T) {
	dir := t.TempDir()
	var p scratchFiles
	f, err := p.get(dir)
	if err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("a scratch file has a name: %v", ents)
	}
	f.WriteString("earlier bytes")
	p.put(f)
	g, err := p.get(dir)
	if err != nil {
		t.Fatal(err)
	}
	if g != f {
		t.Fatal("an idle file was not lent again")
	}
	if at, _ := g.Seek(0, io.SeekCurrent); at != 0 {
		t.Errorf("lent at offset %d", at)
	}
	if err := g.Truncate(keepScratchSize + 1); err != nil {
		t.Fatal(err)
	}
	p.put(g)
	if fi, err := p.idle[0].f.Stat(); err != nil || fi.Size() != 0 {
		t.Errorf("a large idle file kept %v bytes (%v)", fi.Size(), err)
	}
	// Another file system (a memory one, where there is): not lent there.
	if shm, err := os.MkdirTemp("/dev/shm", "scribe-test-"); err == nil {
		defer os.RemoveAll(shm)
		a, _ := os.Stat(dir)
		b, _ := os.Stat(shm)
		if fileDevice(a) != fileDevice(b) {
			h, err := p.get(shm)
			if err != nil {
				t.Fatal(err)
			}
			if h == g {
				t.Error("a file was lent for a folder on another file system")
			}
			p.put(h)
		}
	}
	var lent []*os.File
	for range keepScratch + 2 {
		f, err := p.get(dir)
		if err != nil {
			t.Fatal(err)
		}
		lent = append(lent, f)
	}
	for _, f := range lent {
		p.put(f)
	}
	if len(p.idle) != keepScratch {
		t.Errorf("%d idle files kept, want %d", len(p.idle), keepScratch)
	}
	if _, err := lent[len(lent)-1].Stat(); err == nil {
		t.Error("a file past the idle ones was not closed")
	}
}
