package inscribe

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/scribe-archive/scribe/session/source"
)

// This file owns every path name of a store's layout (docs/FORMAT.md §2).
// The record, which a clone of the store carries:
//
//	.gitignore, .gitattributes                 what git leaves out and how it merges (git.go)
//	roles.yaml                                 the roles registry (optional)
//	redact.toml                                whether secrets are replaced, and the markers' key
//	sessions/index.md                          agents, session counts, date ranges
//	sessions/<agent_id>/index.md               that agent's sessions
//	sessions/<agent_id>/<session_id>.md        the document
//	sessions/<agent_id>/<session_id>/          the document's folder:
//	    rounds/NNN.json                        round files (the backing record)
//	    rounds.tsv                             the size and sum of each closed round file (manifest.go, sums.go)
//	    files/<hash>.<ext>                     images and documents the session showed (hash: 16 hex digits of the SHA-256)
//	    agent-<id>.md, agent-<id>/             sidechain documents and their folders (meta.json: the client's note on the subagent)
//	    source-files/...                       files the client kept beside the session, byte for byte
//	    index.md, tags.tsv                     the table of rounds, engagement tags
//	    .repair.tmp-*/                         a repair's scratch inscription (repair.go)
//	    .rounds.tmp-*/                         a first inscription's rounds/, until it is put in place (docwrite.go)
//
// The machine's own state, in .scribe/ beside sessions/, which the store's
// .gitignore leaves out and a clone rebuilds (note.go):
//
//	.scribe/sessions.db                        the store's index (derived)
//	.scribe/catalog-stamps.json                when each catalog was last written
//	.scribe/.catalog-rows-<agent_id>.tsv       each catalog's rows, as last written (derived)
//	.scribe/catalogs.lock                      held while the catalogs are written
//	.scribe/redacting                          the store replaced secrets: its redact.toml must not be lost
//	.scribe/docs/<agent_id>/<session_id>/      per document (a sidechain's one folder deeper, agent-<id>/):
//	    state.json, graph.tsv                  the read note: where the source is and how far it was read
//	    .lock                                  held while the document is updated
//	    journal.json                           a multi-file rewrite's renames, while it makes them (forget)
//	    session.db                             the document's index (derived)
//
// The store writes the documents, round files, files and read notes; the
// derived views (package inscribe/views) decide what the indexes, tables,
// catalogs and tags hold, and the store writes them where this file says.

const (
	// localDir is the folder of the machine's own state, in the store's
	// root.
	localDir = ".scribe"
	// RolesFile is the roles registry, in the store root.
	rolesFile = "roles.yaml"
	// SourceFilesDir is the folder, in a document's folder, that keeps the
	// files the source client kept beside the session, byte for byte.
	sourceFilesDir = "source-files"
	// SidechainMetaFile is the file, in a sidechain document's folder, that
	// keeps what the source client wrote about the subagent, byte for byte.
	sidechainMetaFile = "meta.json"

	filesDir   = "files"
	stateFile  = "state.json"
	graphFile  = "graph.tsv"
	roundsFile = "rounds.tsv"
	lockFile   = ".lock"
	// checkedFile holds, in the document's local folder, when its round
	// files were last all checked, while appends since checked only what
	// they extended (manifest.go).
	checkedFile = ".rounds-checked"
	// journalFile lists the renames of a rewrite of several files of a
	// document while it makes them (atomicfile.Batch.Journal).
	journalFile = "journal.json"

	// The derived views' files: one database per document in its folder,
	// one for the whole store, a table of rounds per document in its folder,
	// the engagement tags a person set (kept durably in the document's
	// folder because the databases are derived and may be rebuilt), and
	// the catalogs' stamps.
	sessionDB   = "session.db"
	storeDB     = "sessions.db"
	roundsIndex = "index.md"
	tagsFile    = "tags.tsv"
	catalogFile = "index.md"
	stampFile   = "catalog-stamps.json"
	// redactingFile notes that the store replaced secrets with markers, so
	// that a store that lost its redact.toml is not written in the clear.
	redactingFile = "redacting"
	// catalogRowsPrefix names each agent's catalog rows, in .scribe/
	// (a dot file: bookkeeping, as the stamps are).
	catalogRowsPrefix = ".catalog-rows-"
	catalogLock       = "catalogs.lock"
	// legacyStamp is where stores before 0.3 kept the catalogs' stamps
	// (in sessions/).
	legacyStamp = ".index-stamp.json"
)

