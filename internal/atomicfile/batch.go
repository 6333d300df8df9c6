package atomicfile

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/scribe-archive/scribe/internal/osfile"
)

// Batch writes a group of files that belong together (a document, its
// round files, its read note) with one flush to disk instead of one per
// file. Each file is written beside its target; Commit makes all the data
// durable at once, then renames the files into place in the order they were
// added, then syncs their directories. A kill at any moment leaves every
// target with its old contents or its new ones; files renamed earlier in the
// order are never older than files renamed later.
//
// The last file's change time (ctime) is later than that of every folder
// the others went into, where the file system keeps fine-grained times
// (Linux since 6.13): a reader that finds such a folder's change time
// still earlier than the last file's knows that nothing was added to it or
// removed from it since the batch. (Elsewhere the times may be equal, which
// says nothing.)
//
// A batch may hold thousands of files (a long session's rounds): Close a
// file once it is written, so that the batch does not hold a descriptor
// for each.
//
// A directory that does not exist yet may be written whole (NewDir): its
// files at their final names in a temporary directory, which Commit puts
// in place with one rename, before any of the batch's files.
type Batch struct {
	files []*Pending
	dirs  []*NewDir // new directories, renamed into place first
	first []string  // files written in place, flushed with the batch (SyncFirst)
	// made are the parents of the directories the batch created
	// (MkdirAll), synced when it commits.
	made []string
	held int // descriptors its files keep (Pending.Close)
	// journal, if set, lists the renames while Commit makes them
	// (journal.go).
	journal string
}

// MkdirAll creates a directory and its missing parents, as the package's
// MkdirAll does, but leaves the parents' flush to Commit: the new entries
// become durable with the files the batch puts in them, one flush of each
// folder instead of one more per directory created. Until the batch
// commits, a crash may lose a new directory, which then held nothing
// committed.
func (b *Batch) MkdirAll(dir string, perm fs.FileMode) error {
	return mkdirAll(dir, perm, func(parent string) error {
		if !slices.Contains(b.made, parent) {
			b.made = append(b.made, parent)
		}
		return nil
	})
}

// SyncFirst adds a file written in place (appended to, say) whose data must
// be on disk before any of the batch's files is put in place: Commit
// flushes it with them, where it would otherwise take an fsync of its own.
func (b *Batch) SyncFirst(name string) {
	for _, f := range b.first {
		if f == name {
			return
		}
	}
	b.first = append(b.first, name)
}

// Create starts a file of the batch.
func (b *Batch) Create(name string, perm fs.FileMode) (*Pending, error) {
	return b.CreateIn(filepath.Dir(name), name, perm)
}

// CreateIn starts a file of the batch, written in dir (see CreateIn).
func (b *Batch) CreateIn(dir, name string, perm fs.FileMode) (*Pending, error) {
	p, err := CreateIn(dir, name)
	if err != nil {
		return nil, err
	}
	p.perm, p.batch = perm, b
	b.files = append(b.files, p)
	return p, nil
}

// WriteIfChanged adds a file to the batch unless name will hold data
// anyway: it holds it now and the batch does not replace it already. It
// reports whether the file will be written.
func (b *Batch) WriteIfChanged(name string, data []byte, perm fs.FileMode) (bool, error) {
	return b.WriteIfChangedIn(filepath.Dir(name), name, data, perm)
}

// WriteIfChangedIn is WriteIfChanged with the new version written in dir
// (see CreateIn).
func (b *Batch) WriteIfChangedIn(dir, name string, data []byte, perm fs.FileMode) (bool, error) {
	if !b.replaces(name) {
		if same, err := Equal(name, data); err != nil || same {
			return false, err
		}
	}
	p, err := b.CreateIn(dir, name, perm)
	if err != nil {
		return false, err
	}
	if _, err := p.Write(data); err != nil {
		return true, err
	}
	return true, p.Close()
}

// replaces reports whether the batch already holds a new version of name.
func (b *Batch) replaces(name string) bool {
	for _, p := range b.files {
		if p.target == name {
			return true
		}
	}
	return false
}

// Drop removes a file from the batch, discarding what was written.
func (b *Batch) Drop(p *Pending) {
	for i, q := range b.files {
		if q == p {
			b.files = append(b.files[:i], b.files[i+1:]...)
			break
		}
	}
	p.Abort()
}

// MoveLast moves the file for target to the end of the batch's order.
func (b *Batch) MoveLast(target string) {
	for i, p := range b.files {
		if p.target == target {
			b.files = append(append(b.files[:i:i], b.files[i+1:]...), p)
			return
		}
	}
}

// Len is the number of files in the batch.
func (b *Batch) Len() int { return len(b.files) }

// A NewDir is a directory of a batch that did not exist: it is written
// under a temporary name beside its target, its files at their final
// names there, and put in place whole when the batch commits.
type NewDir struct {
	tmp, target string
	batch       *Batch
	done        bool
}

// NewDir starts target, a directory that does not exist, as a directory of
// the batch: it is made in dir (on target's file system) as
// .<name>.tmp-*, so that a writer that owns dir knows a leftover there is
// its own (see CreateIn), and filled through NewDir.Create. Commit makes
// its files durable with the batch's, then renames it into place before
// any of the batch's files. A kill before leaves the temporary directory
// alone and nothing at target: its files need no temporary names, no
// renames one by one, and no look at a target that cannot exist. A
// journaled batch (forget's) holds no new directory.
func (b *Batch) NewDir(dir, target string, perm fs.FileMode) (*NewDir, error) {
	if err := fault("open", target); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(dir, "."+filepath.Base(target)+".tmp-")
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(tmp, perm); err != nil {
		os.Remove(tmp)
		return nil, err
	}
	d := &NewDir{tmp: tmp, target: target, batch: b}
	b.dirs = append(b.dirs, d)
	return d, nil
}

