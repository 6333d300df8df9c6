package main

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/scribe-archive/scribe/inscribe/document"
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
func readEntry(md string) (sessionEntry, error) {
	m, title, err := document.ReadTitle(md)
	if err != nil {
		return sessionEntry{}, err
	}
	return sessionEntry{SessionID: m.SessionID, AgentID: m.AgentID, Title: title, Project: strOr(m.Project),
		Started: strOr(m.Started), Ended: strOr(m.Ended), Messages: m.Messages, Path: md}, nil
}

func strOr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

type listOptions struct {
	agent, project, since string
}

func newListCmd(e *env) *cobra.Command {
	var o listOptions
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the sessions in the store, newest first",
		Long: `list shows the sessions in the store, newest first: the session id, its
agent, when it started, how many messages it has, its project and its
title (else its first prompt). It reads only the head of each document.

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
	f.BoolVar(&e.json, "json", false, "print the sessions as JSON")
	return cmd
}

func runList(e *env, o listOptions) error {
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
	if e.json {
		return writeJSON(e.stdout, entries)
	}
	if len(entries) == 0 {
		fmt.Fprintln(e.stdout, "no sessions")
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SESSION\tAGENT\tSTARTED\tMESSAGES\tPROJECT\tTITLE")
	for _, en := range entries {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", en.SessionID, en.AgentID, shortTime(en.Started), en.Messages, orDash(en.Project), en.Title)
	}
	return tw.Flush()
}

// listEntries returns the sessions of the store that list shows, newest
// first: those of agent, whose project contains project, started at or
// after since (each filter unset when zero). A document it cannot read is
// left out with a warning on stderr.
func listEntries(e *env, store *views.Views, agent, project string, since time.Time) ([]sessionEntry, error) {
	docs, err := sessionDocs(store)
	if err != nil {
		return nil, err
	}
	entries := []sessionEntry{}
	agents := map[string]bool{}
	for _, md := range docs {
		en, err := readEntry(md)
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

// startedSince reports whether a session that started at started (RFC 3339)
// started at or after t. A session whose start is unknown did not.
func startedSince(started string, t time.Time) bool {
	s, err := time.Parse(time.RFC3339Nano, started)
	return err == nil && !s.Before(t)
}

// shortTime shows an RFC 3339 time to the minute: 2026-11-22 09:26.
func shortTime(ts string) string {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return orDash(ts)
	}
	return t.UTC().Format("2006-01-02 15:04")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func newShowCmd(e *env) *cobra.Command {
	var path bool
	cmd := &cobra.Command{
		Use:   "show SESSION",
		Short: "Print a session's document (or its path)",
		Long: `show prints the document of a session: markdown with YAML frontmatter.
SESSION is a session id, a unique prefix of one, or a document's path.

With --path it prints the document's path instead. With --json it prints
the session as list --json does, one object:
  {"session_id", "agent_id", "title", "project", "started", "ended",
   "messages", "path"}`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeSession(e),
		RunE: func(cmd *cobra.Command, args []string) error {
			md, err := findDocument(e, args[0])
			if err != nil {
				return err
			}
			switch {
			case e.json:
				en, err := readEntry(md)
				if err != nil {
					return err
				}
				return writeJSON(e.stdout, en)
			case path:
				_, err := fmt.Fprintln(e.stdout, md)
				return err
			}
			f, err := os.Open(md)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.WriteTo(e.stdout)
			return err
		},
	}
	cmd.Flags().BoolVar(&path, "path", false, "print the document's path, not the document")
	cmd.Flags().BoolVar(&e.json, "json", false, "print the session as JSON")
	return cmd
}
