// Package codex reads the rollout files of the OpenAI Codex CLI: it is the
// [source.Adapter] of the "codex-rollout" format.
//
// Codex keeps each thread as one JSON-lines file,
// $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl
// (CODEX_HOME defaults to ~/.codex). Every line is a record
// {"timestamp", "type", "payload"}: a session_meta first, then the items
// the model saw and wrote (response_item: messages, reasoning, tool calls
// and their outputs), the client's events (event_msg), turn contexts,
// compactions and bookkeeping.
//
// # Rounds and items
//
// A round opens at each prompt a person typed: a user message that is not
// context the client injected (environment_context, AGENTS.md
// instructions, skills, ...; the client marks their provenance "harness",
// and their text starts with a tag). Injected context and developer
// messages are reminders: what the model saw that no person typed. They are
// shown collapsed, in the prompt's item when they came before it, else in
// the item above.
//
// The model's output between two inputs (reasoning, text, tool calls) is
// one assistant item; a tool call's output joins its call. Reasoning shows
// its summary as thinking and its raw text as thinking labelled "raw"; the
// encrypted content stays in the round files. A compacted record is a
// compaction marker holding the message the client resumes with.
// Images (data URLs) are files beside the document.
//
// The client's events repeat what the response items hold (user_message,
// agent_message, item_completed), or are bookkeeping (task_started,
// token_count, turn_context, world_state): they are kept in the round
// files and not shown, except error and warning events, shown as
// reminders. Records of a type scribe does not know are shown as recorded,
// collapsed.
//
// # Identities
//
// Codex items carry no identity that is unique across a file, so the
// identity of a line is its number: "L12" is the item line 12 opened.
// It depends on nothing but the line's position, so a rollout inscribed at
// once or appended in pieces gives the same document.
package codex

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/scribe-archive/scribe/internal/osfile"
	"github.com/scribe-archive/scribe/session/source"
)

// Format is the source_format of documents inscribed from Codex rollouts.
const Format = "codex-rollout"

// Adapter reads Codex rollout files. Use [New]; an Adapter may be shared by
// goroutines.
type Adapter struct{}

// New returns the Codex adapter.
func New() *Adapter { return &Adapter{} }

var _ source.Adapter = (*Adapter)(nil)

func (a *Adapter) Format() string    { return Format }
func (a *Adapter) Agent() string     { return "codex" }
func (a *Adapter) AgentName() string { return "Codex" }

// DefaultDir is $CODEX_HOME/sessions, or ~/.codex/sessions.
func (a *Adapter) DefaultDir() (string, error) { return DefaultSessionsDir() }

// DefaultSessionsDir is where Codex keeps its rollouts:
// $CODEX_HOME/sessions, or ~/.codex/sessions.
func DefaultSessionsDir() (string, error) {
	if h := os.Getenv("CODEX_HOME"); h != "" {
		return filepath.Join(h, "sessions"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find the Codex sessions directory: %w", err)
	}
	return filepath.Join(home, ".codex", "sessions"), nil
}

// Detect reports whether path is a rollout file (one of its first lines is
// a session_meta record with a payload, or its one line is the start of
// one), or a directory that holds rollout
// files, directly or laid out as YYYY/MM/DD. Links in a directory are
// followed as [source.Tree] says.
func (a *Adapter) Detect(path string) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	if !fi.IsDir() {
		// A rollout whose first line is being written is one too: the
		// store skips it, saying so, until the line is whole.
		_, h := readHead(path)
		return h != noMeta
	}
	t, err := source.NewTree(path)
	if err != nil {
		return false
	}
	found := false
	walkRollouts(t, path, func(p string) bool {
		if _, ok := readMeta(p); ok {
			found = true
			return false
		}
		return true
	})
	return found
}

// walkRollouts calls f for each .jsonl file in dir and in the date folders
// below it (three levels: YYYY/MM/DD), in lexical order, until f returns
// false.
func walkRollouts(t *source.Tree, dir string, f func(string) bool) {
	var walk func(d string, depth int) bool
	walk = func(d string, depth int) bool {
		if !t.Visit(d) {
			return true
		}
		for _, e := range t.ReadDir(d) {
			switch {
			case !e.Dir && strings.HasSuffix(e.Name, ".jsonl"):
				if !e.Regular {
					t.Skip(&source.SkipError{Path: e.Path, Why: "not a regular file"})
					continue
				}
				if !f(e.Path) {
					return false
				}
			case e.Dir && depth < 3:
				if !walk(e.Path, depth+1) {
					return false
				}
			}
		}
		return true
	}
	walk(dir, 0)
}

