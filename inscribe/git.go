package inscribe

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/scribe-archive/scribe/internal/atomicfile"
)

// A store is ready for git as it is made: its .gitignore leaves out what
// is the machine's own (.scribe/: the read notes, the locks, the derived
// databases; layout.go) and the temporary files of a write in progress,
// so that `git add -A` commits the record and nothing else; its
// .gitattributes says how git merges the record:
//   - no file of the store is converted at checkout (-text): a round file
//     holds a source's bytes, and a document converted to CRLF by
//     core.autocrlf is not what scribe wrote;
//   - the catalogs (sessions/index.md, sessions/<agent>/index.md), which
//     two teammates who inscribe different sessions both rewrite, merge
//     as a union of their lines (git's built-in union driver, which needs
//     no configuration): each side's rows are kept, and the next scribe
//     that writes the catalog (any append after the merge: their
//     documents are newer than its stamps) writes it whole again.
// Every other file of the record has one writer: a document and its folder
// are written by the machine that has the session's source, a
// continuation by the machine it went on on (continuation.go), so a merge
// of two teammates' stores adds files and never has two sides change one.
// Both files are written once, when the store is first written to, and
// never again: a person may add to them.

// gitignoreFile is the store's .gitignore, in its root.
const gitignoreFile = ".gitignore"

// gitignore is what a new store's .gitignore holds.
const gitignore = `# Written by scribe for this store: what a clone must not carry.
# The machine's own state: read notes, locks, derived databases (rebuilt).
/` + localDir + `/
# Temporary files of a write in progress.
.*.tmp-*
# What stores written before scribe 0.3 kept beside the record (moved into
# ` + localDir + `/ as each document is next written).
.lock
*.db
*.db-wal
*.db-shm
*.db.damaged-*
.index-stamp.json
/sessions/**/state.json
/sessions/**/graph.tsv
`

// gitattributesFile is the store's .gitattributes, in its root.
const gitattributesFile = ".gitattributes"

// gitattributes is what a new store's .gitattributes holds.
const gitattributes = `# Written by scribe for this store: how git treats its files.
# Every file as it is: a round file holds a source's bytes.
* -text
# The catalogs merge as a union of both sides' rows; scribe's next write of
# a catalog (the next append after the merge) writes it whole again.
/sessions/` + catalogFile + ` merge=union
/sessions/*/` + catalogFile + ` merge=union
`

// ensureGitFiles writes the store's .gitignore and .gitattributes where it
// has none, once per Store value.
func (s *Store) ensureGitFiles() error {
	s.gitOnce.Do(func() { s.gitErr = writeGitFiles(s.Root) })
	return s.gitErr
}

// writeGitFiles writes the .gitignore and .gitattributes of the store at
// root where it has none: before the store's first file, so that no
// commit made after a write carries the machine's own state.
func writeGitFiles(root string) error {
	for _, f := range []struct{ name, text string }{{gitignoreFile, gitignore}, {gitattributesFile, gitattributes}} {
		p := filepath.Join(root, f.name)
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err := atomicfile.MkdirAll(root, DirMode); err != nil {
			return err
		}
		if _, err := atomicfile.WriteIfChanged(p, []byte(f.text), FileMode); err != nil {
			if _, lerr := os.Lstat(p); lerr == nil && errors.Is(err, fs.ErrNotExist) {
				// Another run of a new store put it in place first (and
				// may have removed this one's temporary file as its
				// leftover: removeRootTemps).
				continue
			}
			return err
		}
	}
	return nil
}

// MergeConflictError is a file of the store that a git merge left with
// conflict markers in it (<<<<<<<, =======, >>>>>>>): both sides changed
// it, and a person must choose.
type MergeConflictError struct {
	File string
	Line int // of the first marker
}

func (e *MergeConflictError) Error() string {
	return fmt.Sprintf("%s:%d: a git merge left conflict markers in it (<<<<<<<, =======, >>>>>>>): keep one side's lines, or both, remove the markers, and commit it", e.File, e.Line)
}

// conflictLine returns the line of the first git conflict marker in data,
// 0 when there is none.
func conflictLine(data []byte) int {
	for i, line := range bytes.Split(data, []byte("\n")) {
		if bytes.HasPrefix(line, []byte("<<<<<<< ")) || bytes.Equal(line, []byte("<<<<<<<")) {
			return i + 1
		}
	}
	return 0
}
