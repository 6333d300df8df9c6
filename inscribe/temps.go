package inscribe

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/scribe-archive/scribe/internal/osfile"
)

// Temporary files. Every file scribe writes goes first to a temporary file
// (.<name>.tmp-*), or, a first inscription's round files, to a temporary
// folder (.rounds.tmp-*/, freshRounds), which a kill leaves behind (an
// update's scratch files, scratchFiles, have a name only for a moment). Those of a document (its
// own, its round files, files, copies, indexes, read note) all lie in its
// folder, and are written only under its lock: so the next writer of the
// document, holding the lock, knows that every temporary file there is a
// leftover and removes it. The document's own and its round files' are
// written in the folder itself, not beside their targets, so that finding
// them costs one listing of a small folder, not one of the rounds folder,
// which grows with the session (that one is listed by inscribe and repair,
// for the leftovers of earlier versions). The catalog's (in sessions/ and
// each agent's folder) are removed by the next refresh of the catalog
// (RemoveStaleTemps).

// tempAge is how old a temporary file must be for a writer that does not
// hold its owner's lock to take it for a leftover.
var tempAge = time.Minute

// IsTemp reports whether a file name is that of a temporary file of scribe.
func isTemp(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp-")
}

// removeTemps removes the leftover temporary files of the document whose
// folder is given: the caller holds its lock. The folders of its sidechains
// (agent-<id>/) have locks of their own, and are left alone; so are their
// documents' temporary files an earlier scribe wrote beside them, in this
// folder, unless they are old.
func removeTemps(folder string, rounds bool) {
	// The machine's own files of the document (its note, graph and index)
	// are written under its lock too; its sidechains' lie in folders
	// below, with locks of their own.
	if local := localOf(folder); local != folder {
		if ents, err := osfile.ReadDir(local); err == nil {
			for _, e := range ents {
				if !e.IsDir() && isTemp(e.Name()) {
					os.Remove(filepath.Join(local, e.Name()))
				}
			}
		}
	}
	ents, err := osfile.ReadDir(folder)
	if err != nil {
		return
	}
	// The document's own, which a sidechain's (agent-<id>.md) shares its
	// prefix with those an earlier scribe wrote beside the folder's.
	own := "." + filepath.Base(folder) + ".md.tmp-"
	for _, e := range ents {
		name := e.Name()
		switch {
		case !e.IsDir() && strings.HasPrefix(name, own):
			os.Remove(filepath.Join(folder, name))
		case e.IsDir() && (name == "rounds" && rounds || name == filesDir):
			removeTempsIn(filepath.Join(folder, name), 0)
		case e.IsDir() && name == sourceFilesDir:
			filepath.WalkDir(filepath.Join(folder, name), func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() && isTemp(d.Name()) {
					os.Remove(p)
				}
				return nil
			})
		case !isTemp(name):
		case strings.HasPrefix(name, ".agent-"):
			removeOld(filepath.Join(folder, name), e, tempAge)
		case e.IsDir():
			os.RemoveAll(filepath.Join(folder, name))
		default:
			os.Remove(filepath.Join(folder, name))
		}
	}
}

// removeTempsIn removes the temporary files in dir that are at least age
// old (every one, for 0). The folder is read a few hundred entries at a
// time (a rounds folder holds one per round, few of them temporary), and
// what is to go goes once it is read through.
func removeTempsIn(dir string, age time.Duration) {
	var temps []fs.DirEntry
	osfile.EachEntry(dir, func(e fs.DirEntry) {
		if isTemp(e.Name()) {
			temps = append(temps, e)
		}
	})
	for _, e := range temps {
		removeOld(filepath.Join(dir, e.Name()), e, age)
	}
}

// removeOld removes a file (or a folder) that is at least age old.
func removeOld(p string, e fs.DirEntry, age time.Duration) {
	if age > 0 {
		fi, err := e.Info()
		if err != nil || time.Since(fi.ModTime()) < age {
			return
		}
	}
	if e.IsDir() {
		os.RemoveAll(p)
		return
	}
	os.Remove(p)
}

// RemoveStaleTemps removes the leftover temporary files of the catalog,
// in the sessions folder and the folders of the agents named: the caller
// holds the catalog's lock, so the catalog's own (index.md, the stamps,
// the kept rows) are leftovers whatever their age, and so is a new
// store index's once the index is there; others there (a document an
// earlier scribe was writing beside its folder, a new index not yet in
// place) are once they are a minute old.
func (s *Store) RemoveStaleTemps(agents ...string) {
	s.removeRootTemps()
	dirs := []string{s.SessionsDir(), s.localRoot()}
	for _, a := range agents {
		dirs = append(dirs, filepath.Join(s.SessionsDir(), a))
	}
	for _, dir := range dirs {
		ents, err := osfile.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			name := e.Name()
			if !isTemp(name) {
				continue
			}
			age := tempAge
			if strings.HasPrefix(name, "."+catalogFile+".tmp-") || strings.HasPrefix(name, "."+stampFile+".tmp-") || strings.HasPrefix(name, "."+catalogRowsPrefix) || strings.HasPrefix(name, "."+legacyStamp+".tmp-") {
				age = 0
			}
			if dir == s.localRoot() && tempTarget(name) == storeDB {
				age = onceAge(dir, storeDB) // linked into place: index's createFromTemplate
			}
			removeOld(filepath.Join(dir, name), e, age)
		}
	}
}

// redactFile is the store's redaction settings (inscribe/redact.File),
// written in its root.
const redactFile = "redact.toml"

// tempTarget returns the name of the file a temporary file
// (.<target>.tmp-*) would become.
func tempTarget(name string) string {
	target, _, _ := strings.Cut(strings.TrimPrefix(name, "."), ".tmp-")
	return target
}

// onceAge is how old a temporary file of target, a file written only
// while it is absent (a new store's .gitignore and .gitattributes, a new
// store index), must be to be a leftover. Nothing holds a lock of them:
// one is a leftover once target is there (its writer, or another, put it
// in place: a writer still between its temporary file and putting it in
// place, two first runs of one new store at once, then finds it there and
// goes on), or once it is tempAge old.
func onceAge(dir, target string) time.Duration {
	if _, err := os.Lstat(filepath.Join(dir, target)); err == nil {
		return 0
	}
	return tempAge
}

// removeRootTemps removes the leftover temporary files in the store's
// root, as onceAge says: those of .gitignore and .gitattributes, which a
// kill while a new store's first run wrote them leaves (writeGitFiles),
// and of redact.toml, which a first run writes too (a change of its
// settings then rewrites it, whose temporary file, while redact.toml is
// there, is taken for a leftover: a settings change between writing it
// and putting it in place, racing a catalog's refresh, fails and says so).
func (s *Store) removeRootTemps() {
	ents, err := osfile.ReadDir(s.Root)
	if err != nil {
		return
	}
	for _, e := range ents {
		name := e.Name()
		if !isTemp(name) || e.IsDir() {
			continue
		}
		target := tempTarget(name)
		if target != gitignoreFile && target != gitattributesFile && target != redactFile {
			continue
		}
		removeOld(filepath.Join(s.Root, name), e, onceAge(s.Root, target))
	}
}
