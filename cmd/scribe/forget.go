package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"

	"github.com/spf13/cobra"

	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/inscribe/document"
	"github.com/scribe-archive/scribe/inscribe/redact"
)

type forgetOptions struct {
	secret   string
	pattern  string
	sessions []string
}

func newForgetCmd(e *env) *cobra.Command {
	var o forgetOptions
	cmd := &cobra.Command{
		Use:   "forget PATTERN [SESSION...] | forget --secret VALUE [SESSION...]",
		Short: "Remove a secret the detector missed from every file of the store",
		Long: `forget replaces every occurrence of a text in the store with a marker,
[REDACTED:forgotten:<hash>], wherever the text lies: the round files (the
text of each source line kept there; identities and signatures are never
touched), the documents (messages, titles, summaries), the files kept
beside them, the read notes, and then the indexes and catalogs, which are
rebuilt. Each document is rewritten as one batch; running forget again
changes nothing.

PATTERN is a regular expression (Go's syntax, as in RE2); --secret VALUE
is a text taken as it is, found also as a document's markdown escapes it
(a backslash before _, *, [ and the like). With SESSIONs (a session id, a unique prefix of
one, or a document's path), only those sessions and their sidechains.

forget changes the store, not the sessions' sources: while a session goes
on, an append reads its last round again from its source, which still holds
the text. scribe says so when a source still holds it.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if o.secret == "" && len(args) == 0 {
				return &flagError{errors.New("give a PATTERN, or --secret VALUE")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.secret == "" {
				o.pattern, args = args[0], args[1:]
			}
			o.sessions = args
			return runForget(e, o)
		},
	}
	cmd.Flags().StringVar(&o.secret, "secret", "", "the text to forget, taken as it is (not a pattern)")
	cmd.Flags().BoolVar(&e.json, "json", false, "print the report as JSON")
	return cmd
}

// forgetJSON is what forget did to one document.
type forgetJSON struct {
	Session     string   `json:"session"`
	Doc         string   `json:"doc"`
	Occurrences int      `json:"occurrences"`
	Files       []string `json:"files"`
}

func runForget(e *env, o forgetOptions) error {
	expr := o.pattern
	if o.secret != "" {
		// As it is, and as a document's markdown escapes it (a summary's
		// first prompt, a title in a catalog).
		expr = document.InlinePattern(o.secret)
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return &flagError{fmt.Errorf("PATTERN: %w", err)}
	}
	if re.MatchString("") {
		return &flagError{fmt.Errorf("PATTERN %q matches the empty text: it would forget nothing and everything", o.pattern)}
	}
	store, err := e.openExistingStore()
	if err != nil {
		return err
	}
	defer store.CloseIndex()
	st, err := redact.Load(store.Root)
	if err != nil {
		return err
	}
	marker := func(string) string { return "[REDACTED:forgotten]" }
	if st != nil && st.Key != nil {
		r := &redact.Redactor{Key: st.Key}
		marker = func(s string) string { return r.Marker("forgotten", s) }
	}
	replace := func(text string) (string, int) {
		n := 0
		out := re.ReplaceAllStringFunc(text, func(m string) string {
			n++
			return marker(m)
		})
		return out, n
	}
	var docs []*inscribe.Doc
	if len(o.sessions) > 0 {
		docs, err = sessionsToCheck(e, o.sessions)
	} else {
		docs, err = storedDocs(store)
	}
	if err != nil {
		return err
	}
	report := []forgetJSON{}
	total, sessions := 0, map[string]bool{}
	for _, d := range docs {
		md := d.Path()
		m, err := d.Meta()
		if err != nil {
			return err
		}
		f, err := formatOf(m)
		if err != nil {
			return err
		}
		res, err := store.Forget(d, f.adapter, replace)
		if err != nil {
			return err
		}
		if res.Occurrences == 0 {
			continue
		}
		key := document.Key(m)
		report = append(report, forgetJSON{Session: key, Doc: md, Occurrences: res.Occurrences, Files: orEmpty(res.Files)})
		total += res.Occurrences
		sessions[m.SessionID] = true
		if src := d.Source(); sourceHolds(src, re) {
			fmt.Fprintf(e.stderr, "scribe: warning: %s still holds it: while the session goes on, an append reads its last round again from there; remove it from the source too, or forget again after the next append\n", src)
		}
	}
	if total > 0 {
		// The derived views hold the text too: rebuild them from the round
		// files, so that no index keeps it in a free page.
		if _, err := store.Reindex(); err != nil {
			return fmt.Errorf("rebuild the indexes: %w", err)
		}
		if err := store.RefreshIndexes(); err != nil {
			return fmt.Errorf("rewrite the catalogs: %w", err)
		}
	}
	if e.json {
		return writeJSON(e.stdout, report)
	}
	for _, r := range report {
		fmt.Fprintf(e.stdout, "%s: %d %s (%d %s rewritten)\n", r.Session, r.Occurrences, plural(r.Occurrences, "occurrence", "occurrences"), len(r.Files), plural(len(r.Files), "file", "files"))
	}
	fmt.Fprintf(e.stdout, "forgot %d %s in %d %s\n", total, plural(total, "occurrence", "occurrences"), len(sessions), plural(len(sessions), "session", "sessions"))
	return nil
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// sourceHolds reports whether a session's source still holds a match.
func sourceHolds(path string, re *regexp.Regexp) bool {
	data, err := os.ReadFile(path)
	return err == nil && re.Match(data) && !bytes.Equal(data, nil)
}
