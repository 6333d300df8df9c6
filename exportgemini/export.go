// Package exportgemini turns a document of the store back into the session
// file the Gemini CLI wrote, one that gemini --resume accepts.
//
// As with packages exportclaude and exportcodex, the export is generated
// from the store: structure and metadata from the round files, which hold
// every line of the session file byte for byte (every version of every
// message, the $set and $rewindTo records the client replays); content
// from the markdown, which is the authority for it. A person's edit of a
// prompt, a reply, a thought or a tool's input or result is carried into
// the value it came from (strings written as the client's JSON.stringify
// writes them); every other byte is kept. An unedited document therefore
// exports to its session file, byte for byte (a torn last line aside,
// which is never inscribed).
//
// The file goes where the client looks for it: the chats folder of the
// project's folder in the client's tmp folder, with the subagents' files
// in chats/<session id>/.
package exportgemini

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/scribe-archive/scribe/adapters/gemini"
	"github.com/scribe-archive/scribe/exportcore"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
)

// Warning is an edit in a document that the export could not carry.
type Warning = exportcore.Warning

// Options adjust Session.
type Options = exportcore.Options

// File is a file an export wrote or found already right.
type File = exportcore.File

// Transcript writes the session file of one document (a session's or a
// subagent's) to w. src is the adapter of the format the document was
// inscribed from: it groups the kept lines into the document's items
// again, to find the person's edits.
func Transcript(d *inscribe.Doc, src source.Adapter, w io.Writer) ([]error, error) {
	return exportcore.Transcript(d, src, w, encodeInput)
}

// encodeInput writes an edited tool input back where it lies: a call's
// args are a JSON object, written as the client writes JSON.
func encodeInput(d *session.Block, edited string) ([]byte, string) {
	if !json.Valid([]byte(edited)) {
		return nil, fmt.Sprintf("the input of tool call %s is not valid JSON: not carried", d.ID)
	}
	return []byte(edited), ""
}

// DefaultDir is the client's tmp folder, where it keeps each project's
// sessions: $GEMINI_CLI_HOME/.gemini/tmp, else ~/.gemini/tmp.
func DefaultDir() (string, error) { return gemini.DefaultTmpDir() }

// sessionName matches the name the client gives a session's file.
var sessionName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^session-[A-Za-z0-9T:._-]+\.jsonl$`) })

// Name is the name of a session's file: the one it was inscribed from
// when that is the client's, else the one the client would give it,
// session-<YYYY-MM-DDTHH-MM of its start>-<first 8 characters of its id>.
func Name(m *session.Meta) string {
	if base := filepath.Base(filepath.FromSlash(m.Source)); sessionName().MatchString(base) {
		return base
	}
	stamp := "1970-01-01T00-00"
	if s := session.Str(m.Started); len(s) >= 16 {
		stamp = strings.ReplaceAll(s[:16], ":", "-")
	}
	return "session-" + stamp + "-" + m.SessionID[:min(8, len(m.SessionID))] + ".jsonl"
}

// ProjectFolder is the name of the folder of dir (the client's tmp folder)
// that holds the sessions of project: the one projects.json (beside dir)
// names, else one whose .project_root names it, else the one the session
// was inscribed from when no other project owns it, else the name the
// client would claim for it (its folder's name, lower case, with every
// character but a letter or digit a dash; -1, -2, ... when taken). created
// reports a folder that does not hold the project's marker yet.
func ProjectFolder(dir, project, recorded string) (name string, created bool) {
	owner := func(n string) (string, bool) {
		data, err := os.ReadFile(filepath.Join(dir, n, ".project_root"))
		return strings.TrimSpace(string(data)), err == nil
	}
	var reg struct {
		Projects map[string]string `json:"projects"`
	}
	if data, err := os.ReadFile(filepath.Join(filepath.Dir(dir), "projects.json")); err == nil && json.Unmarshal(data, &reg) == nil {
		if n := reg.Projects[filepath.Clean(project)]; n != "" && filepath.IsLocal(n) {
			if o, ok := owner(n); !ok || o == project {
				return n, !ok
			}
		}
	}
	if entries, err := os.ReadDir(dir); err == nil {
		for _, e := range entries {
			if o, ok := owner(e.Name()); ok && e.IsDir() && o == project {
				return e.Name(), false
			}
		}
	}
	if recorded != "" && filepath.IsLocal(recorded) {
		if o, ok := owner(recorded); !ok || o == project {
			return recorded, !ok
		}
	}
	slug := slugify(filepath.Base(project))
	for n := 0; ; n++ {
		name := slug
		if n > 0 {
			name = fmt.Sprintf("%s-%d", slug, n)
		}
		if o, ok := owner(name); !ok || o == project {
			return name, !ok
		}
	}
}

var notAlnum = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-z0-9]+`) })

