package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/scribe-archive/scribe/internal/osfile"
	"github.com/scribe-archive/scribe/session/source"
)

// Format is the source_format of documents inscribed from Gemini CLI
// sessions.
const Format = "gemini-cli-jsonl"

// Adapter reads Gemini CLI session files. Use [New]; an Adapter may be
// shared by goroutines.
type Adapter struct{}

// New returns the Gemini CLI adapter.
func New() *Adapter { return &Adapter{} }

var _ source.Adapter = (*Adapter)(nil)

func (a *Adapter) Format() string    { return Format }
func (a *Adapter) Agent() string     { return "gemini" }
func (a *Adapter) AgentName() string { return "Gemini" }

// DefaultDir is where the client keeps its sessions: the tmp folder of its
// home, $GEMINI_CLI_HOME/.gemini/tmp (the client takes GEMINI_CLI_HOME for
// the user's home), else ~/.gemini/tmp.
func (a *Adapter) DefaultDir() (string, error) { return DefaultTmpDir() }

// DefaultTmpDir is the client's tmp folder: $GEMINI_CLI_HOME/.gemini/tmp,
// else ~/.gemini/tmp.
func DefaultTmpDir() (string, error) {
	home := os.Getenv("GEMINI_CLI_HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("find the Gemini CLI's folder: %w", err)
		}
		home = h
	}
	return filepath.Join(home, ".gemini", "tmp"), nil
}

// head is what the start of a session file says: its metadata line, and
// whether the file is a startup stub.
type head struct {
	meta Metadata
	// stub reports a file that holds nothing but metadata and the session
	// context: the file every invocation opens before it resumes another
	// session (it stays behind, beside the session it resumed).
	stub bool
}

// stubMax is the size past which a file is read as a session without
// looking for a stub: a startup file is two lines of a few KiB (the
// session context lists up to 200 files of the project).
const stubMax = 256 << 10

// readHead reads a file's metadata line. ok is false when the file does
// not start with one.
// Sniff reports whether r starts a Gemini CLI session file (see Detect):
// its first line is a metadata record.
func (a *Adapter) Sniff(r io.Reader) bool {
	lr := source.NewLineReader(io.LimitReader(r, stubMax+1), 1, 0)
	l, err := lr.Next()
	if err != nil {
		return false
	}
	var top line
	if json.Unmarshal(l.Raw, &top) != nil {
		return false
	}
	return kindOf(&top) == metaRecord
}

func readHead(p string) (h head, ok bool) {
	f, err := osfile.Open(p)
	if err != nil {
		return h, false
	}
	defer f.Close()
	var buf [4 << 10]byte
	n, _ := io.ReadFull(f, buf[:])
	// Most files of a folder are not sessions (or another client's):
	// decide on the first line without decoding it when it cannot be one
	// (JSON can spell a key's letters only as they are, or as \u escapes).
	if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
		first := buf[:i]
		if !bytes.Contains(first, []byte("sessionId")) && !bytes.Contains(first, []byte(`\u`)) {
			return h, false
		}
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return h, false
	}
	fi, err := f.Stat()
	if err != nil {
		return h, false
	}
	lr := source.NewLineReader(io.LimitReader(f, stubMax+1), 1, 0)
	l, err := lr.Next()
	if err != nil {
		return h, false
	}
	var top line
	if json.Unmarshal(l.Raw, &top) != nil && !l.Terminated {
		return h, false
	}
	if kindOf(&top) != metaRecord {
		return h, false
	}
	json.Unmarshal(top.SessionID, &h.meta.SessionID)
	json.Unmarshal(top.ProjectHash, &h.meta.ProjectHash)
	h.meta.Kind, h.meta.StartTime, h.meta.Directories = top.Kind, top.StartTime, top.Directories
	h.stub = fi.Size() <= stubMax && !holdsMessages(&top) && l.Terminated
	for h.stub {
		l, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil || !l.Terminated {
			h.stub = false
			break
		}
		var rec line
		if source.IsBlank(l.Raw) {
			continue
		}
		if json.Unmarshal(l.Raw, &rec) != nil {
			h.stub = false
			break
		}
		switch kindOf(&rec) {
		case setRecord:
			var s Set
			json.Unmarshal(rec.Set, &s)
			rec.Messages = s.Messages
			h.stub = !holdsMessages(&rec)
		case metaRecord:
			h.stub = !holdsMessages(&rec)
		default:
			h.stub = false
		}
	}
	return h, true
}

