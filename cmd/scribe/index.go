package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/scribe-archive/scribe/index"
	"github.com/scribe-archive/scribe/inscribe"
)

func newReindexCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "reindex",
		Short: "Rebuild every index of the store from the round files",
		Long: `reindex rebuilds each document's session.db and index.md and the store's
sessions.db from the round files and the engagement tags kept in each
document's tags.tsv. The result is the same as the indexes inscribe and
append keep up to date.

With --json the report is one object on stdout:
  {"documents": N, "warnings": [...]}`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := e.openExistingStore()
			if err != nil {
				return err
			}
			start := time.Now()
			warnings, err := store.Reindex()
			if !e.json {
				printWarnings(e, warnings)
			}
			if cerr := store.CloseIndex(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			docs, _ := store.Docs()
			if e.json {
				rep := reindexJSON{Documents: len(docs), Warnings: []string{}}
				for _, w := range warnings {
					rep.Warnings = append(rep.Warnings, w.Error())
				}
				return writeJSON(e.stdout, rep)
			}
			fmt.Fprintf(e.stdout, "reindexed %d %s in %s\n", len(docs), plural(len(docs), "document", "documents"), time.Since(start).Round(time.Millisecond))
			return nil
		},
	}
	cmd.Flags().BoolVar(&e.json, "json", false, "print the report as JSON")
	return cmd
}

// reindexJSON is the report of reindex --json.
type reindexJSON struct {
	Documents int      `json:"documents"` // how many documents were indexed, sidechains included
	Warnings  []string `json:"warnings"`
}

type searchOptions struct {
	q    index.Query
	json bool
}

