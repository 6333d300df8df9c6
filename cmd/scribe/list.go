package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/inscribe/views"
)

// sessionEntry is a session as list and show --json report it.
type sessionEntry struct {
	SessionID string `json:"session_id"`
	AgentID   string `json:"agent_id"`
	// Title is the session's title, else its first prompt
	// (document.DisplayTitle).
	Title    string `json:"title"`
	Project  string `json:"project"` // "" when unknown
	Started  string `json:"started"` // RFC 3339, UTC; "" when unknown
	Ended    string `json:"ended"`   // same
	Messages int    `json:"messages"`
	Path     string `json:"path"` // the document
}

// readEntry reads a session's entry from its document's head.
func readEntry(d *inscribe.Doc) (sessionEntry, error) {
	m, err := d.Meta()
	if err != nil {
		return sessionEntry{}, err
	}
	return sessionEntry{SessionID: m.SessionID, AgentID: m.AgentID, Title: d.Title(), Project: strOr(m.Project),
		Started: strOr(m.Started), Ended: strOr(m.Ended), Messages: m.Messages, Path: d.Path()}, nil
}

func strOr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

type listOptions struct {
	agent, project, since string
	limit                 int
	utc, noPager          bool
}

// listLimit is how many sessions list shows on a terminal unless --limit
// says otherwise; elsewhere (a script, a pipe) it shows them all.
const listLimit = 50

