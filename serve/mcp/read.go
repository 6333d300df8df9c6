package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/scribe-archive/scribe/inscribe/document"
)

var stringType = reflect.TypeFor[string]()

// Fields are clipped so that one item of a list always fits a page of
// MinBudget with its head.
const (
	titleBytes   = 200
	snippetBytes = 400
	projectBytes = 200
	previewBytes = 200
	summaryBytes = 1500
	sidechainsAt = 5 // sidechain keys listed by get_session
)

// A search's hits are paged by windows: window k is the newest
// firstWindow<<(k-1) rounds that match, ranked (the first is what scribe
// search ranks), and its page list is its hits that no earlier window
// held. Window k holds every round that matches once it holds fewer than
// its size, so the pages reach every hit. A cursor is (window, offset).
const (
	firstWindow = 256
	lastWindow  = 1 << 24
)

type searchArgs struct {
	Query      string `json:"query"`
	FTS        bool   `json:"fts,omitempty"`
	Agent      string `json:"agent,omitempty"`
	Project    string `json:"project,omitempty"`
	Since      string `json:"since,omitempty"`
	Until      string `json:"until,omitempty"`
	Engagement string `json:"engagement,omitempty"`
	In         string `json:"in,omitempty"`
	paging
}

// paged is a call's arguments without its paging: what the cursor is
// bound to.
func (a searchArgs) paged() searchArgs { a.paging = paging{}; return a }

type hitJSON struct {
	Session    string `json:"session"`
	Agent      string `json:"agent"`
	Round      int    `json:"round"`
	Time       string `json:"time"`
	Title      string `json:"title"`
	Project    string `json:"project,omitempty"`
	Engagement string `json:"engagement,omitempty"`
	Snippet    string `json:"snippet"`
	In         string `json:"in,omitempty"` // the text the snippet is from
}

type hitKey struct {
	key   string
	round int
}

func (s *Server) search(ctx context.Context, a searchArgs) (string, error) {
	if strings.TrimSpace(a.Query) == "" {
		return "", errors.New("query is empty: give the words to look for")
	}
	limit := a.Limit
	if limit == 0 {
		limit = 10
	}
	if limit < 1 || limit > 50 {
		return "", fmt.Errorf("limit %d: give 1 to 50", limit)
	}
	win, off, err := readCursor(a.Cursor, "search", a.paged())
	if err != nil {
		return "", err
	}
	if win == 0 {
		win, off = 1, 0
	}
	q := Query{Text: a.Query, Raw: a.FTS, Agent: a.Agent, Project: a.Project, Since: a.Since, Until: a.Until, Engagement: a.Engagement, In: a.In}
	// window returns the hits of window k, or of the first window the
	// best n only (the same ranking: any limit up to firstWindow ranks
	// the newest firstWindow matches), and whether no match lies beyond.
	window := func(k, n int) ([]Hit, bool, error) {
		q.Limit = firstWindow << (k - 1)
		if k == 1 {
			q.Limit = min(firstWindow, n)
		}
		hits, err := s.store.Search(ctx, q)
		return hits, len(hits) < q.Limit || q.Limit >= lastWindow, err
	}
	// What the windows before this one held.
	held := map[hitKey]bool{}
	for k := 1; k < win; k++ {
		hits, _, err := window(k, firstWindow)
		if err != nil {
			return "", err
		}
		for _, h := range hits {
			held[hitKey{h.Key, h.Round}] = true
		}
	}
	p := newListPage(a.budget(), nil, "hits")
	tail := pageTail{}
	for {
		// One hit more than the page takes tells whether the window
		// goes on.
		hits, final, err := window(win, off+limit+1)
		if err != nil {
			return "", err
		}
		var list []Hit
		for _, h := range hits {
			if !held[hitKey{h.Key, h.Round}] {
				list = append(list, h)
			}
		}
		for off < len(list) && p.n < limit && p.add(hitOf(list[off])) {
			off++
		}
		if off < len(list) {
			tail.Next = makeCursor("search", a.paged(), win, off)
			break
		}
		if final {
			break
		}
		if p.n == limit {
			// The window is read: the next page starts the next.
			tail.Next = makeCursor("search", a.paged(), win+1, 0)
			break
		}
		for _, h := range hits {
			held[hitKey{h.Key, h.Round}] = true
		}
		win, off = win+1, 0
	}
	switch {
	case p.n == 0 && a.Cursor == "":
		tail.Note = "no rounds match"
	case p.n == 0:
		tail.Note = "no more rounds match"
	case tail.Next != "":
		tail.Note = "more hits: call search again with the same arguments and cursor: next_cursor"
	}
	return p.finish(tail), nil
}

