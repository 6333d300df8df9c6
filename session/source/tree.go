package source

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// SkipError is a file or folder that discovery left out, and why; the rest
// of the tree is discovered without it. An adapter's Discover returns the
// sessions it found with these joined in its error (errors.Join); [Skips]
// takes them apart, and the caller reports them as warnings.
type SkipError struct {
	Path string
	Why  string // what is wrong with it
	Hint string // what to do about it ("" when nothing is to be done)
}

func (e *SkipError) Error() string {
	s := e.Path + ": " + e.Why + ": skipped"
	if e.Hint != "" {
		s += "; " + e.Hint
	}
	return s
}

// Skips splits an error of Discover into the files and folders it skipped
// and the error that remains (nil when there is none).
func Skips(err error) (skips []*SkipError, rest error) {
	var others []error
	var walk func(error)
	walk = func(err error) {
		var se *SkipError
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		if errors.As(err, &se) {
			skips = append(skips, se)
			return
		}
		others = append(others, err)
	}
	if err != nil {
		walk(err)
	}
	return skips, errors.Join(others...)
}

// Tree reads a folder of sessions for an adapter's Detect and Discover, with
// one policy for every format:
//
//   - A symbolic link is followed when it leads to a file or folder inside
//     the tree (the folder the person named, its own links resolved). A
//     folder is walked once, however many links lead to it, so a loop of
//     links ends.
//   - A link that leads out of the tree, or nowhere, is not followed: the
//     tree holds copies of sessions, not pointers to other files (a link to
//     /etc/passwd named like a session is not a session). It is skipped,
//     with a [SkipError] naming it.
//   - A folder that cannot be read is skipped with a [SkipError]; the rest
//     of the tree is read.
//
// Use one Tree per Discover; it is not safe for concurrent use.
type Tree struct {
	root    string // the tree's real path
	visited map[string]bool
	skipped []error
	seen    map[string]bool // paths already reported
	// reals holds the real path of each folder the tree listed or was
	// given: a folder's entry that is no link is its real path joined with
	// the entry's name, which spares resolving each component of a path
	// again for every folder below it (a stat each).
	reals map[string]string
}

// NewTree starts reading the tree at root, a folder.
func NewTree(root string) (*Tree, error) {
	real, err := realPath(root)
	if err != nil {
		return nil, err
	}
	return &Tree{root: real, visited: map[string]bool{}, seen: map[string]bool{}, reals: map[string]string{root: real}}, nil
}

// Entry is one entry of a folder of the tree, a link resolved to what it
// leads to.
type Entry struct {
	Path string // the folder's path joined with Name (a link's own path)
	Name string
	Dir  bool // a folder (or a link to one)
	// Regular is set for a regular file (or a link to one).
	Regular bool
}

// ReadDir lists a folder of the tree in name order, resolving links as
// the policy says. A folder that cannot be read lists nothing, and is
// skipped with a SkipError.
func (t *Tree) ReadDir(dir string) []Entry {
	// What is skipped is reported once, under the first path it was met
	// by, however many links lead to its folder.
	real := t.realOf(dir)
	ents, err := readDir(dir)
	if err != nil {
		t.skip(real, &SkipError{Path: dir, Why: "this folder cannot be read (" + reason(err) + ")",
			Hint: "give the user running scribe read access to it (chmod u+rx), then run scribe again"})
		return nil
	}
	out := make([]Entry, 0, len(ents))
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		ent := Entry{Path: p, Name: e.Name(), Dir: e.IsDir(), Regular: e.Type().IsRegular()}
		if e.Type()&fs.ModeSymlink != 0 {
			target, fi, ok := t.follow(p, filepath.Join(real, e.Name()))
			if !ok {
				continue
			}
			ent.Dir, ent.Regular = fi.IsDir(), fi.Mode().IsRegular()
			if ent.Dir {
				t.reals[p] = target
			}
		} else if ent.Dir {
			t.reals[p] = filepath.Join(real, e.Name())
		}
		out = append(out, ent)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// follow resolves the link at p (key is its path in its folder's real
// path): its real path and what it leads to, when the policy lets it be
// followed.
func (t *Tree) follow(p, key string) (string, fs.FileInfo, bool) {
	target, err := realPath(p)
	if err != nil {
		dest, _ := os.Readlink(p)
		t.skip(key, &SkipError{Path: p, Why: fmt.Sprintf("a symbolic link to %s, which does not exist", dest)})
		return "", nil, false
	}
	if !t.inside(target) {
		t.skip(key, &SkipError{Path: p, Why: fmt.Sprintf("a symbolic link to %s, outside %s: links are followed only inside the folder scribe reads", target, t.root),
			Hint: "name " + target + " itself to read it"})
		return "", nil, false
	}
	fi, err := os.Stat(target)
	if err != nil {
		t.skip(key, &SkipError{Path: p, Why: "a symbolic link that cannot be followed (" + reason(err) + ")"})
		return "", nil, false
	}
	return target, fi, true
}

// Visit reports whether dir is a folder not walked yet, and marks it
// walked: a folder reached again (through a link, or a loop of links) is
// not walked twice.
func (t *Tree) Visit(dir string) bool {
	real := t.realOf(dir)
	if t.visited[real] {
		return false
	}
	t.visited[real] = true
	return true
}

// realOf is the real path of the folder dir (dir itself if it cannot be
// resolved), from what the tree listed when it can.
func (t *Tree) realOf(dir string) string {
	if real, ok := t.reals[dir]; ok {
		return real
	}
	real, err := realPath(dir)
	if err != nil {
		return dir
	}
	t.reals[dir] = real
	return real
}

// Skip records a file or folder the discovery leaves out (once per path).
func (t *Tree) Skip(e *SkipError) {
	key, err := realPath(e.Path)
	if err != nil {
		key = e.Path
	}
	t.skip(key, e)
}

func (t *Tree) skip(key string, e *SkipError) {
	if t.seen[key] {
		return
	}
	t.seen[key] = true
	t.skipped = append(t.skipped, e)
}

// TestOnlyReadDir, when set, lists folders instead of os.ReadDir: a test
// makes a folder unreadable, as it cannot when it runs as root.
var TestOnlyReadDir func(dir string) ([]os.DirEntry, error)

func readDir(dir string) ([]os.DirEntry, error) {
	if TestOnlyReadDir != nil {
		return TestOnlyReadDir(dir)
	}
	return os.ReadDir(dir)
}

// Err is what was skipped, joined (nil when nothing was).
func (t *Tree) Err() error { return errors.Join(t.skipped...) }

func (t *Tree) inside(p string) bool {
	rel, err := filepath.Rel(t.root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// reason is an error's cause without the path it names.
func reason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