// slugify is the client's name for a project's folder.
func slugify(s string) string {
	if s = strings.Trim(notAlnum().ReplaceAllString(strings.ToLower(s), "-"), "-"); s == "" {
		return "project"
	}
	return s
}

// recordedProject is the name of the project folder a session was
// inscribed from (<project>/chats/<file>), "" when its path is not laid
// out so.
func recordedProject(m *session.Meta) string {
	parts := strings.Split(m.Source, "/")
	if n := len(parts); n >= 3 && parts[n-2] == "chats" {
		return parts[n-3]
	}
	return ""
}

// projectRoot writes the project's .project_root beside dir when dir is a
// chats folder whose project folder has none: the marker by which the
// client knows the folder is the project's.
func projectRoot(dir, project string, opts Options) (*File, error) {
	root := filepath.Join(filepath.Dir(dir), ".project_root")
	if project == "" || filepath.Base(dir) != "chats" {
		return nil, nil
	}
	if _, err := os.Stat(root); !errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	f, _, err := exportcore.WriteFile(root, opts, func(w io.Writer) ([]error, error) {
		_, err := io.WriteString(w, project)
		return nil, err
	})
	if err != nil {
		return nil, err
	}
	return &f, nil
}

// Dir is the chats folder where the client looks for a session's file,
// in its tmp folder tmp: <tmp>/<project folder>/chats (see
// [ProjectFolder]).
func Dir(tmp string, m *session.Meta) (string, error) {
	project := session.Str(m.Project)
	if project == "" {
		return "", fmt.Errorf("session %s names no project folder, so the client would not find it", m.SessionID)
	}
	name, _ := ProjectFolder(tmp, project, recordedProject(m))
	return filepath.Join(tmp, name, "chats"), nil
}

// Session exports a session document into dir, a chats folder: its file at
// [Name], its subagents' files at <session id>/<agent id>.jsonl (where
// they were), and, when dir is a project's chats folder whose project
// folder has no .project_root, that marker, so that the client finds the
// session when it runs in the project. An existing identical file is left
// alone; a different one is an error unless opts.Force.
func Session(d *inscribe.Doc, src source.Adapter, dir string, opts Options) ([]File, []error, error) {
	meta, err := d.Meta()
	if err != nil {
		return nil, nil, err
	}
	if meta.SidechainOf != nil {
		return nil, nil, fmt.Errorf("%s is a sidechain: export its session, %s", d.Path(), meta.SidechainOf.SessionID)
	}
	var files []File
	var warnings []error
	put := func(target string, gen func(io.Writer) ([]error, error)) error {
		f, ws, err := exportcore.WriteFile(target, opts, gen)
		warnings = append(warnings, ws...)
		if err == nil {
			files = append(files, f)
		}
		return err
	}
	if err := put(filepath.Join(dir, Name(meta)), func(w io.Writer) ([]error, error) { return Transcript(d, src, w) }); err != nil {
		return files, warnings, err
	}
	sidechains, err := d.Sidechains()
	if err != nil {
		return files, warnings, err
	}
	for _, sc := range sidechains {
		sm, err := sc.Meta()
		if err != nil {
			return files, warnings, err
		}
		if sm.SidechainOf == nil {
			continue
		}
		rel := filepath.FromSlash(sm.SidechainOf.File)
		if rel == "" || !filepath.IsLocal(rel) {
			rel = filepath.Join(meta.SessionID, sm.SidechainOf.AgentID+".jsonl")
		}
		if err := put(filepath.Join(dir, rel), func(w io.Writer) ([]error, error) { return Transcript(sc, src, w) }); err != nil {
			return files, warnings, err
		}
	}
	marker, err := projectRoot(dir, session.Str(meta.Project), opts)
	if err != nil {
		return files, warnings, err
	}
	if marker != nil {
		files = append(files, *marker)
	}
	return files, warnings, nil
}