func hitOf(h Hit) hitJSON {
	return hitJSON{Session: h.Key, Agent: h.Agent, Round: h.Round, Time: h.Started, Title: clip(h.Title, titleBytes),
		Project: clip(h.Project, projectBytes), Engagement: clip(h.Engagement, titleBytes), Snippet: clip(h.Snippet, snippetBytes), In: h.In}
}

type listArgs struct {
	Agent   string `json:"agent,omitempty"`
	Project string `json:"project,omitempty"`
	Since   string `json:"since,omitempty"`
	paging
}

func (a listArgs) paged() listArgs { a.paging = paging{}; return a }

type sessionJSON struct {
	Session  string `json:"session"`
	Agent    string `json:"agent"`
	Started  string `json:"started"`
	Ended    string `json:"ended,omitempty"`
	Messages int    `json:"messages"`
	Project  string `json:"project,omitempty"`
	Title    string `json:"title"`
}

func (s *Server) listSessions(ctx context.Context, a listArgs) (string, error) {
	limit := a.Limit
	if limit == 0 {
		limit = 20
	}
	if limit < 1 || limit > 100 {
		return "", fmt.Errorf("limit %d: give 1 to 100", limit)
	}
	off, _, err := readCursor(a.Cursor, "list_sessions", a.paged())
	if err != nil {
		return "", err
	}
	all, err := s.store.Sessions(ctx, SessionFilter{Agent: a.Agent, Project: a.Project, Since: a.Since})
	if err != nil {
		return "", err
	}
	p := newListPage(a.budget(), map[string]int{"total": len(all)}, "sessions")
	for off < len(all) && p.n < limit {
		e := all[off]
		if !p.add(sessionJSON{Session: e.Key, Agent: e.Agent, Started: e.Started, Ended: e.Ended, Messages: e.Messages,
			Project: clip(e.Project, projectBytes), Title: clip(e.Title, titleBytes)}) {
			break
		}
		off++
	}
	tail := pageTail{}
	if off < len(all) {
		tail.Next = makeCursor("list_sessions", a.paged(), off, 0)
		tail.Note = "more sessions: call list_sessions again with the same arguments and cursor: next_cursor"
	} else if len(all) == 0 {
		tail.Note = "no sessions"
	}
	return p.finish(tail), nil
}

type sessionArgs struct {
	Session string `json:"session"`
	paging
}

func (a sessionArgs) paged() sessionArgs { a.paging = paging{}; return a }

// headJSON is get_session's answer before its table.
type headJSON struct {
	Session        string   `json:"session"`
	Agent          string   `json:"agent"`
	Title          string   `json:"title"`
	Summary        string   `json:"summary"`
	SummaryClipped bool     `json:"summary_clipped,omitempty"`
	Project        string   `json:"project,omitempty"`
	Started        string   `json:"started,omitempty"`
	Ended          string   `json:"ended,omitempty"`
	Messages       int      `json:"messages"`
	Model          string   `json:"model,omitempty"`
	GitBranch      string   `json:"git_branch,omitempty"`
	ForkedFrom     string   `json:"forked_from,omitempty"`
	SidechainOf    string   `json:"sidechain_of,omitempty"`
	Sidechains     []string `json:"sidechains,omitempty"`
	SidechainCount int      `json:"sidechain_count,omitempty"`
	Engagements    []string `json:"engagements,omitempty"`
	Rounds         int      `json:"rounds"`
}

type roundJSON struct {
	Round      int    `json:"round"`
	Time       string `json:"time"`
	Engagement string `json:"engagement,omitempty"`
	Tools      int    `json:"tools,omitempty"`
	User       string `json:"user"`
	Agent      string `json:"agent"`
}

