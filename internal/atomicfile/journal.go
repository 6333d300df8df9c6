package atomicfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/scribe-archive/scribe/internal/osfile"
)

// A batch's renames are not one act: a kill between two of them leaves
// some targets new and others old, which a group of files that describe
// one another (round files and the sums of them) must never show. A batch
// given a journal (Batch.Journal) is all or nothing: once every file is
// durable, and before the first rename, Commit writes the list of its
// renames to the journal; the renames done, it removes it. Whoever next
// holds the lock the batch was written under calls Recover first, which
// completes the renames a kill left in the journal. Until then the
// temporary files are not leftovers: a writer removes temporary files
// only after Recover.

// Journal has Commit keep the list of its renames in the file name while
// it renames, so that Recover completes a commit a kill cut short. name's
// folder must be on the file system of the batch's files.
func (b *Batch) Journal(name string) { b.journal = name }

// journalEntry is one rename: the temporary file and its target, relative
// to the journal's folder.
type journalEntry struct {
	Temp   string `json:"temp"`
	Target string `json:"target"`
}

// writeJournal writes the renames of files to the journal, durably.
func (b *Batch) writeJournal(files []*Pending) error {
	dir := filepath.Dir(b.journal)
	var list []journalEntry
	for _, p := range files {
		tmp, err := filepath.Rel(dir, p.f.Name())
		if err != nil {
			return err
		}
		target, err := filepath.Rel(dir, p.target)
		if err != nil {
			return err
		}
		list = append(list, journalEntry{tmp, target})
	}
	data, err := json.Marshal(list)
	if err != nil {
		return err
	}
	return Write(b.journal, 0o600, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// endJournal removes the journal of a commit whose renames are durable.
func (b *Batch) endJournal() error {
	if err := os.Remove(b.journal); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return SyncDir(filepath.Dir(b.journal))
}

// Recover completes the commit whose journal is name, if a kill left one:
// each temporary file still there is renamed over its target, in the
// batch's order (one already renamed is gone), and the journal removed.
// It reports whether there was a commit to complete. The caller holds the
// lock the batch was written under.
func Recover(name string) (bool, error) {
	data, err := osfile.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var list []journalEntry
	if err := json.Unmarshal(data, &list); err != nil {
		// Journals are written whole (Write): this is not one of ours.
		return false, fmt.Errorf("%s: not a journal of scribe (%v): remove it", name, err)
	}
	dir := filepath.Dir(name)
	dirs := map[string]bool{}
	for _, e := range list {
		tmp, target := filepath.Join(dir, e.Temp), filepath.Join(dir, e.Target)
		if err := os.Rename(tmp, target); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue // renamed before the kill
			}
			return false, err
		}
		dirs[filepath.Dir(target)] = true
	}
	for d := range dirs {
		if err := SyncDir(d); err != nil {
			return false, err
		}
	}
	b := Batch{journal: name}
	return true, b.endJournal()
}
