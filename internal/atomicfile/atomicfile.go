// Package atomicfile writes files so that a reader, even after a crash or a
// kill at any moment, sees the old contents or the new ones, never a mixture:
// the new contents go to a temporary file in the same directory, which is
// synced, closed and renamed over the target, and the directory is synced to
// commit the rename.
package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/scribe-archive/scribe/internal/osfile"
)

// Write creates or replaces name with what fn writes.
func Write(name string, perm fs.FileMode, fn func(io.Writer) error) (err error) {
	if err := fault("open", name); err != nil {
		return err
	}
	dir := filepath.Dir(name)
	f, err := osfile.CreateTemp(dir, "."+filepath.Base(name)+".tmp-*")
	if err != nil {
		return err
	}
	renamed := false
	defer func() {
		if err != nil && !renamed {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = fn(f); err != nil {
		return err
	}
	if err = f.Chmod(perm); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), name); err != nil {
		return err
	}
	renamed = true
	return SyncDir(dir)
}

// WriteIfChanged writes data to name unless name already holds exactly
// data. It reports whether it wrote. Re-running a job that changes nothing
// therefore touches no file and keeps every mtime.
func WriteIfChanged(name string, data []byte, perm fs.FileMode) (bool, error) {
	return WritePiecesIfChanged(name, perm, data)
}

// WritePiecesIfChanged is WriteIfChanged of data in pieces, written one
// after another: a file patched in one place is written from the old
// version's bytes on either side and the new ones between, without
// joining them into a copy of the whole.
func WritePiecesIfChanged(name string, perm fs.FileMode, data ...[]byte) (bool, error) {
	if same, err := Equal(name, data...); err != nil {
		return false, err
	} else if same {
		return false, nil
	}
	return true, Write(name, perm, func(w io.Writer) error { return writePieces(w, data) })
}