func (s *Server) getSession(ctx context.Context, a sessionArgs) (string, error) {
	d, err := s.store.Resolve(a.Session)
	if err != nil {
		return "", err
	}
	from, _, err := readCursor(a.Cursor, "get_session", a.paged())
	if err != nil {
		return "", err
	}
	h, err := s.store.Head(d)
	if err != nil {
		return "", err
	}
	table, err := s.store.Table(ctx, d)
	if err != nil {
		return "", err
	}
	m := h.Meta
	head := headJSON{Session: d.Key, Agent: m.AgentID, Title: clip(h.Title, titleBytes), Summary: clip(h.Summary, summaryBytes),
		SummaryClipped: len(h.Summary) > summaryBytes, Project: clip(deref(m.Project), projectBytes), Started: deref(m.Started),
		Ended: deref(m.Ended), Messages: m.Messages, Model: clip(deref(m.Model), titleBytes), GitBranch: clip(deref(m.GitBranch), titleBytes),
		ForkedFrom: clip(deref(m.ForkedFrom), titleBytes), Rounds: max(d.Rounds, len(table))}
	if m.SidechainOf != nil {
		head.SidechainOf = clip(m.SidechainOf.SessionID, titleBytes+10)
	}
	for i, sc := range m.Sidechains {
		if i < sidechainsAt {
			head.Sidechains = append(head.Sidechains, clip(d.Key+"/agent-"+sc.AgentID, 2*titleBytes+10))
		}
	}
	if len(m.Sidechains) > sidechainsAt {
		head.SidechainCount = len(m.Sidechains)
	}
	for i, e := range m.Engagements {
		if i == 10 {
			head.Engagements = append(head.Engagements, fmt.Sprintf("... and %d more", len(m.Engagements)-10))
			break
		}
		head.Engagements = append(head.Engagements, clip(e.ID, titleBytes))
	}
	p := newListPage(a.budget(), head, "table")
	i := 0
	for i < len(table) && table[i].Round < from {
		i++
	}
	for ; i < len(table); i++ {
		r := table[i]
		if !p.add(roundJSON{Round: r.Round, Time: r.Started, Engagement: clip(r.Engagement, titleBytes), Tools: r.Tools,
			User: clip(r.User, previewBytes), Agent: clip(r.Agent, previewBytes)}) {
			break
		}
	}
	tail := pageTail{}
	if i < len(table) {
		tail.Next = makeCursor("get_session", a.paged(), table[i].Round, 0)
		tail.Note = "more rounds in the table: call get_session again with the same session and cursor: next_cursor"
	}
	return p.finish(tail), nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

type readArgs struct {
	Session string    `json:"session"`
	Rounds  roundSpec `json:"rounds"`
	Detail  string    `json:"detail,omitempty"`
	paging
}

func (a readArgs) paged() readArgs {
	a.paging = paging{}
	if a.Detail == "" {
		a.Detail = "conversation"
	}
	return a
}

// moreLine ends a markdown result that goes on: where, and the cursor.
func moreLine(tool, where, cursor string) string {
	return fmt.Sprintf("\n\n[more: %s; call %s again with the same arguments and cursor %q]\n", where, tool, cursor)
}

// resolve reads a session argument and a detail level.
func (s *Server) resolve(session, detail string) (Doc, document.Detail, error) {
	dl, err := document.ParseDetail(detail)
	if err != nil {
		return Doc{}, 0, err
	}
	d, err := s.store.Resolve(session)
	return d, dl, err
}

// selectRounds reads a round selection of a session.
func (s *Server) selectRounds(d Doc, spec roundSpec) ([]int, error) {
	rounds, err := s.store.Rounds(d, string(spec))
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", d.Key, err)
	}
	return rounds, nil
}

