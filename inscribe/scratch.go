package inscribe

import (
	"io"
	"os"
	"runtime"
	"sync"

	"github.com/scribe-archive/scribe/internal/osfile"
)

// scratchFiles lends updates the files they spool to and read back before
// their end: an update's new body (update.body) and the headers of the
// round files it wrote (Written). They are not the store's files: nothing
// renames them into place, so each has no name (it is removed as soon as
// it is made, where the system allows it) and a kill leaves nothing. A
// returned file is lent again, its old bytes kept: every reader bounds what
// it reads by what this update wrote.
//
// Why lend rather than make one per update: each file made and removed is
// an inode freed, and ext4 without a journal passes over every inode freed
// in the last minute (six, while the inode table is not yet written back)
// each time it makes a file in that group. On such a file system, two files
// freed per document made the kernel's work in a bulk inscription grow with
// the square of the documents (bench/README.md).
//
// One pool serves the process (scratch): the stores a check makes and
// drops need no closing, and no more than keepScratch files are idle. Each
// file is lent only for a folder on the file system it was made on, so a
// store's spool never lands in memory on a temporary file system.
type scratchFiles struct {
	mu   sync.Mutex
	idle []scratchFile
}

type scratchFile struct {
	f   *os.File
	dev uint64
}

// scratch is the process's pool.
var scratch scratchFiles

// keepScratch is how many idle files are kept, and keepScratchSize the
// largest idle file kept whole: a larger one is emptied when it is returned,
// so that an idle file holds no more than that on disk.
const (
	keepScratch     = 8
	keepScratchSize = 8 << 20
)

// get lends a file, positioned at its start, on dir's file system: an idle
// one, else one made in dir (a folder of the store the update holds the
// lock of, which removes a leftover name: removeTemps).
func (p *scratchFiles) get(dir string) (*os.File, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	dev := fileDevice(fi)
	p.mu.Lock()
	for i := len(p.idle) - 1; i >= 0; i-- {
		if s := p.idle[i]; s.dev == dev {
			p.idle = append(p.idle[:i], p.idle[i+1:]...)
			p.mu.Unlock()
			if _, err := s.f.Seek(0, io.SeekStart); err != nil {
				closeScratch(s.f)
				return nil, err
			}
			return s.f, nil
		}
	}
	p.mu.Unlock()
	f, err := osfile.CreateTemp(dir, ".scratch.tmp-*")
	if err != nil {
		return nil, err
	}
	// Removed at once: the file lives on, nameless, until it is closed.
	// Windows does not remove a file that is open: there its name stays
	// until the file is closed (put).
	if runtime.GOOS != "windows" {
		os.Remove(f.Name())
	}
	return f, nil
}

// put takes a lent file back.
func (p *scratchFiles) put(f *os.File) {
	if f == nil {
		return
	}
	fi, err := f.Stat()
	if err != nil || fi.Size() > keepScratchSize && f.Truncate(0) != nil {
		closeScratch(f)
		return
	}
	p.mu.Lock()
	if len(p.idle) < keepScratch {
		p.idle = append(p.idle, scratchFile{f, fileDevice(fi)})
		f = nil
	}
	p.mu.Unlock()
	closeScratch(f)
}

func closeScratch(f *os.File) {
	if f == nil {
		return
	}
	f.Close()
	if runtime.GOOS == "windows" {
		os.Remove(f.Name())
	}
}