// writePieces writes pieces to w one after another.
func writePieces(w io.Writer, pieces [][]byte) error {
	for _, b := range pieces {
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// Equal reports whether name exists and holds exactly data (its pieces one
// after another). It reads the file only when the sizes agree, and only
// up to the first difference.
func Equal(name string, data ...[]byte) (bool, error) {
	fi, err := os.Stat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	size := 0
	for _, b := range data {
		size += len(b)
	}
	if fi.Size() != int64(size) {
		return false, nil
	}
	f, err := osfile.Open(name)
	if err != nil {
		return false, err
	}
	defer f.Close()
	buf := make([]byte, min(size, 1<<16)+1)
	for _, b := range data {
		for len(b) > 0 {
			n := min(len(b), len(buf)-1)
			if _, err := io.ReadFull(f, buf[:n]); err == io.EOF || err == io.ErrUnexpectedEOF {
				return false, nil // cut short since
			} else if err != nil {
				return false, err
			}
			if !bytes.Equal(buf[:n], b[:n]) {
				return false, nil
			}
			b = b[n:]
		}
	}
	switch _, err := f.Read(buf[:1]); err {
	case io.EOF:
		return true, nil
	case nil:
		return false, nil // grown since
	default:
		return false, err
	}
}

// SyncDir commits changes to a directory's entries (a rename, a new file).
// Windows cannot flush a directory (NTFS journals its entries itself), so
// there it does nothing.
func SyncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	return syncName(dir, os.O_RDONLY)
}

// syncName opens name with flag and flushes it.
func syncName(name string, flag int) error {
	f, err := osfile.OpenFile(name, flag, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// MkdirAll creates a directory and its parents, syncing each parent whose
// entries changed, so that a new directory survives a crash.
func MkdirAll(dir string, perm fs.FileMode) error { return mkdirAll(dir, perm, SyncDir) }

// mkdirAll creates a directory and its missing parents, calling made with
// the parent of each directory it creates, whose entries changed.
func mkdirAll(dir string, perm fs.FileMode, made func(parent string) error) error {
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		return nil
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := mkdirAll(parent, perm, made); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, perm); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return made(parent)
}

// Pending is a file being written beside its target. Nothing is visible at
// the target until Commit.
type Pending struct {
	f       *os.File
	target  string
	perm    fs.FileMode // set by Close
	closed  bool        // written, its descriptor released (unless held)
	done    bool
	uncache bool   // see Uncache
	batch   *Batch // the batch it belongs to, if any
	// held says the descriptor was kept when the file was closed, for its
	// batch to drop its pages through (Batch.Commit).
	held bool
	// in is the new directory the file is written in at its final name
	// (NewDir.Create): it is put in place with it, not renamed alone.
	in *NewDir
}

// Uncache has the file's pages leave the page cache once its batch has
// made it durable, where the platform allows (Linux). For files written in
// bulk and seldom read soon, such as round files: an inscription writes as
// many bytes of them as it reads of sources, and kept cached they would
// push out what the user's programs have cached. Pages freed at once are
// also the next ones written: on virtual machines that hand free memory
// back to their host (free page reporting, DAMON), writing into a page
// the host took back costs several times writing into one just freed
// (bench/README.md: a bulk inscription's system time halves).
func (p *Pending) Uncache() { p.uncache = true }

// TestOnlyFault, when set, is consulted before every file this package
// creates or writes; an error it returns is returned as if the file system
// had failed (a full disk, a read-only store). Tests only.
var TestOnlyFault func(op, name string) error

func fault(op, name string) error {
	if TestOnlyFault == nil {
		return nil
	}
	if err := TestOnlyFault(op, name); err != nil {
		return &fs.PathError{Op: op, Path: name, Err: err}
	}
	return nil
}

// Create starts writing a new version of name.
func Create(name string) (*Pending, error) { return CreateIn(filepath.Dir(name), name) }

// CreateIn is Create with the new version written in dir, which must be on
// the same file system as name: a writer that owns dir (holds its lock)
// knows that any temporary file left there is a leftover of its own.
func CreateIn(dir, name string) (*Pending, error) {
	if err := fault("open", name); err != nil {
		return nil, err
	}
	f, err := osfile.CreateTemp(dir, "."+filepath.Base(name)+".tmp-*")
	if err != nil {
		return nil, err
	}
	return &Pending{f: f, target: name}, nil
}

func (p *Pending) Write(b []byte) (int, error) {
	if err := fault("write", p.target); err != nil {
		return 0, err
	}
	return p.f.Write(b)
}

// Same reports whether the target already holds exactly what was written.
func (p *Pending) Same() (bool, error) {
	fi, err := os.Stat(p.target)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	mine, err := p.f.Stat()
	if err != nil {
		return false, err
	}
	if fi.Size() != mine.Size() {
		return false, nil
	}
	old, err := osfile.Open(p.target)
	if err != nil {
		return false, err
	}
	defer old.Close()
	return SameReader(old, io.NewSectionReader(p.f, 0, mine.Size()))
}

// sameBufs are the buffers SameReader compares through, kept for the
// next comparison: a repair compares every round file with its fresh
// copy, and 128 KiB allocated for each (6 GB for the 50,000 round files of
// 100,000 tiny lines) kept the heap at the collector's goal.
var sameBufs = sync.Pool{New: func() any { return new([2][1 << 16]byte) }}

// SameReader reports whether a and b yield the same bytes.
func SameReader(a, b io.Reader) (bool, error) {
	bufs := sameBufs.Get().(*[2][1 << 16]byte)
	defer sameBufs.Put(bufs)
	ab, bb := bufs[0][:], bufs[1][:]
	for {
		n, errA := io.ReadFull(a, ab)
		m, errB := io.ReadFull(b, bb)
		if n != m || !bytes.Equal(ab[:n], bb[:m]) {
			return false, nil
		}
		endA := errA == io.EOF || errA == io.ErrUnexpectedEOF
		endB := errB == io.EOF || errB == io.ErrUnexpectedEOF
		if endA || endB {
			return endA && endB, nil
		}
		if errA != nil {
			return false, errA
		}
		if errB != nil {
			return false, errB
		}
	}
}

// ReadFrom copies r into the file. From another file (or a LimitedReader
// of one), the kernel copies the bytes without bringing them into memory.
func (p *Pending) ReadFrom(r io.Reader) (int64, error) {
	if err := fault("write", p.target); err != nil {
		return 0, err
	}
	return p.f.ReadFrom(r)
}

// After has the file's modification time follow t, if it does not: a
// reader that tells versions of a file apart by size and time sees a new
// version, even one written within a tick of a coarse clock after the
// last. Call it after the last write.
func (p *Pending) After(t time.Time) error {
	fi, err := p.f.Stat()
	if err != nil || fi.ModTime().After(t) {
		return err
	}
	next := t.Add(time.Microsecond)
	return os.Chtimes(p.f.Name(), next, next)
}

// Commit makes what was written the target's contents, atomically.
func (p *Pending) Commit(perm fs.FileMode) error {
	p.done = true
	p.perm = perm
	err := p.sync()
	if cerr := p.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(p.f.Name(), p.target)
	}
	if err != nil {
		os.Remove(p.f.Name())
		return err
	}
	return SyncDir(filepath.Dir(p.target))
}

// Close ends the writing of a file and releases its descriptor, setting
// its mode. The file stays pending until it (or its batch) commits. The
// descriptor of a file to uncache is kept until its batch commits, up to
// maxHeld a batch: dropping the pages through it spares opening the file
// again.
func (p *Pending) Close() error {
	if p.closed {
		return nil
	}
	p.closed = true
	err := p.f.Chmod(p.perm)
	if b := p.batch; err == nil && p.uncache && b != nil && b.held < maxHeld {
		p.held = true
		b.held++
		return nil
	}
	if cerr := p.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// maxHeld is how many descriptors a batch keeps for the files it drops
// from the page cache (Pending.Close).
const maxHeld = 64

// dropPages drops the file's pages from the page cache, through the
// descriptor Close kept if it did; the file is durable (clean).
func (p *Pending) dropPages() {
	if p.held {
		dropFilePages(p.f)
		p.release()
		return
	}
	dropPages(p.f.Name())
}

// release closes a descriptor Close kept.
func (p *Pending) release() {
	if p.held {
		p.held = false
		p.batch.held--
		p.f.Close()
	}
}

// sync makes the file's data durable, reopening it if it was closed.
func (p *Pending) sync() error {
	if !p.closed || p.held {
		return p.f.Sync()
	}
	return syncName(p.f.Name(), os.O_WRONLY)
}

// Abort discards what was written. It is safe after Commit (it does
// nothing then), so it can be deferred.
func (p *Pending) Abort() {
	if p.done {
		return
	}
	p.done = true
	if !p.closed {
		p.f.Close()
	}
	p.release()
	os.Remove(p.f.Name())
}

// CopyRange copies n bytes of f from offset off to w. Between files, the
// kernel copies them (copy_file_range) without bringing them into memory.
func CopyRange(w io.Writer, f *os.File, off, n int64) error {
	if n <= 0 {
		return nil
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return err
	}
	m, err := io.Copy(w, io.LimitReader(f, n))
	if err == nil && m < n {
		err = fmt.Errorf("%s: %w: %d bytes of %d from offset %d", f.Name(), io.ErrUnexpectedEOF, m, n, off)
	}
	return err
}