// holdsMessages reports whether a record sets a history that holds more
// than the session context.
func holdsMessages(l *line) bool {
	var msgs []struct {
		Type    string          `json:"type"`
		Content json.RawMessage `json:"content"`
	}
	if len(l.Messages) == 0 || json.Unmarshal(l.Messages, &msgs) != nil {
		return len(bytes.TrimSpace(l.Messages)) > 0 && string(bytes.TrimSpace(l.Messages)) != "null"
	}
	for _, m := range msgs {
		if m.Type != "user" || !strings.HasPrefix(strings.TrimSpace(partsString(m.Content)), "<session_context>") {
			return true
		}
	}
	return false
}

// Detect reports whether path is a session file of the client (it starts
// with a metadata line), or a folder that holds one where the client keeps
// them: in a chats folder, directly or a project or tmp folder above it.
func (a *Adapter) Detect(path string) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	if !fi.IsDir() {
		_, ok := readHead(path)
		return ok
	}
	t, err := source.NewTree(path)
	if err != nil {
		return false
	}
	found := false
	walkChats(t, path, func(p, _ string) bool {
		if _, ok := readHead(p); ok {
			found = true
			return false
		}
		return true
	})
	return found
}

// walkChats calls f with each .jsonl file the client may have written
// under dir, and the folder it lies in when that is a subagent's (the
// parent session's id), in lexical order, until f returns false: the
// files of a chats folder (dir, when it is one or holds .jsonl files; else
// dir/chats, or dir/<project>/chats), and of the folders in it, where the
// client keeps subagents' files.
func walkChats(t *source.Tree, dir string, f func(path, parent string) bool) {
	files := func(d, parent string) bool {
		for _, e := range t.ReadDir(d) {
			if e.Dir || !strings.HasSuffix(e.Name, ".jsonl") {
				continue
			}
			if !e.Regular {
				t.Skip(&source.SkipError{Path: e.Path, Why: "not a regular file"})
				continue
			}
			if !f(e.Path, parent) {
				return false
			}
		}
		return true
	}
	chats := func(d string) bool {
		if !t.Visit(d) {
			return true
		}
		if !files(d, "") {
			return false
		}
		for _, e := range t.ReadDir(d) {
			if e.Dir && t.Visit(e.Path) && !files(e.Path, e.Name) {
				return false
			}
		}
		return true
	}
	if filepath.Base(dir) == "chats" || holdsSessions(dir) {
		chats(dir)
		return
	}
	for _, e := range t.ReadDir(dir) {
		if !e.Dir {
			continue
		}
		if e.Name == "chats" {
			if !chats(e.Path) {
				return
			}
			continue
		}
		sub := filepath.Join(e.Path, "chats")
		if fi, err := os.Stat(sub); err == nil && fi.IsDir() && !chats(sub) {
			return
		}
	}
}

// holdsSessions reports whether dir holds .jsonl files: a chats folder
// under another name (a copy, an export).
func holdsSessions(dir string) bool {
	ms, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	return len(ms) > 0
}