// readMeta reads the session_meta record that starts a rollout file. ok is
// false when the file does not start with one.
func readMeta(p string) (m SessionMeta, ok bool) {
	m, h := readHead(p)
	return m, h == hasMeta
}

// readHead is readHeadFrom of the file at p.
func readHead(p string) (m SessionMeta, h head) {
	f, err := osfile.Open(p)
	if err != nil {
		return m, noMeta
	}
	defer f.Close()
	return readHeadFrom(f)
}

// Sniff reports whether r starts a Codex rollout (see Detect).
func (a *Adapter) Sniff(r io.Reader) bool {
	_, ok := readMetaFrom(r)
	return ok
}

// readMetaFrom is readMeta of the file f gives.
func readMetaFrom(f io.Reader) (SessionMeta, bool) {
	m, h := readHeadFrom(f)
	return m, h == hasMeta
}

// A rollout's head: what its first lines say of it.
type head int

const (
	noMeta  head = iota // not a rollout
	hasMeta             // a session_meta record, in its first lines
	// tornMeta: the file's one line is the start of a session_meta record
	// still being written (no line end yet, not JSON yet): a rollout the
	// store skips, with a warning, until the line is whole.
	tornMeta
)

// metaLines is how many lines readHeadFrom looks through for the
// session_meta record: Codex writes it first, but a line written twice
// (a writer that retried) may come before it, and the file is a rollout
// all the same.
const metaLines = 8

// readHeadFrom reads the session_meta record among the first lines of the
// file f gives: lines before it must be Codex's records (a timestamp, a
// type and a payload).
func readHeadFrom(f io.Reader) (m SessionMeta, h head) {
	buf := headBufs.Get().(*[]byte)
	defer headBufs.Put(buf)
	head := *buf
	// Most first lines are short: the rest of the buffer is read only when
	// its first part holds no line end.
	n, err := io.ReadFull(f, head[:firstRead])
	if err == nil && bytes.IndexByte(head[:n], '\n') < 0 {
		var more int
		more, err = io.ReadFull(f, head[n:])
		n += more
	}
	head = head[:n]
	whole := err == io.EOF || err == io.ErrUnexpectedEOF // head holds the whole file
	if err != nil && !whole {
		return m, noMeta
	}
	if !mayOpenWithMeta(head, whole) {
		return m, noMeta
	}
	lr := source.NewLineReader(io.LimitReader(io.MultiReader(bytes.NewReader(head), f), 16<<20), 1, 0)
	for i := 0; i < metaLines; i++ {
		l, err := lr.Next()
		if err != nil {
			return m, noMeta
		}
		var r RolloutLine
		if json.Unmarshal(l.Raw, &r) != nil {
			if l.No == 1 && !l.Terminated && bytes.Contains(l.Raw, []byte(`"session_meta"`)) {
				return m, tornMeta
			}
			return m, noMeta
		}
		if r.Type == "session_meta" && len(r.Payload) > 0 && r.Payload[0] == '{' {
			json.Unmarshal(r.Payload, &m)
			return m, hasMeta
		}
		if r.Type == "" || r.Timestamp == "" || len(r.Payload) == 0 {
			return m, noMeta
		}
	}
	return m, noMeta
}

// headBufs holds the buffers readMeta reads a file's first bytes into:
// detection reads every file of a folder.
var headBufs = sync.Pool{New: func() any { b := make([]byte, 16<<10); return &b }}

// firstRead is how much of a file's start readMeta reads first.
const firstRead = 2 << 10

// mayOpenWithMeta reports whether a file whose first bytes are head (all
// of it when whole) may start with a session_meta record, without decoding
// it: a first line held whole in head that has neither "session_meta" nor a
// \u escape (the only way JSON can spell its letters otherwise) is no
// rollout. Detection reads the first file of every folder it is given,
// most of them another client's, so it must not decode their first lines.
func mayOpenWithMeta(head []byte, whole bool) bool {
	line := head
	if i := bytes.IndexByte(head, '\n'); i >= 0 {
		line = head[:i]
	} else if !whole {
		return true // a first line longer than head: decode it
	}
	return bytes.Contains(line, []byte("session_meta")) || bytes.Contains(line, []byte(`\u`)) ||
		// A record of Codex's before it (readHeadFrom).
		bytes.HasPrefix(line, []byte(`{"timestamp":`)) && bytes.Contains(head, []byte(`"session_meta"`))
}

