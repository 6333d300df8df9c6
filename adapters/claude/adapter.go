package claude

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/scribe-archive/scribe/internal/jsonpatch"
	"github.com/scribe-archive/scribe/internal/osfile"
	"github.com/scribe-archive/scribe/session/source"
)

// Format is the source_format of documents inscribed from Claude Code
// transcripts.
const Format = "claude-code-jsonl"

// Adapter reads Claude Code's transcripts: it is the [source.Adapter] of
// the format. Use [New]; an Adapter may be shared by goroutines.
type Adapter struct {
	// forks caches, per project directory, the head of each session, to
	// tell a fork from its origin without reading the folder once per
	// session.
	forksMu sync.Mutex
	forks   map[string]map[string]Head // project dir -> session id -> head
}

// New returns the Claude Code adapter.
func New() *Adapter { return &Adapter{} }

var _ source.Adapter = (*Adapter)(nil)

func (a *Adapter) Format() string    { return Format }
func (a *Adapter) Agent() string     { return "claude" }
func (a *Adapter) AgentName() string { return "Claude" }

// DefaultDir is $CLAUDE_CONFIG_DIR/projects, or ~/.claude/projects.
func (a *Adapter) DefaultDir() (string, error) { return DefaultProjectsDir() }

// Detect reports whether path is a Claude Code transcript (a JSON-lines
// file whose first entry is a Claude Code entry, or an empty .jsonl file,
// which Claude Code creates before it writes), a project directory, or a
// directory of projects. Links in a directory are followed as
// [source.Tree] says.
func (a *Adapter) Detect(path string) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	if !fi.IsDir() {
		return isTranscript(path)
	}
	t, err := source.NewTree(path)
	if err != nil {
		return false
	}
	if hasTranscripts(t, path) {
		return true
	}
	for _, e := range t.ReadDir(path) {
		if e.Dir && hasTranscripts(t, e.Path) {
			return true
		}
	}
	return false
}

// hasTranscripts reports whether dir directly holds a Claude Code
// transcript, or the folder of a session with subagents.
func hasTranscripts(t *source.Tree, dir string) bool {
	for _, e := range t.ReadDir(dir) {
		switch {
		case e.Regular && strings.HasSuffix(e.Name, ".jsonl"):
			if isTranscript(e.Path) {
				return true
			}
		case e.Dir && hasSubagentsDir(t, e.Path):
			return true
		}
	}
	return false
}

// isTranscript reads the first entry of a file: a Claude Code entry is a
// JSON object with a "type" and without the "payload" every other client's
// records we know of carry. An empty .jsonl file is one too: Claude Code
// creates the file before it writes.
func isTranscript(p string) bool {
	ok, _ := readsAsTranscript(p)
	return ok
}

// Sniff reports whether r starts a Claude Code transcript (see Detect).
func (a *Adapter) Sniff(r io.Reader) bool {
	keys, ok, empty := topLevelKeys(io.LimitReader(r, 1<<20))
	return !empty && ok && keys["type"] && !keys["payload"]
}

// readsAsTranscript is isTranscript, with the error that kept it from
// reading the file.
func readsAsTranscript(p string) (bool, error) {
	f, err := osfile.Open(p)
	if err != nil {
		return false, err
	}
	defer f.Close()
	keys, ok, empty := topLevelKeys(io.LimitReader(f, 1<<20))
	if empty {
		return strings.HasSuffix(p, ".jsonl"), nil
	}
	return ok && keys["type"] && !keys["payload"], nil
}

// topLevelKeys returns the keys of the JSON object that starts r, as far
// as r holds it. ok is false when r does not start with an object; empty
// is set when r holds nothing at all. It reads no further than the
// object's end, and only scans its values (detection reads the first line
// of every file of a folder, most of them short, some of them megabytes).
func topLevelKeys(r io.Reader) (keys map[string]bool, ok, empty bool) {
	bp := headBufs.Get().(*[]byte)
	defer headBufs.Put(bp)
	buf := *bp
	var (
		depth     int
		inString  bool
		escaped   bool
		expectKey bool   // the next string at depth 1 is a key
		key       []byte // the key being read (inString at depth 1)
		inKey     bool
		started   bool
	)
	for first := true; ; first = false {
		n, err := r.Read(buf)
		if first && n == 0 && err == io.EOF {
			return nil, false, true
		}
		for _, c := range buf[:n] {
			switch {
			case inString:
				if inKey {
					key = append(key, c)
				}
				switch {
				case escaped:
					escaped = false
				case c == '\\':
					escaped = true
				case c == '"':
					inString = false
					if inKey {
						keys[jsonpatch.DecodeString(key)] = true // as encoding/json reads it
						inKey, key = false, key[:0]
					}
				}
			case !started:
				switch c {
				case ' ', '\t', '\n', '\r':
				case '{':
					started, depth, expectKey = true, 1, true
					keys = map[string]bool{}
				default:
					return nil, false, false
				}
			case c == '"':
				inString = true
				if depth == 1 && expectKey {
					inKey, expectKey = true, false
					key = append(key[:0], c)
				}
			case c == '{' || c == '[':
				depth++
			case c == '}' || c == ']':
				depth--
				if depth == 0 {
					return keys, true, false
				}
			case c == ',' && depth == 1:
				expectKey = true
			}
		}
		if err != nil {
			return keys, started, false
		}
	}
}

