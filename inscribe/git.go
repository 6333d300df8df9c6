package inscribe

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/scribe-archive/scribe/internal/atomicfile"
)

// A store is ready for git as it is made: its .gitignore leaves out what
// is the machine's own (.scribe/: the read notes, the locks, the derived
// databases; layout.go) and the temporary files of a write in progress,
// so that `git add -A` commits the record and nothing else. It is written
// once, when the store is first written to, and never again: a person may
// add to it.

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

// ensureGitFiles writes the store's .gitignore if it has none, once per
// Store value.
func (s *Store) ensureGitFiles() error {
	s.gitOnce.Do(func() {
		p := filepath.Join(s.Root, gitignoreFile)
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			return
		}
		if err := atomicfile.MkdirAll(s.Root, DirMode); err != nil {
			s.gitErr = err
			return
		}
		_, s.gitErr = atomicfile.WriteIfChanged(p, []byte(gitignore), FileMode)
	})
	return s.gitErr
}
