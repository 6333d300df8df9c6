package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/scribe-archive/scribe/index"
	"github.com/scribe-archive/scribe/inscribe/document"
	"github.com/scribe-archive/scribe/inscribe/views"
)

func newReindexCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "reindex",
		Short: "Rebuild every index of the store from the round files",
		Long: `reindex rebuilds each document's index and the store's index from the
round files and the engagement tags kept in each document's tags.tsv, and
writes the catalogs (index.md) again from the documents, mending one a git
merge left conflict markers in. The result is the same as the indexes and
catalogs inscribe and append keep up to date.

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
			if err == nil {
				// The catalogs too: they are derived from the documents.
				var mended []string
				mended, err = store.MendIndexes()
				for _, c := range mended {
					warnings = append(warnings, errMendedCatalog(c))
				}
			}
			if !e.json {
				printWarnings(e, warnings)
			}
			if cerr := store.CloseIndex(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			docs, _ := storedDocs(store)
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
	q            index.Query
	since, until string
	in           string
	json         bool
}

func newSearchCmd(e *env) *cobra.Command {
	var o searchOptions
	cmd := &cobra.Command{
		Use:   "search QUERY...",
		Short: "Search every round of the store",
		Long: `search finds the rounds whose text (prompts, replies, thinking, tool
calls and their output) has every word of QUERY, best first. The words
need no quotes: scribe search No such file is the query "No such file".
Words are searched as they are typed, in any case: hello.py, foo-bar,
src/index.go:42 and AND find themselves (their letters and digits in
order, with only spaces or punctuation between them). A word that ends in
* finds the words that start with it: hel* finds hello and help. Chinese,
Japanese and Korean words are found inside a sentence: 错误 finds
请帮我修复这个错误.

