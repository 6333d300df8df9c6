package claude

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/scribe-archive/scribe/session/source"
)

// Transcript is one session file and what Claude Code keeps beside it.
type Transcript struct {
	Path string // the .jsonl file
	ID   string // the session id (the file's name without .jsonl)
	// ProjectDir is the directory of the project the session ran in, as
	// Claude Code names it (the encoded working directory).
	ProjectDir string
	// Subagents are the transcripts of subagents the session started.
	Subagents []Subagent
	// Files are other files Claude Code keeps in the session's folder (large
	// tool outputs under tool-results/), as paths relative to that folder.
	Files []string
}

// Subagent is a subagent transcript (a sidechain).
type Subagent struct {
	Path    string // the agent-<id>.jsonl file
	AgentID string
	// Rel is the file's path relative to the project directory, which says
	// how Claude Code laid it out: <session>/subagents/agent-<id>.jsonl, or
	// agent-<id>.jsonl beside the session (clients before 2.1).
	Rel string
	// Meta is the .meta.json file beside it, if any.
	Meta string
	// ParentID is the id of the session that started it.
	ParentID string
}

// DefaultProjectsDir returns where Claude Code keeps its projects:
// $CLAUDE_CONFIG_DIR/projects, or ~/.claude/projects.
func DefaultProjectsDir() (string, error) {
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return filepath.Join(d, "projects"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".claude", "projects"), nil
}

// ValidID reports whether s is usable as a session or agent id: it becomes a
// file name in the store, so it may not hold a path separator or be "." or
// "..".
func ValidID(s string) bool { return isSafeName(s) }

// Discover finds the transcripts at path: a session file, a subagent file, a
// project directory, or a directory of projects. Subagent files are attached
// to their session; one found without its session comes back as a
// transcript of its own with no Path (its parent is not here).
func Discover(path string) ([]Transcript, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		if !strings.HasSuffix(path, ".jsonl") {
			return nil, fmt.Errorf("%s: not a .jsonl transcript", path)
		}
		return discoverFile(path)
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	hasJSONL := false
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".jsonl") {
			hasJSONL = true
			break
		}
	}
	if hasJSONL {
		return discoverProject(path)
	}
	var out []Transcript
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		ts, err := discoverProject(filepath.Join(path, e.Name()))
		if err != nil {
			return out, err
		}
		out = append(out, ts...)
	}
	return out, nil
}

func discoverFile(path string) ([]Transcript, error) {
	dir, base := filepath.Split(path)
	dir = filepath.Clean(dir)
	stem := strings.TrimSuffix(base, ".jsonl")
	if strings.HasPrefix(stem, "agent-") {
		sa, err := subagentAt(path)
		if err != nil {
			return nil, err
		}
		projectDir := dir
		if filepath.Base(dir) == "subagents" {
			projectDir = filepath.Dir(filepath.Dir(dir))
		}
		sa.Rel, _ = filepath.Rel(projectDir, path)
		return []Transcript{{ID: sa.ParentID, ProjectDir: projectDir, Subagents: []Subagent{sa}}}, nil
	}
	t := Transcript{Path: path, ID: stem, ProjectDir: dir}
	if err := t.collect(); err != nil {
		return nil, err
	}
	// Old clients wrote subagents beside the session.
	olds, _ := filepath.Glob(filepath.Join(dir, "agent-*.jsonl"))
	for _, p := range olds {
		if sa, err := subagentAt(p); err == nil && sa.ParentID == stem {
			sa.Rel = filepath.Base(p)
			t.Subagents = append(t.Subagents, sa)
		}
	}
	return []Transcript{t}, nil
}