func (s *Server) readRounds(ctx context.Context, a readArgs) (string, error) {
	d, detail, err := s.resolve(a.Session, a.paged().Detail)
	if err != nil {
		return "", err
	}
	rounds, err := s.selectRounds(d, a.Rounds)
	if err != nil {
		return "", err
	}
	at, off, err := readCursor(a.Cursor, "read_rounds", a.paged())
	if err != nil {
		return "", err
	}
	var todo []int
	for _, r := range rounds {
		if r >= at {
			todo = append(todo, r)
		}
	}
	if len(todo) == 0 {
		return "", fmt.Errorf("cursor %q is past the last round asked for", a.Cursor)
	}
	if todo[0] != at {
		off = 0
	}
	budget := a.budget()
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# Session %s: rounds %s of %d (detail %s)\n", d.Key, a.Rounds, d.Rounds, detail)
	var more string
	err = s.store.Read(d, todo, detail, func(round int, text []byte) bool {
		if off > len(text) {
			off = len(text)
		}
		head := fmt.Sprintf("\n## Round %d\n", round)
		if off > 0 {
			head = fmt.Sprintf("\n## Round %d (from byte %d of %d)\n", round, off, len(text))
		}
		room := budget - buf.Len() - len(head) - tailRoom
		rest := text[off:]
		if len(bytes.TrimSpace(rest)) == 0 && off == 0 {
			rest = []byte("\n_(nothing at this detail)_\n")
		}
		n := cutAt(rest, room)
		if n == 0 {
			if round == todo[0] {
				// Nothing fits: cannot happen with a page of MinBudget.
				more = moreLine("read_rounds", fmt.Sprintf("round %d does not fit", round), makeCursor("read_rounds", a.paged(), round, off))
				return false
			}
			more = moreLine("read_rounds", fmt.Sprintf("round %d and after", round), makeCursor("read_rounds", a.paged(), round, 0))
			return false
		}
		buf.WriteString(head)
		buf.Write(rest[:n])
		if n < len(rest) {
			next := off + n
			more = moreLine("read_rounds", fmt.Sprintf("round %d goes on at byte %d of %d", round, next, len(text)), makeCursor("read_rounds", a.paged(), round, next))
			return false
		}
		off = 0
		return true
	})
	if err != nil {
		return "", err
	}
	if !bytes.HasSuffix(buf.Bytes(), []byte("\n")) {
		buf.WriteByte('\n')
	}
	buf.WriteString(strings.TrimPrefix(more, "\n"))
	return buf.String(), nil
}

type contextArgs struct {
	Session    string `json:"session"`
	Full       string `json:"full,omitempty"`
	Ref        string `json:"ref,omitempty"`
	Omit       string `json:"omit,omitempty"`
	Engagement string `json:"engagement,omitempty"`
	Detail     string `json:"detail,omitempty"`
	paging
}

func (a contextArgs) paged() contextArgs {
	a.paging = paging{}
	if a.Detail == "" {
		a.Detail = "full"
	}
	return a
}

func (s *Server) context(ctx context.Context, a contextArgs) (string, error) {
	d, detail, err := s.resolve(a.Session, a.paged().Detail)
	if err != nil {
		return "", err
	}
	off, _, err := readCursor(a.Cursor, "context", a.paged())
	if err != nil {
		return "", err
	}
	view, err := s.store.Context(d, ContextSpec{Full: a.Full, Ref: a.Ref, Omit: a.Omit, Engagement: a.Engagement, Detail: detail})
	if err != nil {
		return "", fmt.Errorf("session %s: %w", d.Key, err)
	}
	if off > len(view) {
		return "", fmt.Errorf("cursor %q is past the end of the view", a.Cursor)
	}
	var buf bytes.Buffer
	if off > 0 {
		fmt.Fprintf(&buf, "[context of session %s, from byte %d of %d]\n\n", d.Key, off, len(view))
	}
	rest := view[off:]
	n := cutAt(rest, a.budget()-buf.Len()-tailRoom)
	buf.Write(rest[:n])
	if n < len(rest) {
		if !bytes.HasSuffix(buf.Bytes(), []byte("\n")) {
			buf.WriteByte('\n')
		}
		buf.WriteString(strings.TrimPrefix(moreLine("context", fmt.Sprintf("the view goes on at byte %d of %d", off+n, len(view)), makeCursor("context", a.paged(), off+n, 0)), "\n"))
	}
	return buf.String(), nil
}
