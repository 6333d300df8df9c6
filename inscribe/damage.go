package inscribe

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// DamageError is a file of the store that is missing, or does not hold
// what scribe wrote in it: a round file deleted, cut short or overwritten,
// a read note lost. scribe repair SESSION rebuilds what can be rebuilt.
type DamageError struct {
	// Session is the session whose repair mends it (for a sidechain, its
	// parent's).
	Session string
	File    string
	Why     string
}

func (e *DamageError) Error() string { return fmt.Sprintf("%s: %s", e.File, e.Why) }

// SessionOf returns the session a document of the store belongs to: its
// own, or its parent's for a sidechain ("" for a path outside the store).
func (s *Store) SessionOf(md string) string {
	rel, err := filepath.Rel(s.SessionsDir(), md)
	if err != nil || strings.HasPrefix(rel, "..") {
		return ""
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	if len(parts) < 2 {
		return ""
	}
	return strings.TrimSuffix(parts[1], ".md")
}

// checkRounds checks the round files of the document an update is about to
// bring up to date against its note: their sizes, and their bytes too when
// it verifies (inscribe). A note from before the record of round files
// (rounds.tsv) gets one, made from the files once they are checked against
// the note; so does one whose record was damaged, with a warning.
func (u *update) checkRounds() error {
	st := u.old
	if st.RoundsSize != nil {
		err := checkSums(u.folder, u.spec.id, st, u.opts.Verify)
		if !errors.Is(err, errRecord) {
			return err
		}
		u.res.Warnings = append(u.res.Warnings, fmt.Errorf("%s: damaged: made again from the round files, checked against the read note", filepath.Join(u.folder, roundsFile)))
	}
	closed, open, err := sumExisting(u.folder, u.spec.id, st)
	if err != nil {
		return err
	}
	size, err := appendSums(filepath.Join(u.folder, roundsFile), 0, closed)
	if err != nil {
		return err
	}
	st.RoundsSize, st.OpenRound = &size, open
	if err := writeState(&u.batch, u.folder, st); err != nil {
		return err
	}
	return u.batch.Commit()
}

// CheckDoc checks, cheaply, that a document's round files are those its
// read note and their record describe: that each is there, with the size
// scribe wrote. It returns a *MissingNoteError when the note is lost, and
// a *DamageError for each file that is not right (joined). A note from
// before the record of round files has nothing to check against yet (the
// next update of the document makes one).
func (s *Store) CheckDoc(md string) error {
	folder := Folder(md)
	st, err := readState(folder)
	if err != nil {
		return err
	}
	st = resolveState(st, md)
	if st == nil {
		return &MissingNoteError{Doc: md, Note: filepath.Join(folder, stateFile)}
	}
	if st.RoundsSize == nil {
		return nil
	}
	err = checkSums(folder, s.SessionOf(md), st, false)
	if errors.Is(err, errRecord) {
		return &DamageError{Session: s.SessionOf(md), File: filepath.Join(folder, roundsFile), Why: "missing or damaged: it does not hold what the read note says"}
	}
	return err
}
