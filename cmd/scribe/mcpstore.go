package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/scribe-archive/scribe/index"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/inscribe/document"
	"github.com/scribe-archive/scribe/inscribe/views"
	"github.com/scribe-archive/scribe/serve/mcp"
	"github.com/scribe-archive/scribe/session"
)

// mcpStore is the store as scribe mcp serves it: serve/mcp's Store and
// Writer over the store's read face and the functions the command line
// uses, so that every tool answers what the matching command would.
type mcpStore struct {
	e     *env
	store *views.Views
	root  string

	redactOnce sync.Once // the store's redactor, loaded at the first write
	redactErr  error

	// last is the last long round Read rendered: the pages of a long
	// round render it once, not once a page.
	lastMu sync.Mutex
	last   roundKey
	text   []byte // the last round's text
}

// roundKey names a round rendered at a detail level, from a document that
// had a size and a modification time.
type roundKey struct {
	path    string
	size    int64
	modTime time.Time
	round   int
	detail  document.Detail
}

// longRound is how long a rendered round must be for Read to keep it.
const longRound = 256 << 10

var (
	_ mcp.Store  = (*mcpStore)(nil)
	_ mcp.Writer = (*mcpStore)(nil)
)

// Resolve takes what a SESSION argument takes (an id, a unique prefix, a
// document's path, which must lie in the store), and a sidechain's key.
func (s *mcpStore) Resolve(ref string) (mcp.Doc, error) {
	doc, err := s.resolve(ref)
	if err != nil {
		return mcp.Doc{}, err
	}
	m, err := doc.Meta()
	if err != nil {
		return mcp.Doc{}, s.damage(err)
	}
	n, err := doc.RoundCount()
	if err != nil {
		return mcp.Doc{}, err
	}
	return mcp.Doc{Key: document.Key(m), Path: doc.Path(), Rounds: n}, nil
}

func (s *mcpStore) resolve(ref string) (*inscribe.Doc, error) {
	ref = strings.TrimSpace(ref)
	switch {
	case ref == "":
		return nil, errors.New("session is empty: give a session id, as search or list_sessions report it")
	case strings.HasSuffix(ref, ".md"):
		return s.inStore(ref)
	}
	parent, sub, isSidechain := strings.Cut(ref, "/")
	agent, isAgent := strings.CutPrefix(sub, "agent-")
	if !inscribe.ValidSessionID(parent) || isSidechain && (!isAgent || !inscribe.ValidSessionID(agent)) {
		return nil, fmt.Errorf("%q is neither a session id (%s), a sidechain's key (<session>/agent-<id>) nor a document (.md)", ref, inscribe.SessionIDRule)
	}
	doc, err := s.store.Resolve(parent)
	var nf *inscribe.NotFoundError
	if errors.As(err, &nf) {
		return nil, fmt.Errorf("no session %s in the store: search or list_sessions shows the sessions it has", parent)
	}
	if err != nil {
		return nil, errors.New(withHints(resolveError(err)))
	}
	if !isSidechain {
		return doc, nil
	}
	side, ok := doc.Sidechain(agent)
	if !ok {
		return nil, fmt.Errorf("session %s has no sidechain %s: get_session lists its sidechains", parent, sub)
	}
	return side, nil
}

// inStore resolves a document's path, which must name a document of the
// store: a path elsewhere is not the store's to serve.
func (s *mcpStore) inStore(p string) (*inscribe.Doc, error) {
	abs, err := filepath.Abs(p)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return nil, fmt.Errorf("no document %s: give a session id, as search or list_sessions report it", p)
	}
	dir, err := filepath.EvalSymlinks(s.store.SessionsDir())
	if err != nil {
		return nil, err
	}
	d, err := s.store.Doc(filepath.Join(s.store.SessionsDir(), mustRel(dir, abs)))
	if err != nil || !filepath.IsLocal(mustRel(dir, abs)) {
		return nil, fmt.Errorf("%s is not a session's document in the store at %s: give a session id, as search or list_sessions report it", p, s.store.SessionsDir())
	}
	return d, nil
}

func mustRel(base, p string) string {
	rel, err := filepath.Rel(base, p)
	if err != nil {
		return ".."
	}
	return rel
}

// doc is the document of d.
func (s *mcpStore) doc(d mcp.Doc) (*inscribe.Doc, error) { return s.store.Doc(d.Path) }

// damage words an error reading a document of the store.
func (s *mcpStore) damage(err error) error {
	return fmt.Errorf("%w; the document may be damaged: scribe check --store and scribe repair tell more", err)
}