// headBufs holds the buffers detection reads the start of a file through.
var headBufs = sync.Pool{New: func() any { b := make([]byte, 4<<10); return &b }}

// Discover finds the transcripts at path: a session file, a subagent file,
// a project directory, or a directory of projects.
func (a *Adapter) Discover(path string) ([]source.Session, error) {
	ts, err := Discover(path)
	out := make([]source.Session, 0, len(ts))
	for _, t := range ts {
		out = append(out, a.session(t))
	}
	return out, err
}

// Session describes one transcript file, as Discover would.
func (a *Adapter) Session(path string) (source.Session, error) {
	ts, err := discoverFile(path)
	if err != nil {
		return source.Session{}, err
	}
	if len(ts) != 1 {
		return source.Session{}, fmt.Errorf("%s: not one transcript", path)
	}
	return a.session(ts[0]), nil
}

func (a *Adapter) session(t Transcript) source.Session {
	s := source.Session{Adapter: a, Path: t.Path, ID: t.ID, Dir: t.ProjectDir, Files: t.Files}
	if t.Path != "" {
		s.Rel, _ = filepath.Rel(t.ProjectDir, t.Path)
		s.FilesDir = strings.TrimSuffix(t.Path, ".jsonl")
	}
	for _, sa := range t.Subagents {
		sc := source.Sidechain{Path: sa.Path, ID: sa.AgentID, Rel: sa.Rel, MetaFile: sa.Meta}
		if sa.Meta != "" {
			if data, err := os.ReadFile(sa.Meta); err == nil {
				var m SubagentMeta
				if json.Unmarshal(data, &m) == nil {
					sc.ToolUseID, sc.Description = m.ToolUseID, m.Description
				}
			}
		}
		s.Sidechains = append(s.Sidechains, sc)
	}
	return s
}

// Identify reads the start of a transcript for the agent's name (claude
// -n) and the working directory.
func (a *Adapter) Identify(p string) source.Identity {
	var id source.Identity
	f, err := osfile.Open(p)
	if err != nil {
		return id
	}
	defer f.Close()
	lr := source.NewLineReader(io.LimitReader(f, 4<<20), 1, 0)
	for {
		l, err := lr.Next()
		if err != nil {
			return id
		}
		e, err := decodeEntry(l.Raw) // the builder's decoder: the envelope alone
		if err != nil {
			continue
		}
		if e.AgentName != nil && id.Name == "" {
			id.Name = *e.AgentName
		}
		if e.CWD != "" && id.Project == "" {
			id.Project = e.CWD
		}
		if id.Project != "" && (id.Name != "" || e.Type == "assistant") {
			return id
		}
	}
}

// forkDirs is how many project directories the fork cache holds at most:
// more than the workers of one inscribe read at once.
const forkDirs = 64

// ForkOrigin returns the session a transcript was forked from: another
// session of the same project that starts with the same message, and whose
// file began earlier (a fork copies the history under a new id, after the
// client's own first lines).
func (a *Adapter) ForkOrigin(s source.Session) string {
	a.forksMu.Lock()
	defer a.forksMu.Unlock()
	if a.forks == nil {
		a.forks = make(map[string]map[string]Head)
	}
	heads, ok := a.forks[s.Dir]
	if !ok {
		if len(a.forks) >= forkDirs {
			// A long run over many folders (check's scratch exports) must
			// not grow without end: start over.
			clear(a.forks)
		}
		heads = make(map[string]Head)
		paths, _ := filepath.Glob(filepath.Join(s.Dir, "*.jsonl"))
		for _, p := range paths {
			base := filepath.Base(p)
			if strings.HasPrefix(base, "agent-") {
				continue
			}
			if h, err := ReadHead(p); err == nil {
				heads[strings.TrimSuffix(base, ".jsonl")] = h
			}
		}
		a.forks[s.Dir] = heads
	}
	me, ok := heads[s.ID]
	if !ok || me.FirstUUID == "" {
		return ""
	}
	origin, stamp := "", me.FirstStamp
	for id, h := range heads {
		if id != s.ID && h.FirstUUID == me.FirstUUID && h.FirstStamp < stamp {
			origin, stamp = id, h.FirstStamp
		}
	}
	return origin
}

// NewBuilder starts a builder at the state an earlier run saved (nil for a
// new document).
func (a *Adapter) NewBuilder(cfg source.Config, state json.RawMessage, graph source.Graph) (source.Builder, error) {
	return newBuilder(cfg, state, graph)
}