// uuidAtEnd matches the thread id at the end of a rollout's file name.
var uuidAtEnd = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.jsonl$`)
})

// datePath matches the folders Codex files a rollout under: YYYY/MM/DD.
var datePath = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]{4}$|^[0-9]{2}$`) })

// Discover finds the rollouts at path: one rollout file, or every rollout
// in a directory and its YYYY/MM/DD folders. What a directory holds that is
// not a rollout, or that cannot be read, is left out and returned in the
// error, as [source.SkipError]s joined, with the rollouts found.
func (a *Adapter) Discover(path string) ([]source.Session, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		s, err := a.Session(path)
		if err != nil {
			return nil, err
		}
		return []source.Session{s}, nil
	}
	t, err := source.NewTree(path)
	if err != nil {
		return nil, err
	}
	var out []source.Session
	walkRollouts(t, path, func(p string) bool {
		s, err := a.Session(p)
		if err != nil {
			// One message for a file that is not a rollout (a binary file
			// named .jsonl), never one per line.
			t.Skip(&source.SkipError{Path: p, Why: strings.TrimPrefix(err.Error(), p+": ")})
			return true
		}
		out = append(out, s)
		return true
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, t.Err()
}

// Session describes one rollout file. Its id is the thread id its
// session_meta records, else the UUID that ends its name. When the file
// lies in YYYY/MM/DD folders, Dir is the folder above them (the sessions
// root), so that Rel is where Codex would keep it; else Dir is the file's
// folder.
func (a *Adapter) Session(p string) (source.Session, error) {
	m, h := readHead(p)
	if h == noMeta && !emptyFile(p) {
		// An empty file is a rollout with no record yet, one whose first
		// line is being written has no whole one yet: the store skips it
		// until it has one.
		return source.Session{}, fmt.Errorf("%s: not a Codex rollout (none of its first %d lines is a session_meta record)", p, metaLines)
	}
	id := m.ID
	if id == "" {
		if g := uuidAtEnd().FindStringSubmatch(filepath.Base(p)); g != nil {
			id = g[1]
		}
	}
	if id == "" {
		return source.Session{}, fmt.Errorf("%s: the rollout names no thread id", p)
	}
	dir, rel := splitDated(p)
	return source.Session{Adapter: a, Path: p, ID: id, Dir: dir, Rel: rel}, nil
}

func emptyFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Size() == 0
}

// Identify reads the session_meta record for the working directory. Codex
// records no name for its agent.
func (a *Adapter) Identify(p string) source.Identity {
	m, _ := readMeta(p)
	return source.Identity{Project: m.CWD}
}

// ForkOrigin returns the thread a rollout was forked from (codex fork):
// its session_meta's forked_from_id.
func (a *Adapter) ForkOrigin(s source.Session) string {
	m, _ := readMeta(s.Path)
	return m.ForkedFromID
}

// NewBuilder starts a builder at the state an earlier run saved (nil for a
// new document).
func (a *Adapter) NewBuilder(cfg source.Config, state json.RawMessage, graph source.Graph) (source.Builder, error) {
	return newBuilder(cfg, state, graph)
}

// FindRollout returns the rollout of thread id in the sessions tree whose
// root is root (YYYY/MM/DD/rollout-*-<id>.jsonl, or a rollout directly in
// root), or "" when there is none.
func FindRollout(root, id string) string {
	for _, pattern := range []string{
		filepath.Join(root, "*", "*", "*", "rollout-*"+id+".jsonl"),
		filepath.Join(root, "rollout-*"+id+".jsonl"),
	} {
		if ms, _ := filepath.Glob(pattern); len(ms) > 0 {
			return ms[0]
		}
	}
	return ""
}

// splitDated splits the path of a rollout file into its sessions root and
// its path below it: the folder above YYYY/MM/DD and
// "YYYY/MM/DD/<name>" when the file lies in date folders, else its own
// folder and its name.
func splitDated(p string) (root, rel string) {
	day := filepath.Dir(p)
	month := filepath.Dir(day)
	year := filepath.Dir(month)
	d, m, y := filepath.Base(day), filepath.Base(month), filepath.Base(year)
	if len(d) == 2 && datePath().MatchString(d) && len(m) == 2 && datePath().MatchString(m) && len(y) == 4 && datePath().MatchString(y) {
		return filepath.Dir(year), filepath.Join(y, m, d, filepath.Base(p))
	}
	return filepath.Dir(p), filepath.Base(p)
}