// FileMode and DirMode are the permissions of the files and folders the
// store creates: its owner's alone, as Claude Code keeps its transcripts
// (0600 files in 0700 folders). A store shared through git is unaffected:
// git records only the executable bit.
const (
	FileMode fs.FileMode = 0o600
	DirMode  fs.FileMode = 0o700
)

// sidechainGlob matches the documents of the sidechains in a session's
// folder, and sidechainBase(id) is the base name of one (its document is
// sidechainDoc(id), its folder sidechainBase(id)).
const sidechainGlob = "agent-*.md"

func sidechainBase(id string) string { return "agent-" + id }
func sidechainDoc(id string) string  { return sidechainBase(id) + ".md" }

// builderConfig is the configuration of a builder of the document whose
// base name is base (the session id, or sidechainBase(id)), reading file:
// where it puts the files the document shows and links its sidechains.
func builderConfig(file, base string) source.Config {
	side := isSidechainBase(base)
	cfg := source.Config{File: file, Sidechain: side,
		FilePath: func(name string) string { return base + "/" + filesDir + "/" + name }}
	cfg.SidechainPath = func(id string) string {
		if side {
			// Every sidechain document of a session sits in the
			// session's folder, beside the sidechains that spawn
			// subagents of their own.
			return sidechainDoc(id)
		}
		return base + "/" + sidechainDoc(id)
	}
	return cfg
}

// isSidechainBase reports whether a document's base name is a sidechain's.
func isSidechainBase(base string) bool { return strings.HasPrefix(base, "agent-") }

// localOf returns where the machine's own state of the document whose
// folder is given lies: .scribe/docs/ and the folder's path below the
// sessions folder, <root>/sessions/<agent>/<id>[/agent-<x>]. A document
// outside a store keeps it in its own folder, as stores before 0.3 did.
func localOf(folder string) string {
	dir, rel := folder, []string{}
	for i := 0; i < 3; i++ {
		rel = append([]string{filepath.Base(dir)}, rel...)
		dir = filepath.Dir(dir)
		if i > 0 && filepath.Base(dir) == "sessions" {
			return filepath.Join(append([]string{filepath.Dir(dir), localDir, "docs"}, rel...)...)
		}
	}
	return folder
}

// localFile returns the path of the machine's own file name of the
// document whose folder is given. A store written before 0.3 kept it in
// the document's folder: it is moved where it belongs now, the first time
// it is asked for.
func localFile(folder, name string) string {
	local := localOf(folder)
	p := filepath.Join(local, name)
	if local == folder {
		return p
	}
	if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
		legacy := filepath.Join(folder, name)
		if _, err := os.Lstat(legacy); err == nil {
			if os.MkdirAll(local, DirMode) == nil {
				os.Rename(legacy, p)
			}
		}
	}
	return p
}

// statePath, graphPath and lockPath are the document's read note, its
// graph and its lock.
func statePath(folder string) string { return localFile(folder, stateFile) }
func graphPath(folder string) string { return localFile(folder, graphFile) }
func lockPath(folder string) string  { return filepath.Join(localOf(folder), lockFile) }

// checkedPath is where the time the document's round files were last all
// checked is kept, while appends checked only what they extended.
func checkedPath(folder string) string { return filepath.Join(localOf(folder), checkedFile) }

// journalPath is the journal of a rewrite of the document's files under
// its lock.
func journalPath(folder string) string { return filepath.Join(localOf(folder), journalFile) }

// localRoot is the folder of the machine's own state of the store.
func (s *Store) localRoot() string { return filepath.Join(s.Root, localDir) }

// SessionsDir is where the documents live.
func (s *Store) SessionsDir() string { return filepath.Join(s.Root, "sessions") }

// DocPath returns the path of a session's document.
func (s *Store) docPath(agent, id string) string {
	return filepath.Join(s.SessionsDir(), agent, id+".md")
}

// Folder returns the folder that belongs to a document.
func folderOf(docPath string) string { return strings.TrimSuffix(docPath, ".md") }

// RoundsDir returns the folder of a document's round files.
func roundsDir(folder string) string { return filepath.Join(folder, "rounds") }

// RoundPath returns the path of round n's file in a document's folder.
func roundPath(folder string, n int) string { return filepath.Join(roundsDir(folder), roundName(n)) }

// RoundName is the file name of round n: 001.json.
func roundName(n int) string {
	if n >= 0 && n < 1000 {
		return string([]byte{byte('0' + n/100), byte('0' + n/10%10), byte('0' + n%10), '.', 'j', 's', 'o', 'n'})
	}
	return fmt.Sprintf("%03d.json", n)
}
