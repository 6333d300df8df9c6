package mcp

import (
	"context"
	"fmt"
	"strings"
)

// The write tools, offered with Options.Write only. Each answers what it
// changed, as JSON.

type summaryArgs struct {
	Session string `json:"session"`
	Summary string `json:"summary"`
	paging
}

type titleArgs struct {
	Session string `json:"session"`
	Title   string `json:"title"`
	paging
}

type tagArgs struct {
	Session    string    `json:"session"`
	Rounds     roundSpec `json:"rounds"`
	Engagement string    `json:"engagement"`
	paging
}

type writeJSON struct {
	Session    string `json:"session"`
	Changed    bool   `json:"changed"`
	Title      string `json:"title,omitempty"`
	Rounds     []int  `json:"rounds,omitempty"`
	Engagement string `json:"engagement,omitempty"`
	Tagged     *int   `json:"tagged,omitempty"`
	Note       string `json:"note,omitempty"`
}

func (s *Server) setSummary(ctx context.Context, a summaryArgs) (string, error) {
	return s.describe(a.Session, func(d Doc) (bool, error) { return s.writer.SetSummary(d, a.Summary) },
		"the summary is in the document's head; list_sessions and search show its first line as the title while the session has none")
}

func (s *Server) setTitle(ctx context.Context, a titleArgs) (string, error) {
	return s.describe(a.Session, func(d Doc) (bool, error) { return s.writer.SetTitle(d, a.Title) }, "")
}

// describe writes a session's head with write and answers what changed,
// and the title lists now show.
func (s *Server) describe(session string, write func(Doc) (bool, error), note string) (string, error) {
	d, err := s.store.Resolve(session)
	if err != nil {
		return "", err
	}
	changed, err := write(d)
	if err != nil {
		return "", fmt.Errorf("session %s: %w", d.Key, err)
	}
	h, err := s.store.Head(d)
	if err != nil {
		return "", err
	}
	return string(marshal(writeJSON{Session: d.Key, Changed: changed, Title: clip(h.Title, titleBytes), Note: note})) + "\n", nil
}

func (s *Server) tagRounds(ctx context.Context, a tagArgs) (string, error) {
	d, err := s.store.Resolve(a.Session)
	if err != nil {
		return "", err
	}
	rounds, err := s.selectRounds(d, a.Rounds)
	if err != nil {
		return "", err
	}
	eng := strings.TrimSpace(a.Engagement)
	n, err := s.writer.Tag(d, rounds, eng)
	if err != nil {
		return "", fmt.Errorf("session %s: %w", d.Key, err)
	}
	out := writeJSON{Session: d.Key, Changed: n > 0, Engagement: eng, Tagged: &n}
	if len(rounds) <= 100 {
		out.Rounds = rounds
	}
	if eng == "" {
		out.Note = "untagged"
	}
	return string(marshal(out)) + "\n", nil
}