// InPlace reports whether the directory was put in place (its batch
// committed).
func (d *NewDir) InPlace() bool { return d.done }

// Create starts a file of the directory, at its final name in it.
func (d *NewDir) Create(name string, perm fs.FileMode) (*Pending, error) {
	target := filepath.Join(d.target, name)
	if err := fault("open", target); err != nil {
		return nil, err
	}
	f, err := osfile.OpenFile(filepath.Join(d.tmp, name), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	p := &Pending{f: f, target: target, perm: perm, batch: d.batch, in: d}
	d.batch.files = append(d.batch.files, p)
	return p, nil
}

// putDirs puts the batch's new directories in place, their files durable
// already: each file is closed (and dropped from the page cache, if asked)
// while its name still holds, then each directory is renamed. It returns
// the directories renamed into place.
func (b *Batch) putDirs() ([]string, error) {
	var put []string
	for _, d := range b.dirs {
		for _, p := range b.files {
			if p.in != d {
				continue
			}
			if err := p.Close(); err != nil {
				return put, err
			}
			p.done = true
			if p.uncache {
				p.dropPages()
			}
			p.release()
		}
		if err := fault("rename", d.target); err != nil {
			return put, err
		}
		if err := os.Rename(d.tmp, d.target); err != nil {
			return put, err
		}
		d.done = true
		put = append(put, d.target)
	}
	return put, nil
}

// Commit makes the batch's files durable and puts them in place, dropping
// from the page cache those asked to (Pending.Uncache).
func (b *Batch) Commit() error {
	defer b.Abort()
	if err := syncAll(b.files, b.first, b.dirs); err != nil {
		return err
	}
	put, err := b.putDirs()
	if err != nil {
		return err
	}
	journal := b.journal != "" && len(b.files) > 1
	if journal {
		for _, p := range b.files {
			if err := p.Close(); err != nil {
				return err
			}
		}
		if err := b.writeJournal(b.files); err != nil {
			return err
		}
		// From here the temporary files are the journal's: a rename that
		// fails leaves them, and the journal, to Recover.
		for _, p := range b.files {
			p.done = true
		}
	}
	dirs := map[string]bool{}
	var order []string
	for _, d := range put {
		if p := filepath.Dir(d); !dirs[p] {
			dirs[p] = true
			order = append(order, p)
		}
	}
	for i, p := range b.files {
		if p.in != nil {
			continue // in a new directory, in place already
		}
		if err := p.Close(); err != nil {
			return err
		}
		p.done = true
		if p.uncache {
			p.dropPages() // durable since syncAll
		}
		if i > 0 && i == len(b.files)-1 {
			queryTimes(append(order[:len(order):len(order)], put...), p)
		}
		if err := os.Rename(p.f.Name(), p.target); err != nil {
			if !journal {
				os.Remove(p.f.Name())
			}
			return err
		}
		if d := filepath.Dir(p.target); !dirs[d] {
			dirs[d] = true
			order = append(order, d)
		}
	}
	for _, d := range b.made {
		if !dirs[d] {
			dirs[d] = true
			order = append(order, d)
		}
	}
	for _, d := range order {
		if err := SyncDir(d); err != nil {
			return err
		}
	}
	b.files, b.dirs = nil, nil
	if journal {
		return b.endJournal()
	}
	return nil
}

// queryTimes reads the change times of the folders dirs, then touches the
// file last (a chmod to its mode) and reads its change time, before last
// is renamed. A file system with fine-grained times (multigrain
// timestamps) stamps the next change of a file whose time was read, in
// the clock tick it was read in, with a time later than every time it gave
// before: last's rename is stamped after the folders' changes, and any
// change of a folder after it no earlier. Without this, all would share
// one clock tick.
func queryTimes(dirs []string, last *Pending) {
	for _, d := range dirs {
		os.Stat(d)
	}
	name := last.f.Name()
	os.Chmod(name, last.perm)
	os.Stat(name)
}

// Abort discards every file not yet committed, and the new directories
// not put in place.
func (b *Batch) Abort() {
	for _, p := range b.files {
		p.Abort()
	}
	for _, d := range b.dirs {
		if !d.done {
			os.RemoveAll(d.tmp)
		}
	}
	b.files, b.first, b.made, b.dirs = nil, nil, nil, nil
}

// syncAll makes the data of files and of the files named first durable,
// with the entries of the new directories dirs: with one syncfs(2) of
// their file system where the platform has it, else with an fsync of each.
func syncAll(files []*Pending, first []string, dirs []*NewDir) error {
	if len(files)+len(first) > 1 || len(dirs) > 0 {
		dir := ""
		switch {
		case len(dirs) > 0:
			dir = dirs[0].tmp
		case len(files) > 0:
			dir = filepath.Dir(files[0].f.Name()) // a new directory's target is not there yet
		default:
			dir = filepath.Dir(first[0])
		}
		if d, err := osfile.Open(dir); err == nil {
			ok, err := syncfs(d)
			d.Close()
			if ok {
				return err
			}
		}
	}
	for _, name := range first {
		if err := syncName(name, os.O_WRONLY); err != nil {
			return err
		}
	}
	for _, p := range files {
		if err := p.sync(); err != nil {
			return err
		}
	}
	for _, d := range dirs {
		if err := SyncDir(d.tmp); err != nil {
			return err
		}
	}
	return nil
}

var _ io.Writer = (*Pending)(nil)