func discoverProject(dir string) ([]Transcript, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]int)
	var out []Transcript
	var agents []string
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".jsonl") {
			continue
		}
		if strings.HasPrefix(name, "agent-") {
			agents = append(agents, filepath.Join(dir, name))
			continue
		}
		t := Transcript{Path: filepath.Join(dir, name), ID: strings.TrimSuffix(name, ".jsonl"), ProjectDir: dir}
		if err := t.collect(); err != nil {
			return out, err
		}
		byID[t.ID] = len(out)
		out = append(out, t)
	}
	for _, p := range agents {
		sa, err := subagentAt(p)
		if err != nil {
			return out, err
		}
		sa.Rel = filepath.Base(p)
		if i, ok := byID[sa.ParentID]; ok {
			out[i].Subagents = append(out[i].Subagents, sa)
		} else {
			byID[sa.ParentID] = len(out)
			out = append(out, Transcript{ID: sa.ParentID, ProjectDir: dir, Subagents: []Subagent{sa}})
		}
	}
	return out, nil
}

// collect finds what Claude Code keeps in the session's folder.
func (t *Transcript) collect() error {
	folder := strings.TrimSuffix(t.Path, ".jsonl")
	subs, _ := filepath.Glob(filepath.Join(folder, "subagents", "agent-*.jsonl"))
	sort.Strings(subs)
	for _, p := range subs {
		sa := Subagent{Path: p, AgentID: strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "agent-"), ".jsonl"), ParentID: t.ID}
		sa.Rel, _ = filepath.Rel(t.ProjectDir, p)
		if m := strings.TrimSuffix(p, ".jsonl") + ".meta.json"; fileExists(m) {
			sa.Meta = m
		}
		t.Subagents = append(t.Subagents, sa)
	}
	err := filepath.WalkDir(folder, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(folder, p)
		if d.IsDir() {
			if rel == "subagents" {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			t.Files = append(t.Files, filepath.ToSlash(rel))
		}
		return nil
	})
	return err
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// subagentAt describes the subagent file at p, reading as much of it as it
// takes to find the session that started it.
func subagentAt(p string) (Subagent, error) {
	sa := Subagent{Path: p, AgentID: strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "agent-"), ".jsonl")}
	if m := strings.TrimSuffix(p, ".jsonl") + ".meta.json"; fileExists(m) {
		sa.Meta = m
	}
	dir := filepath.Dir(p)
	if filepath.Base(dir) == "subagents" {
		sa.ParentID = filepath.Base(filepath.Dir(dir))
		return sa, nil
	}
	f, err := os.Open(p)
	if err != nil {
		return sa, err
	}
	defer f.Close()
	lr := source.NewLineReader(io.LimitReader(f, 4<<20), 1, 0)
	for {
		l, err := lr.Next()
		if err != nil {
			break
		}
		var e struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(l.Raw, &e) == nil && e.SessionID != "" {
			sa.ParentID = e.SessionID
			return sa, nil
		}
	}
	return sa, fmt.Errorf("%s: no entry names the session that started this subagent", p)
}

// Head is what the first lines of a transcript say about where it came
// from: the first message's identity, and the first timestamp in the file.
type Head struct {
	FirstUUID  string
	FirstStamp string
}

// ReadHead reads a transcript until its first user message (at most a few
// megabytes).
func ReadHead(p string) (Head, error) {
	var h Head
	f, err := os.Open(p)
	if err != nil {
		return h, err
	}
	defer f.Close()
	lr := source.NewLineReader(io.LimitReader(f, 8<<20), 1, 0)
	for {
		l, err := lr.Next()
		if err != nil {
			return h, nil
		}
		var e struct {
			Type      string `json:"type"`
			UUID      string `json:"uuid"`
			Timestamp string `json:"timestamp"`
		}
		if json.Unmarshal(l.Raw, &e) != nil {
			continue
		}
		if h.FirstStamp == "" && e.Timestamp != "" {
			h.FirstStamp = e.Timestamp
		}
		if e.Type == "user" && e.UUID != "" {
			h.FirstUUID = e.UUID
			return h, nil
		}
	}
}

// ProjectSlug encodes a working directory the way Claude Code names its
// project directories: every character that is not a letter or a digit
// becomes "-".
func ProjectSlug(dir string) string {
	var sb strings.Builder
	for _, r := range dir {
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			sb.WriteRune(r)
		} else {
			sb.WriteByte('-')
		}
	}
	return sb.String()
}
