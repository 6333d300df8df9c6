package claude

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/scribe-archive/scribe/internal/osfile"
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

// Discover finds the transcripts at path: a session file, a subagent file, a
// project directory, or a directory of projects. Subagent files are attached
// to their session; those whose session file is not there (it was deleted,
// or this is a partial copy) come back as a transcript of their own with no
// Path. In a folder, links, unreadable folders and files that are not
// transcripts follow the policy of [source.Tree]: what is left out is
// returned in the error, as [source.SkipError]s joined, with what was found.
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
	t, err := source.NewTree(path)
	if err != nil {
		return nil, err
	}
	t.Visit(path)
	var out []Transcript
	if isProject(t, path) {
		out = discoverProject(t, path)
	} else {
		for _, e := range t.ReadDir(path) {
			if e.Dir && t.Visit(e.Path) {
				out = append(out, discoverProject(t, e.Path)...)
			}
		}
	}
	return out, t.Err()
}

// isProject reports whether dir is a project directory: it holds a .jsonl
// file, or the folder of a session with subagents.
func isProject(t *source.Tree, dir string) bool {
	for _, e := range t.ReadDir(dir) {
		if !e.Dir && strings.HasSuffix(e.Name, ".jsonl") {
			return true
		}
		if e.Dir && hasSubagentsDir(t, e.Path) {
			return true
		}
	}
	return false
}

// hasSubagentsDir reports whether a folder holds a subagents/ folder.
func hasSubagentsDir(t *source.Tree, folder string) bool {
	for _, e := range t.ReadDir(folder) {
		if e.Dir && e.Name == "subagents" {
			return true
		}
	}
	return false
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
	tree, err := source.NewTree(dir)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(filepath.Join(dir, stem))
	t.collect(tree, err == nil && fi.IsDir())
	// Old clients wrote subagents beside the session.
	olds, _ := filepath.Glob(filepath.Join(dir, "agent-*.jsonl"))
	for _, p := range olds {
		if sa, err := subagentAt(p); err == nil && sa.ParentID == stem {
			sa.Rel = filepath.Base(p)
			t.Subagents = append(t.Subagents, sa)
		}
	}
	return []Transcript{t}, tree.Err()
}

// discoverProject finds the transcripts of a project directory.
func discoverProject(t *source.Tree, dir string) []Transcript {
	ents := t.ReadDir(dir)
	folders := make(map[string]bool) // what the listing says, where a stat of each would ask
	for _, e := range ents {
		if e.Dir {
			folders[e.Name] = true
		}
	}
	byID := make(map[string]int)
	var out []Transcript
	var agents []string
	for _, e := range ents {
		if e.Dir || !strings.HasSuffix(e.Name, ".jsonl") || !transcriptFile(t, e) {
			continue
		}
		if strings.HasPrefix(e.Name, "agent-") {
			agents = append(agents, e.Path)
			continue
		}
		tr := Transcript{Path: e.Path, ID: strings.TrimSuffix(e.Name, ".jsonl"), ProjectDir: dir}
		tr.collect(t, folders[tr.ID])
		byID[tr.ID] = len(out)
		out = append(out, tr)
	}
	// The folder of a session whose file is gone (deleted, or left out of a
	// copy) still holds its subagents' transcripts: they are sessions'
	// sidechains all the same.
	for _, e := range ents {
		if _, ok := byID[e.Name]; ok || !e.Dir || !hasSubagentsDir(t, e.Path) {
			continue
		}
		subs := subagentsIn(t, e.Path, dir, e.Name)
		if len(subs) > 0 {
			byID[e.Name] = len(out)
			out = append(out, Transcript{ID: e.Name, ProjectDir: dir, Subagents: subs})
		}
	}
	for _, p := range agents {
		sa, err := subagentAt(p)
		if err != nil {
			t.Skip(&source.SkipError{Path: p, Why: "no entry of this subagent transcript names the session that started it"})
			continue
		}
		sa.Rel = filepath.Base(p)
		if i, ok := byID[sa.ParentID]; ok {
			out[i].Subagents = append(out[i].Subagents, sa)
		} else {
			byID[sa.ParentID] = len(out)
			out = append(out, Transcript{ID: sa.ParentID, ProjectDir: dir, Subagents: []Subagent{sa}})
		}
	}
	return out
}

// transcriptFile reports whether a .jsonl entry of the tree is a Claude
// Code transcript; one that is not is skipped, with one message.
func transcriptFile(t *source.Tree, e source.Entry) bool {
	if !e.Regular {
		t.Skip(&source.SkipError{Path: e.Path, Why: "not a regular file"})
		return false
	}
	ok, err := readsAsTranscript(e.Path)
	if err != nil {
		t.Skip(&source.SkipError{Path: e.Path, Why: "cannot be read (" + err.Error() + ")"})
		return false
	}
	if !ok {
		t.Skip(&source.SkipError{Path: e.Path, Why: "not a Claude Code transcript (it does not start with a JSON line holding a Claude Code entry)"})
		return false
	}
	return true
}

// subagentsIn lists the subagent transcripts in the folder of session id,
// in project directory dir.
func subagentsIn(t *source.Tree, folder, dir, id string) []Subagent {
	var out []Subagent
	sub := filepath.Join(folder, "subagents")
	if !hasSubagentsDir(t, folder) || !t.Visit(sub) {
		return nil
	}
	ents := t.ReadDir(sub)
	files := make(map[string]bool)
	for _, e := range ents {
		if e.Regular {
			files[e.Name] = true
		}
	}
	for _, e := range ents {
		if e.Dir || !strings.HasPrefix(e.Name, "agent-") || !strings.HasSuffix(e.Name, ".jsonl") || !transcriptFile(t, e) {
			continue
		}
		sa := Subagent{Path: e.Path, AgentID: strings.TrimSuffix(strings.TrimPrefix(e.Name, "agent-"), ".jsonl"), ParentID: id}
		sa.Rel, _ = filepath.Rel(dir, e.Path)
		if meta := strings.TrimSuffix(e.Name, ".jsonl") + ".meta.json"; files[meta] {
			sa.Meta = filepath.Join(sub, meta)
		}
		out = append(out, sa)
	}
	return out
}

// collect finds what Claude Code keeps in the session's folder, when it
// has one: its subagents' transcripts (subagents/), and other files.
func (tr *Transcript) collect(t *source.Tree, hasFolder bool) {
	if !hasFolder {
		return
	}
	folder := strings.TrimSuffix(tr.Path, ".jsonl")
	tr.Subagents = append(tr.Subagents, subagentsIn(t, folder, tr.ProjectDir, tr.ID)...)
	var walk func(dir, rel string)
	walk = func(dir, rel string) {
		if !t.Visit(dir) {
			return
		}
		for _, e := range t.ReadDir(dir) {
			r := path.Join(rel, e.Name)
			switch {
			case e.Dir && r == "subagents":
			case e.Dir:
				walk(e.Path, r)
			case e.Regular:
				tr.Files = append(tr.Files, r)
			}
		}
	}
	walk(folder, "")
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
	f, err := osfile.Open(p)
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
	f, err := osfile.Open(p)
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
