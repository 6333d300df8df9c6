package document

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/scribe-archive/scribe/session"
)

// PreviewLen is how much of a text a preview keeps, in characters.
const PreviewLen = 120

// Key is a document's key in the indexes: its session id, or
// <session>/agent-<id> for a sidechain.
func Key(m *session.Meta) string {
	if m.ContinuationOf != nil {
		return m.SessionID + "/cont-" + m.ContinuationOf.Key
	}
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

// DisplayTitle is what every list shows for a session (list, show,
// search, the catalogs, the web view): its title (a custom title, or a
// Codex thread's name), else the summary a person wrote in the document,
// else the client's summary of it (Meta.ClientSummary), else the first
// line of its first real prompt with client markup taken out (PromptLine;
// the summary scribe writes while none is written holds it), else its
// key; as a preview. The document keeps the prompt as it was.
func DisplayTitle(m *session.Meta, summary string) string {
	if t := session.Str(m.Title); strings.TrimSpace(t) != "" {
		return Preview(t)
	}
	line := SummaryLine(summary)
	prompt, placeholder := PlaceholderPrompt(line)
	if line != "" && line != NoSummary && !placeholder {
		return Preview(line) // a person's summary
	}
	if t := session.Str(m.ClientSummary); strings.TrimSpace(t) != "" {
		return Preview(t)
	}
	if placeholder {
		// Documents inscribed before the markup was taken out hold the
		// prompt's first line as it was.
		if line, _ = PromptLine(prompt); line != "" {
			return Preview(line)
		}
	}
	return Key(m)
}

// ReplacesSummary reports whether a document's summary (old) is scribe's
// and gives way to the one an update derived (next): no summary yet, or the
// first prompt of a session that had no real prompt (PromptLine) when one
// now has.
func ReplacesSummary(old, next string) bool {
	if old == NoSummary {
		return true
	}
	op, ok := PlaceholderPrompt(SummaryLine(old))
	if !ok || strings.Contains(strings.TrimSpace(old), "\n") {
		return false
	}
	np, ok := PlaceholderPrompt(next)
	if _, oldReal := PromptLine(op); !ok || oldReal {
		return false
	}
	_, nextReal := PromptLine(np)
	return nextReal
}

func SummaryLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// Client markup: what clients write into a person's prompt that no person
// typed. Claude Code wraps a slash command (<command-name>/init</command-name>,
// its <command-message> and <command-args>), the output of a local
// command, a shell command run with ! and its output (<bash-input>,
// <bash-stdout>), what the IDE shows it (<ide_selection>,
// <ide_opened_file>), the caveat it puts before local commands, and system
// reminders; Codex puts an attached image between <image name=…> and
// </image>. markupTags are those whose content is the client's, dropped
// with them.
var markupTags = []string{"system-reminder", "local-command-caveat", "local-command-stdout", "local-command-stderr",
	"bash-input", "bash-stdout", "bash-stderr", "command-message", "command-name", "command-args", "command-contents",
	"ide_selection", "ide_opened_file", "ide_diagnostics", "user-prompt-submit-hook", "image"}

// PromptLine returns what a person's prompt says, on one line, for a
// title: the first line of its text with client markup taken out (a slash
// command with arguments is its name and arguments: "/review PR 12").
// real reports whether the prompt has text a person typed; when it has
// not (a /clear, a shell command run with !, a command's output, an
// interruption), line is the command as typed ("/clear", "! ls"), or "".
// A tag cut off (the first line of a prompt, which a document's summary
// holds) is dropped to the end of the text.
func PromptLine(text string) (line string, real bool) {
	fields := map[string]string{}
	// What is left once the markup is out: enough of it for its first line
	// that is not blank, cut after promptKeep bytes (a prompt of 100 MB
	// was copied whole here; issue 33).
	var rest strings.Builder
	add := func(s string) {
		if rest.Len() >= promptKeep && strings.TrimSpace(rest.String()) != "" {
			return
		}
		if len(s) > promptKeep {
			i := promptKeep
			for i > 0 && !utf8.RuneStart(s[i]) {
				i--
			}
			s = s[:i]
		}
		rest.WriteString(s)
	}
	for text != "" {
		i := strings.IndexByte(text, '<')
		if i < 0 {
			add(text)
			break
		}
		add(text[:i])
		text = text[i:]
		tag, open := "", 0 // the tag, and the length of its opening (attributes included)
		for _, t := range markupTags {
			if after, ok := strings.CutPrefix(text, "<"+t); ok && after != "" && (after[0] == '>' || after[0] == ' ') {
				tag, open = t, len(text) // no '>': cut off
				if i := strings.IndexByte(after, '>'); i >= 0 {
					open = len(text) - len(after) + i + 1
				}
				break
			}
		}
		if tag == "" {
			add("<")
			text = text[1:]
			continue
		}
		body := text[open:]
		end := strings.Index(body, "</"+tag+">")
		if end < 0 {
			end = len(body)
			text = ""
		} else {
			text = body[end+len(tag)+3:]
		}
		if _, ok := fields[tag]; !ok {
			fields[tag] = strings.TrimSpace(body[:end])
		}
	}
	said := strings.TrimSpace(rest.String())
	if strings.HasPrefix(said, "[Request interrupted by user") {
		said = ""
	}
	name, args := fields["command-name"], fields["command-args"]
	if name != "" && !strings.HasPrefix(name, "/") {
		name = "/" + name
	}
	switch {
	case said != "":
		return firstTextLine(said), true
	case name != "" && args != "":
		return firstTextLine(name + " " + args), true
	case name != "":
		return name, false
	case fields["bash-input"] != "":
		return firstTextLine("! " + fields["bash-input"]), false
	}
	return "", false
}

// promptKeep is how much of a prompt's text PromptLine keeps, at least:
// a title shows 120 characters of its first line.
const promptKeep = 4 << 10

// CommandPrompt is a prompt that is the command line PromptLine returned
// for a prompt without text a person typed ("/init", "! ls"), as the
// client marks it up: PromptLine reads it back as that line, not real.
func CommandPrompt(line string) string {
	if rest, ok := strings.CutPrefix(line, "! "); ok {
		return "<bash-input>" + rest + "</bash-input>"
	}
	return "<command-name>" + line + "</command-name>"
}

// firstTextLine is the first line of s that is not blank, trimmed.
func firstTextLine(s string) string {
	for l := range strings.Lines(s) {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}