func newListCmd(e *env) *cobra.Command {
	var o listOptions
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the sessions in the store, newest first",
		Long: `list shows the sessions in the store, newest first: the session id (as
short as it is unique, at least 8 characters, which every command
accepts), when it started, how many messages it has, its agent, its
project and its title (else its first prompt). It reads only the head of
each document.

Times are in your time zone, which the header names (TZ chooses it), or
in UTC with --utc. Lines are cut to the terminal's width (to $COLUMNS when
stdout is not a terminal and COLUMNS is set; else they are whole). On a
terminal, list shows the newest 50 sessions unless --limit says otherwise
(--limit 0: all), and goes through your pager as show does.

With --json it prints a list of objects, [] when there is none:
  {"session_id", "agent_id", "title", "project", "started", "ended",
   "messages", "path"}
where started and ended are RFC 3339 times in UTC ("" when unknown) and
path is the document.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runList(e, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.agent, "agent", "", "only sessions filed under this agent id")
	f.StringVar(&o.project, "project", "", "only sessions whose project directory contains this")
	f.StringVar(&o.since, "since", "", "only sessions started at or after this: "+whenForms)
	f.IntVar(&o.limit, "limit", -1, "at most this many sessions, newest first (0: all; default 50 on a terminal, else all)")
	f.BoolVar(&o.utc, "utc", false, "show times in UTC, not in your time zone")
	f.BoolVar(&o.noPager, "no-pager", false, "write to the terminal, not through a pager")
	f.BoolVar(&e.json, "json", false, "print the sessions as JSON")
	return cmd
}

func runList(e *env, o listOptions) error {
	if o.limit < -1 {
		return &flagError{fmt.Errorf("--limit %d: give 0 for all sessions, or how many to show", o.limit)}
	}
	var since time.Time
	if o.since != "" {
		t, err := parseWhen(o.since, clock())
		if err != nil {
			return &flagError{fmt.Errorf("--since: %w; use %s", err, whenForms)}
		}
		since = t
	}
	store, err := e.openExistingStore()
	if err != nil {
		return err
	}
	entries, err := listEntries(e, store, o.agent, o.project, since)
	if err != nil {
		return err
	}
	ids := shortIDs(entries)
	limit := o.limit
	if limit < 0 {
		limit = 0
		if _, ok := terminalOf(e.stdout); ok && !e.json {
			limit = listLimit
		}
	}
	more := 0
	if limit > 0 && len(entries) > limit {
		more = len(entries) - limit
		entries = entries[:limit]
	}
	if e.json {
		return writeJSON(e.stdout, entries)
	}
	if len(entries) == 0 {
		fmt.Fprintln(e.stdout, "no sessions")
		return nil
	}
	p := e.startPager(o.noPager)
	err = writeList(p, entries, ids, zone(o.utc), e.outputWidth())
	if err == nil && more > 0 {
		_, err = fmt.Fprintf(p, "… and %d more (--limit 0 lists them all)\n", more)
	}
	return p.finish(err)
}

// listEntries returns the sessions of the store that list shows, newest
// first: those of agent, whose project contains project, started at or
// after since (each filter unset when zero). A document it cannot read is
// left out with a warning on stderr.
func listEntries(e *env, store *views.Views, agent, project string, since time.Time) ([]sessionEntry, error) {
	docs, err := store.Docs()
	if err != nil {
		return nil, err
	}
	entries := []sessionEntry{}
	agents := map[string]bool{}
	for _, d := range docs {
		en, err := readEntry(d)
		if err != nil {
			fmt.Fprintf(e.stderr, "scribe: warning: %v (scribe check --store tells more)\n", err)
			continue
		}
		agents[en.AgentID] = true
		if agent != "" && en.AgentID != agent ||
			project != "" && !strings.Contains(en.Project, project) ||
			!since.IsZero() && !startedSince(en.Started, since) {
			continue
		}
		entries = append(entries, en)
	}
	if agent != "" && !agents[agent] {
		hint := "the store has no sessions"
		if len(agents) > 0 {
			hint = "the store's agents: " + strings.Join(slices.Sorted(maps.Keys(agents)), ", ")
		}
		return nil, withHint(fmt.Errorf("no agent %s in %s", agent, store.SessionsDir()), hint)
	}
	sort.SliceStable(entries, func(i, j int) bool {
		a, b := entries[i], entries[j]
		if a.Started != b.Started {
			return a.Started > b.Started // RFC 3339 in UTC sorts as time
		}
		return a.SessionID < b.SessionID
	})
	return entries, nil
}

// writeList writes the sessions as a table no wider than width (0: no
// limit): the session's short id, its start, its messages, its agent, its
// project (the last part of its path) and its title, which is cut first;
// the project goes when the title would have less than 20 columns.
func writeList(w io.Writer, entries []sessionEntry, ids map[string]string, z *time.Location, width int) error {
	type row struct{ id, started, msgs, agent, project, title string }
	zoneName := time.Now().In(z).Format("MST")
	head := row{"SESSION", "STARTED (" + zoneName + ")", "MSGS", "AGENT", "PROJECT", "TITLE"}
	rows := []row{head}
	for _, en := range entries {
		rows = append(rows, row{ids[en.SessionID], localTime(en.Started, z), strconv.Itoa(en.Messages), en.AgentID, projectName(en.Project), oneLine(en.Title)})
	}
	var wid row
	cw := func(have *string, s string) {
		if cells(s) > cells(*have) {
			*have = s
		}
	}
	for _, r := range rows {
		cw(&wid.id, r.id)
		cw(&wid.started, r.started)
		cw(&wid.msgs, r.msgs)
		cw(&wid.agent, r.agent)
		cw(&wid.project, r.project)
	}
	wID, wStarted, wMsgs, wAgent, wProject := cells(wid.id), cells(wid.started), cells(wid.msgs), cells(wid.agent), cells(wid.project)
	const gap = 2
	fixed := wID + gap + wStarted + gap + wMsgs + gap + wAgent + gap
	showProject := true
	wTitle := 0 // no limit
	if width > 0 {
		// The last column is left free: a line that fills the width
		// exactly wraps on some terminals.
		room := width - 1 - fixed
		wProject = min(wProject, max(room/3, len("PROJECT")), 30)
		if room-wProject-gap < 20 {
			showProject = false
			wTitle = max(room, len("TITLE"))
		} else {
			wTitle = room - wProject - gap
		}
	}
	var b strings.Builder
	for _, r := range rows {
		b.Reset()
		b.WriteString(pad(fit(r.id, wID), wID) + "  ")
		b.WriteString(pad(r.started, wStarted) + "  ")
		b.WriteString(strings.Repeat(" ", wMsgs-cells(r.msgs)) + r.msgs + "  ")
		b.WriteString(pad(fit(r.agent, wAgent), wAgent) + "  ")
		if showProject {
			b.WriteString(pad(fit(r.project, wProject), wProject) + "  ")
		}
		title := r.title
		if wTitle > 0 {
			title = fit(title, wTitle)
		}
		b.WriteString(title)
		if _, err := io.WriteString(w, strings.TrimRight(b.String(), " ")+"\n"); err != nil {
			return err
		}
	}
	return nil
}

// shortIDs gives each session the shortest prefix of its id, at least 8
// characters, that no other session of the list shares (git's short
// hashes): every command takes it for the id.
func shortIDs(entries []sessionEntry) map[string]string {
	ids := make([]string, len(entries))
	for i, en := range entries {
		ids[i] = en.SessionID
	}
	slices.Sort(ids)
	out := make(map[string]string, len(ids))
	for i, id := range ids {
		n := min(8, len(id))
		for _, other := range []int{i - 1, i + 1} {
			if other < 0 || other >= len(ids) || ids[other] == id {
				continue
			}
			n = max(n, min(commonPrefix(id, ids[other])+1, len(id)))
		}
		out[id] = id[:n]
	}
	return out
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// localTime shows an RFC 3339 time to the minute in zone z:
// 2026-11-22 10:26.
func localTime(ts string, z *time.Location) string {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return orDash(oneLine(ts))
	}
	return t.In(z).Format("2006-01-02 15:04")
}

// projectName is the last part of a project's path, which is what tells
// projects apart at a glance (list --json has the whole path).
func projectName(p string) string {
	p = strings.TrimRight(p, `/\`)
	if i := strings.LastIndexAny(p, `/\`); i >= 0 && i < len(p)-1 {
		p = p[i+1:]
	}
	return orDash(oneLine(p))
}

// oneLine collapses white space (line ends included) to single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// pad fills s with spaces to n columns.
func pad(s string, n int) string { return s + strings.Repeat(" ", max(0, n-cells(s))) }

// fit cuts s to at most n columns, ending in … when it was cut.
func fit(s string, n int) string {
	if cells(s) <= n {
		return s
	}
	var b strings.Builder
	used := 0
	for _, r := range s {
		c := runeCells(r)
		if used+c > n-1 {
			break
		}
		b.WriteRune(r)
		used += c
	}
	return b.String() + "…"
}

// cells is how many columns of a terminal s takes.
func cells(s string) int {
	n := 0
	for _, r := range s {
		n += runeCells(r)
	}
	return n
}

// runeCells is how many columns a character takes: none for a control, a
// combining mark or a zero-width character, two for the wide and
// fullwidth characters of East Asian scripts and for emoji, else one.
func runeCells(r rune) int {
	switch {
	case r < 0x20 || r >= 0x7f && r < 0xa0 || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) || unicode.Is(unicode.Cf, r):
		return 0
	case r >= 0x1100 && r <= 0x115f, r >= 0x2e80 && r <= 0xa4cf && r != 0x303f, r >= 0xac00 && r <= 0xd7a3,
		r >= 0xf900 && r <= 0xfaff, r >= 0xfe30 && r <= 0xfe4f, r >= 0xff00 && r <= 0xff60, r >= 0xffe0 && r <= 0xffe6,
		r >= 0x1f300 && r <= 0x1f64f, r >= 0x1f900 && r <= 0x1f9ff, r >= 0x20000 && r <= 0x3fffd:
		return 2
	}
	return 1
}

// startedSince reports whether a session that started at started (RFC 3339)
// started at or after t. A session whose start is unknown did not.
func startedSince(started string, t time.Time) bool {
	s, err := time.Parse(time.RFC3339Nano, started)
	return err == nil && !s.Before(t)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