func (s *mcpStore) Sessions(ctx context.Context, f mcp.SessionFilter) ([]mcp.Session, error) {
	var since time.Time
	if f.Since != "" {
		t, err := parseWhen(f.Since, clock())
		if err != nil {
			return nil, fmt.Errorf("since: %v; use %s", err, whenForms)
		}
		since = t
	}
	entries, err := listEntries(s.e, s.store, f.Agent, f.Project, since)
	if err != nil {
		return nil, errors.New(withHints(err))
	}
	out := make([]mcp.Session, len(entries))
	for i, en := range entries {
		out[i] = mcp.Session{Key: en.SessionID, Agent: en.AgentID, Title: en.Title, Project: en.Project, Started: en.Started, Ended: en.Ended, Messages: en.Messages}
	}
	return out, nil
}

// Search searches as scribe search does, after bringing the store's index
// up to date with the documents it lacks, as scribe search does.
func (s *mcpStore) Search(ctx context.Context, q mcp.Query) ([]mcp.Hit, error) {
	warnings, err := s.store.EnsureSearchable()
	printWarnings(s.e, warnings)
	if err != nil {
		return nil, err
	}
	hits, err := searchAs(s.store, index.Query{Text: q.Text, Raw: q.Raw, Agent: q.Agent, Project: q.Project, Engagement: q.Engagement, Limit: q.Limit}, q.Since, q.Until, q.In)
	if err != nil {
		return nil, err
	}
	mark := strings.NewReplacer(index.HighlightStart, "«", index.HighlightEnd, "»")
	out := make([]mcp.Hit, len(hits))
	for i, h := range hits {
		out[i] = mcp.Hit{Key: h.SessionID, Agent: h.AgentID, Title: h.Title, Project: h.Project, Round: h.Round, Started: h.Started, Snippet: mark.Replace(h.Snippet), In: h.In}
		if h.EngagementID != nil {
			out[i].Engagement = *h.EngagementID
		}
	}
	return out, nil
}

func (s *mcpStore) Rounds(d mcp.Doc, spec string) ([]int, error) {
	return views.ParseRounds(spec, d.Rounds)
}

func (s *mcpStore) Head(d mcp.Doc) (mcp.Head, error) {
	doc, err := s.doc(d)
	if err != nil {
		return mcp.Head{}, err
	}
	h, err := doc.Head()
	if err != nil {
		return mcp.Head{}, s.damage(err)
	}
	return mcp.Head{Meta: h.Meta, Title: document.DisplayTitle(h.Meta, h.Summary), Summary: h.Summary}, nil
}

// Table reads the document's rounds from the store's index, as scribe
// serve lists them. An index found damaged is set aside and built again,
// as a search does.
func (s *mcpStore) Table(ctx context.Context, d mcp.Doc) ([]mcp.Round, error) {
	rows, err := s.tableRows(ctx, d.Key)
	var se *index.StaleError
	if errors.As(err, &se) && se.Damaged {
		warnings, cerr := s.store.CheckStoreIndex()
		printWarnings(s.e, warnings)
		if cerr == nil {
			rows, err = s.tableRows(ctx, d.Key)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%w; scribe reindex rebuilds the index", err)
	}
	out := make([]mcp.Round, len(rows))
	for i, r := range rows {
		out[i] = mcp.Round{Round: r.Round, Started: r.Started, Tools: r.ToolCount, User: r.UserPreview, Agent: r.AgentPreview}
		if r.EngagementID != nil {
			out[i].Engagement = *r.EngagementID
		}
	}
	return out, nil
}

func (s *mcpStore) tableRows(ctx context.Context, key string) ([]index.Row, error) {
	warnings, err := s.store.EnsureSearchable()
	printWarnings(s.e, warnings)
	if err != nil {
		return nil, err
	}
	db, err := index.Open(s.store.IndexPath())
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return db.Rounds(ctx, key, 1)
}

// Read renders rounds as scribe context shows a round in full, reading
// the document a message at a time.
func (s *mcpStore) Read(d mcp.Doc, rounds []int, detail document.Detail, yield func(int, []byte) bool) error {
	doc, err := s.doc(d)
	if err != nil {
		return err
	}
	if err := s.checkStored(doc); err != nil {
		return err
	}
	modTime, size, err := doc.Changed()
	if err != nil {
		return err
	}
	key := roundKey{path: d.Path, size: size, modTime: modTime, detail: detail}
	if len(rounds) > 0 {
		key.round = rounds[0]
		s.lastMu.Lock()
		text := s.text
		if s.last != key {
			text = nil
		}
		s.lastMu.Unlock()
		if text != nil {
			if !yield(rounds[0], text) {
				return nil
			}
			rounds = rounds[1:]
		}
	}
	if len(rounds) == 0 {
		return nil
	}
	want := map[int]bool{}
	last := 0
	for _, r := range rounds {
		want[r] = true
		last = max(last, r)
	}
	r, err := doc.Items()
	if err != nil {
		return s.damage(err)
	}
	defer r.Close()
	cur := 1
	var items []session.Item
	flush := func() bool {
		if !want[cur] {
			return true
		}
		var buf bytes.Buffer
		document.RenderLeanItems(&buf, items, detail, false)
		items = nil
		if buf.Len() >= longRound {
			key.round = cur
			s.lastMu.Lock()
			s.last, s.text = key, buf.Bytes()
			s.lastMu.Unlock()
		}
		return yield(cur, buf.Bytes())
	}
	for {
		it, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return s.damage(err)
		}
		if it.Round > 0 && it.Round != cur {
			if !flush() {
				return nil
			}
			cur, items = it.Round, nil
			if cur > last {
				return nil
			}
		}
		if want[cur] {
			items = append(items, *it)
		}
	}
	flush()
	return nil
}

