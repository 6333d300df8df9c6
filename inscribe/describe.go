package inscribe

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/scribe-archive/scribe/inscribe/document"
	"github.com/scribe-archive/scribe/session"
)

// A document's title and summary are a person's (docs/FORMAT.md §3.5): scribe
// writes a placeholder once and keeps whatever it finds afterwards. SetTitle
// and SetSummary are how an agent or the historian writes them through the
// store (scribe mcp --write): the head is rewritten, the body is copied byte
// for byte, the read note follows the body, and no round file changes, so
// the next append keeps what was written.

// MaxSummary is the longest summary SetSummary writes, in bytes.
const MaxSummary = 64 << 10

// MaxTitle is the longest title SetTitle writes, in bytes.
const MaxTitle = 300

// SetSummary replaces a document's summary with summary (markdown, white
// space around it trimmed), redacted as the store redacts what it
// inscribes. A summary the document's parser would not read back as
// written (one that leaves a code fence open, or holds what reads as a
// message) is refused, as is an empty or overlong one. It reports whether
// the document changed.
func (s *Store) SetSummary(md, summary string) (bool, error) {
	summary = strings.TrimSpace(strings.ReplaceAll(summary, "\r\n", "\n"))
	switch {
	case summary == "":
		return false, errors.New("the summary is empty: give a few sentences of what the session did")
	case len(summary) > MaxSummary:
		return false, fmt.Errorf("the summary is %d bytes long; at most %d are kept: shorten it", len(summary), MaxSummary)
	case !utf8.ValidString(summary):
		return false, errors.New("the summary is not valid UTF-8")
	}
	summary = s.redactText(summary)
	unlock, err := lockDoc(folderOf(md), 0)
	if err != nil {
		return false, err
	}
	defer unlock()
	od, err := readOldDoc(md)
	if err != nil {
		return false, err
	}
	if err := readsBack(od.meta, summary); err != nil {
		return false, err
	}
	od.summary = summary
	return rewriteHead(od, od.meta)
}

// SetTitle sets a document's title (its frontmatter's title: one line of
// text), redacted as the store redacts what it inscribes; an empty title
// clears it. It reports whether the document changed.
func (s *Store) SetTitle(md, title string) (bool, error) {
	title = strings.TrimSpace(title)
	switch {
	case len(title) > MaxTitle:
		return false, fmt.Errorf("the title is %d bytes long; at most %d are kept: shorten it", len(title), MaxTitle)
	case !utf8.ValidString(title):
		return false, errors.New("the title is not valid UTF-8")
	case strings.IndexFunc(title, unicode.IsControl) >= 0:
		return false, errors.New("the title is one line of text: no line breaks or control characters")
	}
	title = s.redactText(title)
	unlock, err := lockDoc(folderOf(md), 0)
	if err != nil {
		return false, err
	}
	defer unlock()
	return s.RewriteHead(md, func(m *session.Meta) {
		m.Title = nil
		if title != "" {
			m.Title = &title
		}
	})
}

// readsBack checks that a document with head m and this summary parses
// back to the same summary, followed by its first message: a summary that
// opens a block it does not close, or holds what reads as a message, would
// hide the messages after it from the parser.
func readsBack(m *session.Meta, summary string) error {
	probe := session.Item{Round: 1, Time: "2026-01-01T00:00:00Z", Role: "user", IDs: []string{"summary-probe"},
		Blocks: []session.Block{{Kind: session.KindText, Text: "probe"}}}
	d := &session.Document{Meta: *m, Summary: summary, Items: []session.Item{probe}}
	got, err := document.Parse(document.Render(d), "summary")
	if err == nil && (got.Summary != summary || len(got.Items) != 1 || !document.Equal(got, d)) {
		err = errors.New("it does not read back as written")
	}
	if err != nil {
		return fmt.Errorf("the summary would break the document (%v): close every code fence and HTML block it opens, and leave out lines of --- followed by ### headings", err)
	}
	return nil
}
