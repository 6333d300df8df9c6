package document

import (
	"strings"
	"unicode"

	"github.com/scribe-archive/scribe/session"
)

// PreviewLen is how much of a text a preview keeps, in characters.
const PreviewLen = 120

// Key is a document's key in the indexes: its session id, or
// <session>/agent-<id> for a sidechain.
func Key(m *session.Meta) string {
	if m.SidechainOf != nil {
		return m.SessionID + "/agent-" + m.SidechainOf.AgentID
	}
	return m.SessionID
}

// Preview is the first PreviewLen characters of a text, on one line.
func Preview(s string) string {
	var sb strings.Builder
	n := 0
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			space = sb.Len() > 0
			continue
		}
		if space {
			sb.WriteByte(' ')
			n++
			space = false
		}
		if n == PreviewLen {
			break
		}
		sb.WriteRune(r)
		n++
	}
	return sb.String()
}

// DisplayTitle is what lists show for a session: its title, else the first
// line of its summary (the first prompt, while the summary is scribe's
// placeholder), else its key.
func DisplayTitle(m *session.Meta, summary string) string {
	if t := session.Str(m.Title); strings.TrimSpace(t) != "" {
		return Preview(t)
	}
	line := SummaryLine(summary)
	if prompt, ok := PlaceholderPrompt(line); ok {
		line = prompt
	}
	if line == "" || line == NoSummary {
		return Key(m)
	}
	return Preview(line)
}

func SummaryLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