func (s *mcpStore) Context(d mcp.Doc, spec mcp.ContextSpec) ([]byte, error) {
	doc, err := s.doc(d)
	if err != nil {
		return nil, err
	}
	if err := s.checkStored(doc); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	err = s.store.Context(doc, views.ContextSpec{Full: spec.Full, Ref: spec.Ref, Omit: spec.Omit, Engagement: spec.Engagement, Detail: spec.Detail}, &buf)
	if err != nil {
		var fe *document.FormatError
		if errors.As(err, &fe) {
			return nil, s.damage(err)
		}
		return nil, err
	}
	return buf.Bytes(), nil
}

// checkStored checks, as scribe context does, that the document's round
// files are what its note says.
func (s *mcpStore) checkStored(d *inscribe.Doc) error {
	if err := checkStored(s.e, d); err != nil {
		return fmt.Errorf("%w; scribe repair mends it", err)
	}
	return nil
}

// The writes. Each rewrites the document's head through the store, which
// keeps it through later appends, then brings what is derived from the
// head up to date: the indexes (the title lists and search show) and the
// agent's catalog.

func (s *mcpStore) SetSummary(d mcp.Doc, summary string) (bool, error) {
	return s.describe(d, func() (bool, error) { return s.store.SetSummary(d.Path, summary) })
}

func (s *mcpStore) SetTitle(d mcp.Doc, title string) (bool, error) {
	return s.describe(d, func() (bool, error) { return s.store.SetTitle(d.Path, title) })
}

// describe rewrites a document's head with write, the store's redactor
// given, and brings what is derived from the head up to date.
func (s *mcpStore) describe(d mcp.Doc, write func() (bool, error)) (bool, error) {
	if err := s.redactor(); err != nil {
		return false, err
	}
	changed, err := write()
	if err != nil || !changed {
		return changed, err
	}
	return true, s.headChanged(d)
}

func (s *mcpStore) Tag(d mcp.Doc, rounds []int, engagement string) (int, error) {
	if engagement != "" && !views.ValidEngagement(engagement) {
		return 0, fmt.Errorf("engagement %q: use only letters, digits and the characters - _ . / : in it", engagement)
	}
	doc, err := s.doc(d)
	if err != nil {
		return 0, err
	}
	return s.store.Tag(doc, rounds, engagement)
}

// redactor gives the store the redactor its redact.toml asks for, as
// append would, so that what the write tools write is redacted as what the
// store inscribes is.
func (s *mcpStore) redactor() error {
	s.redactOnce.Do(func() {
		_, s.redactErr = setRedaction(s.root, s.store.Store, redactFlags{}, false)
	})
	return s.redactErr
}

// headChanged brings the views of a document whose head changed up to
// date: its rows in the indexes and its table of rounds (rebuilt, under
// its lock, as a tag does), and its agent's catalog.
func (s *mcpStore) headChanged(d mcp.Doc) error {
	doc, err := s.doc(d)
	if err != nil {
		return err
	}
	unlock, err := doc.Lock(0)
	if err != nil {
		return err
	}
	warnings, err := s.store.IndexDoc(doc, true)
	unlock()
	printWarnings(s.e, warnings)
	if err != nil {
		return fmt.Errorf("the head is written, but its indexes are not (scribe reindex brings them up to date): %w", err)
	}
	agent := doc.Agent()
	if agent == "" {
		return nil
	}
	if err := s.store.RefreshIndexes(agent); err != nil {
		return fmt.Errorf("the head is written, but the catalog of %s is not (the next append brings it up to date): %w", agent, err)
	}
	return nil
}
