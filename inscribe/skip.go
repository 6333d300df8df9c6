package inscribe

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"

	"github.com/scribe-archive/scribe/session/source"
)

// Skipped is the outcome of a session file that holds no entry yet: Claude
// Code creates a session's file before it writes to it, and a writer may
// be stopped in the middle of its first line. No document is made (an
// empty one would have no round files to export); a later update inscribes
// the file once it holds an entry.
const Skipped Outcome = "skipped"

// skipNew reports whether the session file src should be skipped: no
// document holds it yet (exists is false), and the file holds no complete
// entry. The result says so, with a warning when the file's one line is
// torn.
func (s *Store) skipNew(src source.Session, exists bool) (Result, bool) {
	if src.Path == "" || exists {
		return Result{}, false
	}
	torn, empty := noEntry(src.Path)
	if !empty {
		return Result{}, false
	}
	r := Result{Source: src.Path, Outcome: Skipped}
	if torn {
		r.Warnings = append(r.Warnings, &source.LineError{File: src.Path, Line: 1, Torn: true, Msg: tornMsg})
	}
	return r, true
}

// noEntry reports whether the file at p holds no complete line: it is
// empty, or its only line is torn (unterminated and not JSON). A file that
// cannot be read is not empty: the update says why.
func noEntry(p string) (torn, empty bool) {
	f, err := os.Open(p)
	if err != nil {
		return false, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return false, false
	}
	if fi.Size() == 0 {
		return false, true
	}
	// The first line may be long (a pasted image): look for its end without
	// holding it, and read it whole only when the file has no other.
	r := bufio.NewReaderSize(f, 1<<16)
	for {
		_, err := r.ReadSlice('\n')
		if err == nil {
			return false, false
		}
		if err == io.EOF {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return false, false
		}
	}
	if fi.Size() > 64<<20 {
		return false, false // not read whole: the update reads it as it comes
	}
	data, err := os.ReadFile(p)
	if err != nil || json.Valid(data) {
		return false, false
	}
	return true, true
}