func newSearchCmd(e *env) *cobra.Command {
	var o searchOptions
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Search every round of the store",
		Long: `search finds the rounds whose text (prompts, replies, thinking, tool
inputs) matches QUERY, best first. QUERY uses SQLite FTS5 syntax: words,
"a phrase", prefix*, AND, OR, NOT, NEAR(a b, 5), and parentheses.

Each hit shows the session's title, the round, its time, a snippet with the
matching words marked, and where to read it: the document and the round's
anchor.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.q.Text = args[0]
			return runSearch(e, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.q.Agent, "agent", "", "only sessions of this agent id")
	f.StringVar(&o.q.Project, "project", "", "only sessions whose project directory contains this")
	f.StringVar(&o.q.Since, "since", "", "only rounds started at or after this date or time (ISO 8601)")
	f.StringVar(&o.q.Until, "until", "", "only rounds started before this date or time (ISO 8601)")
	f.StringVar(&o.q.Engagement, "engagement", "", "only rounds tagged with this engagement")
	f.IntVar(&o.q.Limit, "limit", 20, "at most this many hits")
	f.BoolVar(&o.json, "json", false, "print the hits as JSON")
	return cmd
}

func runSearch(e *env, o searchOptions) error {
	store, err := e.openExistingStore()
	if err != nil {
		return err
	}
	defer store.CloseIndex()
	warnings, err := store.EnsureIndex()
	printWarnings(e, warnings)
	if err != nil {
		return err
	}
	hits, err := store.Search(o.q)
	var qe *index.QueryError
	if errors.As(err, &qe) {
		return withHint(fmt.Errorf("search: %s is not a valid query: %s", quoteArg(qe.Query), qe.Msg),
			`put words with punctuation in double quotes: scribe search '"foo-bar" OR baz'`,
			"see https://sqlite.org/fts5.html#full_text_query_syntax")
	}
	if err != nil {
		return err
	}
	if o.json {
		for i := range hits {
			hits[i].Snippet = strings.NewReplacer(index.HighlightStart, "", index.HighlightEnd, "").Replace(hits[i].Snippet)
		}
		if hits == nil {
			hits = []inscribe.Hit{}
		}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(hits)
	}
	if len(hits) == 0 {
		fmt.Fprintln(e.stdout, "no rounds match")
		return nil
	}
	mark := strings.NewReplacer(index.HighlightStart, "«", index.HighlightEnd, "»", "\n", " ", "\r", " ")
	for _, h := range hits {
		title := h.Title
		if title == "" {
			title = h.SessionID
		}
		eng := ""
		if h.EngagementID != nil {
			eng = " · " + *h.EngagementID
		}
		fmt.Fprintf(e.stdout, "%s · round %d · %s%s\n    %s\n    %s\n\n", title, h.Round, h.Started, eng, mark.Replace(h.Snippet), h.Path)
	}
	return nil
}

func quoteArg(s string) string { b, _ := json.Marshal(s); return string(b) }

func newTagCmd(e *env, untag bool) *cobra.Command {
	use, short := "tag SESSION ROUNDS ENGAGEMENT", "Tag rounds of a session with an engagement"
	nargs := 3
	if untag {
		use, short, nargs = "untag SESSION ROUNDS", "Remove the engagement tag of rounds of a session", 2
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Long: short + `.

ROUNDS is a round number, a range (3-7), all, or a comma list of those.
Tags live in the document's tags.tsv (durable, readable, survives reindex),
in both indexes, in the document's index.md, and the frontmatter's
engagements list follows them.

With --json the report is one object on stdout:
  {"path", "engagement", "rounds": [...], "changed": N}
where engagement is null for untag, rounds are the rounds named and
changed counts those whose tag changed.`,
		Args: cobra.ExactArgs(nargs),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, md, err := openDocument(e, args[0])
			if err != nil {
				return err
			}
			defer store.CloseIndex()
			engagement := ""
			if !untag {
				engagement = args[2]
				if !inscribe.ValidEngagement(engagement) {
					return fmt.Errorf("engagement %q: use only letters, digits and the characters - _ . / : in it", engagement)
				}
			}
			n, err := inscribe.RoundCount(md)
			if err != nil {
				return err
			}
			rounds, err := inscribe.ParseRounds(args[1], n)
			if err != nil {
				return fmt.Errorf("%s: %w", md, err)
			}
			changed, err := store.Tag(md, rounds, engagement)
			if err != nil {
				return err
			}
			if e.json {
				rep := tagJSON{Path: md, Rounds: rounds, Changed: changed}
				if !untag {
					rep.Engagement = &engagement
				}
				if rep.Rounds == nil {
					rep.Rounds = []int{}
				}
				return writeJSON(e.stdout, rep)
			}
			verb := "tagged"
			if untag {
				verb = "untagged"
			}
			fmt.Fprintf(e.stdout, "%s %d of %d %s of %s\n", verb, changed, len(rounds), plural(len(rounds), "round", "rounds"), md)
			return nil
		},
	}
	cmd.Flags().BoolVar(&e.json, "json", false, "print the report as JSON")
	return cmd
}

// tagJSON is the report of tag and untag --json.
type tagJSON struct {
	Path       string  `json:"path"`
	Engagement *string `json:"engagement"` // null: untag
	Rounds     []int   `json:"rounds"`
	Changed    int     `json:"changed"`
}

func newContextCmd(e *env) *cobra.Command {
	var spec inscribe.ContextSpec
	cmd := &cobra.Command{
		Use:   "context SESSION",
		Short: "Write a view of a session for a successor: chosen rounds in full, others as references",
		Long: `context writes to stdout a markdown view of a session (Method 53, Layer 3):
rounds chosen with --full (or tagged with --engagement) at full fidelity,
rounds chosen with --ref as one-line references to the index, rounds chosen
with --omit left out. When --full or --engagement is given, the other
rounds are references; otherwise every round is in full. --omit wins over
--full, which wins over --ref. It reads the round files and writes nothing.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, md, err := openDocument(e, args[0])
			if err != nil {
				return err
			}
			defer store.CloseIndex()
			return store.Context(md, spec, e.stdout)
		},
	}
	cmd.Flags().StringVar(&spec.Full, "full", "", "rounds to show in full (3, 3-7, all, 1,4-6)")
	cmd.Flags().StringVar(&spec.Ref, "ref", "", "rounds to show as one-line references")
	cmd.Flags().StringVar(&spec.Omit, "omit", "", "rounds to leave out")
	cmd.Flags().StringVar(&spec.Engagement, "engagement", "", "show the rounds tagged with this engagement in full")
	return cmd
}