With --fts, QUERY is SQLite FTS5 syntax instead: "a phrase", prefix*, AND,
OR, NOT, NEAR(a b, 5), and parentheses
(https://sqlite.org/fts5.html#full_text_query_syntax).

--in narrows the texts searched: prompts (the person's), replies (the
agent's replies and thinking), tools (tool calls and their output), or
several with commas (--in prompts,replies).

--since and --until take a day (2026-11-22: from midnight UTC), an RFC 3339
time with any offset (2026-11-22T10:26:16+01:00; none means UTC), a span
back from now (30m, 24h, 7d, 2w), today or yesterday (midnight UTC).
--since includes its time, --until does not: --since yesterday --until
today is yesterday's rounds. An --agent, --project or --engagement the
store has never seen is an error that lists the ones it has.

Hits are ranked among the newest 256 rounds that match (or --limit, if
more; and every round where the words are one phrase): first the rounds
where the words are together, in order, as typed; then those where they
are near one another; then the rest. Of each, the rounds where the words
are in a prompt or a reply come before those where they are only in a
tool's text, and then the more relevant first (bm25). Each hit shows the
session's title, the round, its time, a snippet with the matching words
marked (and, when it is not from the prompt, which text it is from), and
where to read it: the document and the round's anchor.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.q.Text = strings.Join(args, " ")
			if o.in != "" {
				in, err := index.ParseTexts(o.in)
				if err != nil {
					return &flagError{fmt.Errorf("--in %s: %w", o.in, err)}
				}
				o.q.In = in
			}
			return runSearch(e, o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.q.Raw, "fts", false, "read QUERY as SQLite FTS5 syntax (AND, OR, NOT, NEAR, \"phrases\")")
	f.StringVar(&o.q.Agent, "agent", "", "only sessions of this agent id")
	f.StringVar(&o.q.Project, "project", "", "only sessions whose project directory contains this")
	f.StringVar(&o.since, "since", "", "only rounds started at or after this time (2026-11-22, RFC 3339, 7d, 24h, yesterday…)")
	f.StringVar(&o.until, "until", "", "only rounds started before this time (same forms as --since)")
	f.StringVar(&o.q.Engagement, "engagement", "", "only rounds tagged with this engagement")
	f.IntVar(&o.q.Limit, "limit", 20, "at most this many hits (1 or more)")
	f.StringVar(&o.in, "in", "", "only these texts of a round: prompts, replies, tools (or several, with commas)")
	cmd.RegisterFlagCompletionFunc("in", cobra.FixedCompletions([]string{"prompts", "replies", "tools"}, cobra.ShellCompDirectiveNoFileComp))
	f.BoolVar(&o.json, "json", false, "print the hits as JSON")
	return cmd
}

func runSearch(e *env, o searchOptions) error {
	if o.q.Limit < 1 {
		return withHint(&flagError{fmt.Errorf("--limit %d: the number of hits to show must be at least 1", o.q.Limit)},
			"the best 20 are shown by default; ask for more with a larger --limit, e.g. --limit 1000")
	}
	t := clock()
	for _, w := range []struct {
		flag, value string
		to          *time.Time
	}{{"--since", o.since, &o.q.Since}, {"--until", o.until, &o.q.Until}} {
		if w.value == "" {
			continue
		}
		var err error
		if *w.to, err = parseWhen(w.value, t); err != nil {
			return &flagError{fmt.Errorf("%s: %w; use %s", w.flag, err, whenForms)}
		}
	}
	if !o.q.Since.IsZero() && !o.q.Until.IsZero() && !o.q.Since.Before(o.q.Until) {
		return &flagError{fmt.Errorf("--since %s is not before --until %s: no round can match",
			o.q.Since.UTC().Format(time.RFC3339Nano), o.q.Until.UTC().Format(time.RFC3339Nano))}
	}
	store, err := e.openExistingStore()
	if err != nil {
		return err
	}
	store.Brief = true // one search, and the process ends
	defer store.CloseIndex()
	warnings, err := store.EnsureSearchable()
	printWarnings(e, warnings)
	if err != nil {
		return err
	}
	hits, err := store.Search(o.q)
	if err := searchError(err); err != nil {
		return err
	}
	if o.json {
		unmark := strings.NewReplacer(index.HighlightStart, "", index.HighlightEnd, "")
		for i := range hits {
			hits[i].Snippet = unmark.Replace(hits[i].Snippet)
		}
		if hits == nil {
			hits = []views.Hit{}
		}
		return writeJSON(e.stdout, hits)
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
		in := ""
		if h.In != "" && h.In != "prompts" {
			in = h.In + ": "
		}
		fmt.Fprintf(e.stdout, "%s · %s · round %d · %s%s\n    %s%s\n    %s\n\n", title, h.AgentID, h.Round, h.Started, eng, in, mark.Replace(h.Snippet), h.Path)
	}
	return nil
}

// searchError words the index's complaints about a query for the person
// who typed it; other errors pass through.
func searchError(err error) error {
	var qe *index.QueryError
	if errors.As(err, &qe) {
		if qe.Raw {
			return withHint(fmt.Errorf("search: %s; drop --fts to search the words literally", qe.Msg),
				"see https://sqlite.org/fts5.html#full_text_query_syntax")
		}
		return err
	}
	var fe *index.FilterError
	if errors.As(err, &fe) {
		what := map[string]string{"agent": "agent %q", "project": "project containing %q", "engagement": "engagement %q"}[fe.Filter]
		msg := "no " + fmt.Sprintf(what, fe.Value) + " in the store; "
		const most = 20
		switch {
		case len(fe.Known) == 0 && fe.Filter == "engagement":
			msg += "no round is tagged with an engagement"
		case len(fe.Known) == 0:
			msg += "it has no sessions"
		case len(fe.Known) > most:
			msg += fmt.Sprintf("known %ss: %s, and %d more", fe.Filter, strings.Join(fe.Known[:most], ", "), len(fe.Known)-most)
		default:
			msg += fmt.Sprintf("known %ss: %s", fe.Filter, strings.Join(fe.Known, ", "))
		}
		return errors.New(msg)
	}
	return err
}

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
		Args:              cobra.ExactArgs(nargs),
		ValidArgsFunction: completeSession(e),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, d, err := openDocument(e, args[0])
			if err != nil {
				return err
			}
			defer store.CloseIndex()
			md := d.Path()
			engagement := ""
			if !untag {
				engagement = args[2]
				if !views.ValidEngagement(engagement) {
					return fmt.Errorf("engagement %q: use only letters, digits and the characters - _ . / : in it", engagement)
				}
			}
			n, err := d.RoundCount()
			if err != nil {
				return err
			}
			rounds, err := views.ParseRounds(args[1], n)
			if err != nil {
				return fmt.Errorf("%s: %w", md, err)
			}
			changed, err := store.Tag(d, rounds, engagement)
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
	var spec views.ContextSpec
	var detail string
	cmd := &cobra.Command{
		Use:   "context SESSION",
		Short: "Write a view of a session for a successor: chosen rounds in full, others as references",
		Long: `context writes to stdout a markdown view of a session for a successor (an
agent, or a person, picking up the work): rounds chosen with --full (or tagged with --engagement) at full fidelity,
rounds chosen with --ref as one-line references to the index, rounds chosen
with --omit left out. When --full or --engagement is given, the other
rounds are references; otherwise every round is in full. --omit wins over
--full, which wins over --ref. --detail says how much of a round in full
is shown: everything (full), the prompts, the replies and one line per
tool call (conversation), or the person's prompts alone (prompts). The
view leaves out the messages' identity comments and anchors, and scribe's
markers, unless --keep-ids. It reads the round files and writes nothing.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeSession(e),
		RunE: func(cmd *cobra.Command, args []string) error {
			detail, err := document.ParseDetail(detail)
			if err != nil {
				return &flagError{err}
			}
			spec.Detail = detail
			store, d, err := openDocument(e, args[0])
			if err != nil {
				return err
			}
			defer store.CloseIndex()
			if err := checkStored(e, d); err != nil {
				return err
			}
			return store.Context(d, spec, e.stdout)
		},
	}
	cmd.Flags().StringVar(&spec.Full, "full", "", "rounds to show in full (3, 3-7, all, 1,4-6)")
	cmd.Flags().StringVar(&spec.Ref, "ref", "", "rounds to show as one-line references")
	cmd.Flags().StringVar(&spec.Omit, "omit", "", "rounds to leave out")
	cmd.Flags().StringVar(&spec.Engagement, "engagement", "", "show the rounds tagged with this engagement in full")
	cmd.Flags().StringVar(&detail, "detail", "full", "how much of a round in full to show: full, conversation or prompts")
	cmd.Flags().BoolVar(&spec.KeepIDs, "keep-ids", false, "keep the messages' identity comments and anchors, and scribe's markers")
	cmd.RegisterFlagCompletionFunc("detail", cobra.FixedCompletions(document.Details, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}