// Discover finds the sessions at path: one session file, or every session
// in a tmp, project or chats folder, each with the subagents' files the
// client kept for it (chats/<session id>/<agent id>.jsonl). A startup
// file (nothing but metadata and the session context) is no session; nor
// is a file that is not the client's, which is left out and returned in
// the error, as [source.SkipError]s joined, with the sessions found.
func (a *Adapter) Discover(path string) ([]source.Session, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		h, ok := readHead(path)
		switch {
		case !ok && unwritten(path):
			return []source.Session{a.session(path, h)}, nil
		case !ok:
			return nil, fmt.Errorf("%s: not a Gemini CLI session file (its first line is not a metadata record)", path)
		case h.stub:
			return nil, &source.SkipError{Path: path, Why: "a startup file of the Gemini CLI, which holds nothing but its metadata and the session context"}
		case h.meta.Kind == "subagent":
			parent := filepath.Base(filepath.Dir(path))
			return []source.Session{{Adapter: a, ID: parent, Dir: filepath.Dir(filepath.Dir(path)),
				Sidechains: []source.Sidechain{a.sidechain(path, parent, h)}}}, nil
		}
		return []source.Session{a.session(path, h)}, nil
	}
	t, err := source.NewTree(path)
	if err != nil {
		return nil, err
	}
	var out []source.Session
	byID := map[string]int{}
	var subs []source.Sidechain
	var subParents []string
	walkChats(t, path, func(p, parent string) bool {
		h, ok := readHead(p)
		switch {
		case !ok && unwritten(p):
			// A file with no complete line yet: the store skips it until
			// it has one.
			s := a.session(p, h)
			byID[s.ID] = len(out)
			out = append(out, s)
		case !ok:
			t.Skip(&source.SkipError{Path: p, Why: "not a Gemini CLI session file (its first line is not a metadata record)"})
		case h.stub:
		case h.meta.Kind == "subagent" || parent != "":
			subs = append(subs, a.sidechain(p, parent, h))
			subParents = append(subParents, parent)
		default:
			s := a.session(p, h)
			if i, dup := byID[s.ID]; dup {
				t.Skip(&source.SkipError{Path: p, Why: fmt.Sprintf("session %s is also in %s, which is read instead", s.ID, out[i].Path)})
				return true
			}
			byID[s.ID] = len(out)
			out = append(out, s)
		}
		return true
	})
	for i, sc := range subs {
		parent := subParents[i]
		j, ok := byID[parent]
		if !ok {
			// A subagent whose session's file is gone: inscribed where
			// it would be with its session.
			j = len(out)
			byID[parent] = j
			out = append(out, source.Session{Adapter: a, ID: parent, Dir: filepath.Dir(filepath.Dir(sc.Path))})
		}
		out[j].Sidechains = append(out[j].Sidechains, sc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, t.Err()
}

// unwritten reports whether a file holds no complete line yet: it is
// empty, or its one line is unterminated and not JSON (its writer is
// still at it, or was stopped in it).
func unwritten(p string) bool {
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > stubMax {
		return false
	}
	data, err := os.ReadFile(p)
	return err == nil && bytes.IndexByte(data, '\n') < 0 && !json.Valid(data)
}

// session describes a main session's file: its id is the one its
// metadata line records; Dir is its chats folder.
func (a *Adapter) session(p string, h head) source.Session {
	id := h.meta.SessionID
	if id == "" {
		id = strings.TrimSuffix(filepath.Base(p), ".jsonl")
	}
	return source.Session{Adapter: a, Path: p, ID: id, Dir: filepath.Dir(p), Rel: filepath.Base(p)}
}

// sidechain describes a subagent's file, chats/<parent>/<agent id>.jsonl.
func (a *Adapter) sidechain(p, parent string, h head) source.Sidechain {
	id := h.meta.SessionID
	if id == "" {
		id = strings.TrimSuffix(filepath.Base(p), ".jsonl")
	}
	return source.Sidechain{Path: p, ID: id, Rel: filepath.Join(parent, filepath.Base(p))}
}

// Identify reads where a session's project is: the .project_root file the
// client keeps in the project's tmp folder (above chats/).
func (a *Adapter) Identify(p string) source.Identity {
	dir := filepath.Dir(p)
	for range 2 {
		if data, err := os.ReadFile(filepath.Join(filepath.Dir(dir), ".project_root")); err == nil {
			return source.Identity{Project: strings.TrimSpace(string(data))}
		}
		dir = filepath.Dir(dir)
	}
	return source.Identity{}
}

// ForkOrigin returns "": a session imported with --session-file is a new
// session holding the old one's messages, which names the file it came
// from in a note, not a fork.
func (a *Adapter) ForkOrigin(source.Session) string { return "" }

// NewBuilder starts a builder at the state an earlier run saved (nil for a
// new document).
func (a *Adapter) NewBuilder(cfg source.Config, state json.RawMessage, graph source.Graph) (source.Builder, error) {
	return NewBuilder(cfg, state, graph)
}
