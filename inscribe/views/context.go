package views

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/scribe-archive/scribe/index"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/inscribe/document"
	"github.com/scribe-archive/scribe/session"
)

// ContextSpec chooses how each round of a session appears in a context
// view (Method 53, Layer 3): at full fidelity, as a one-line reference to
// the index, or not at all.
type ContextSpec struct {
	Full, Ref, Omit string // round selections (see ParseRounds)
	Engagement      string // rounds tagged with it are shown in full
	// Detail is how much of a round in full is shown; KeepIDs keeps the
	// messages' identity comments and anchors (document.RenderLean).
	Detail  document.Detail
	KeepIDs bool
}

// Context writes a view of a session: a markdown document made of the
// chosen rounds at full fidelity, others as one-line references, others
// omitted. Without a selection, every round is in full. It reads the store
// and never writes to it.
func (s *Views) Context(d *inscribe.Doc, spec ContextSpec, w io.Writer) error {
	doc, err := d.Parse()
	if err != nil {
		return err
	}
	// The rows come from the round files and tags.tsv, as the indexes'
	// do, so that a view writes nothing, not even a stale index.
	rows, err := s.docRows(d, document.Key(&doc.Meta), 1, nil)
	if err != nil {
		return err
	}
	n := len(rows)
	mode := make(map[int]string, n)
	def := "full"
	if spec.Full != "" || spec.Engagement != "" {
		def = "ref"
	}
	for _, r := range rows {
		mode[r.Round] = def
		if spec.Engagement != "" && r.EngagementID != nil && *r.EngagementID == spec.Engagement {
			mode[r.Round] = "full"
		}
	}
	for _, step := range []struct{ sel, m string }{{spec.Ref, "ref"}, {spec.Full, "full"}, {spec.Omit, "omit"}} {
		if step.sel == "" {
			continue
		}
		rs, err := ParseRounds(step.sel, n)
		if err != nil {
			return err
		}
		for _, r := range rs {
			mode[r] = step.m
		}
	}
	byRound := map[int][]session.Item{}
	cur := 1
	for _, it := range doc.Items {
		if it.Round > 0 {
			cur = it.Round
		}
		byRound[cur] = append(byRound[cur], it)
	}
	rel := filepath.ToSlash(d.Path())
	var buf bytes.Buffer
	title := strOr(doc.Meta.Title, "")
	if title == "" {
		title = document.Title(&doc.Meta)
	}
	fmt.Fprintf(&buf, "# Context: %s\n\nSession `%s`, from %s. %s\n\n%s\n", document.EscapeInline(title), document.Key(&doc.Meta), rel, counts(mode), doc.Summary)
	for _, r := range rows {
		switch mode[r.Round] {
		case "full":
			fmt.Fprintf(&buf, "\n## Round %d\n", r.Round)
			document.RenderLeanItems(&buf, byRound[r.Round], spec.Detail, spec.KeepIDs)
		case "ref":
			fmt.Fprintf(&buf, "\n- Round %d, %s%s: %s → %s ([round %d](%s#%s))\n", r.Round, r.Started, engagementNote(r),
				document.EscapeInline(r.UserPreview), document.EscapeInline(r.AgentPreview), r.Round, rel, document.RoundAnchor(r.Round))
		}
	}
	_, err = w.Write(buf.Bytes())
	return err
}

func engagementNote(r index.Row) string {
	if r.EngagementID == nil {
		return ""
	}
	return " [" + document.EscapeInline(*r.EngagementID) + "]"
}

func counts(mode map[int]string) string {
	c := map[string]int{}
	for _, m := range mode {
		c[m]++
	}
	var parts []string
	for _, m := range []string{"full", "ref", "omit"} {
		if c[m] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c[m], map[string]string{"full": "in full", "ref": "as references", "omit": "omitted"}[m]))
		}
	}
	if len(parts) == 0 {
		return "No rounds."
	}
	return "Rounds: " + strings.Join(parts, ", ") + "."
}
