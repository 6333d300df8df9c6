package document

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/scribe-archive/scribe/session"
)

// Reading writes a session for a person at a terminal (scribe show): a
// head that says what the session is, then each round under a line of its
// own and each message under its time and role, with none of scribe's
// identities, markers or HTML. Times are shown in a zone of the caller's
// choosing (the person's own, or UTC), the zone named where the date is.
//
// At DetailConversation a tool call is one line, and what the person
// seldom reads (thinking, the system reminders the model saw, an entry
// shown as recorded) is folded into one line that says it is there. At
// DetailFull they are unfolded: a call's input in its view and its
// result, the thinking, the reminders, the client's notes. DetailPrompts
// shows the person's prompts alone.
//
// Messages are written as they are given ([Reading.Item]), so a document
// read with an [ItemReader] is never whole in memory.
type Reading struct {
	w      io.Writer
	buf    bytes.Buffer
	detail Detail
	zone   *time.Location
	// The last message written under a heading: a message that continues
	// it (a reply the client recorded as several) goes under the same one.
	lastRole, lastNote string
	any                bool
	day                string // the day of the last date written
	tools              bool   // the last thing written is a one-line item
}

// NewReading returns a reading view that writes to w at detail d, with
// times in zone (UTC when nil).
func NewReading(w io.Writer, d Detail, zone *time.Location) *Reading {
	if zone == nil {
		zone = time.UTC
	}
	return &Reading{w: w, detail: d, zone: zone}
}

// Head writes the session's title, what it is (agent, when, how many
// messages, project, model) and its summary when a person wrote one.
func (r *Reading) Head(m *session.Meta, summary string) error {
	b := &r.buf
	b.WriteString("# " + oneLine(DisplayTitle(m, summary)) + "\n\n")
	facts := []string{m.AgentID}
	if m.SidechainOf != nil {
		facts = append(facts, "a subagent of "+m.SidechainOf.SessionID)
	}
	if s := session.Str(m.Started); s != "" {
		when := r.Time(s, "2006-01-02 15:04 MST")
		if e := session.Str(m.Ended); e != "" && e != s {
			layout := "2006-01-02 15:04 MST"
			if r.Time(e, "2006-01-02") == r.Time(s, "2006-01-02") {
				layout = "15:04"
			}
			when += " to " + r.Time(e, layout)
		}
		facts = append(facts, when)
	}
	facts = append(facts, plural(m.Messages, "message"))
	if p := session.Str(m.Project); p != "" {
		facts = append(facts, p)
	}
	if mo := session.Str(m.Model); mo != "" {
		facts = append(facts, mo)
	}
	b.WriteString(strings.Join(facts, " · ") + "\n")
	line := SummaryLine(summary)
	if _, ok := PlaceholderPrompt(line); !ok && line != NoSummary && strings.TrimSpace(summary) != "" {
		b.WriteString("\n" + strings.TrimSpace(summary) + "\n")
	}
	return r.flush()
}

// Time formats an RFC 3339 time in the view's zone with layout; a time
// that does not parse is shown as it is.
func (r *Reading) Time(ts, layout string) string {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return ts
	}
	return t.In(r.zone).Format(layout)
}

// Item writes one message (nothing for one the detail level leaves out).
func (r *Reading) Item(it *session.Item) error {
	if it.Round > 0 {
		r.buf.WriteString(fmt.Sprintf("\n## Round %d", it.Round))
		if it.Time != "" {
			r.buf.WriteString(" · " + r.Time(it.Time, "2006-01-02 15:04 MST"))
			r.day = r.Time(it.Time, "2006-01-02")
		}
		r.buf.WriteByte('\n')
		r.any = false
	}
	blocks := r.blocks(it)
	if blocks == nil {
		return r.flush()
	}
	if !r.any || it.Role != r.lastRole || it.Note != r.lastNote {
		r.heading(it)
	}
	r.any, r.lastRole, r.lastNote = true, it.Role, it.Note
	pr := printer{w: &r.buf, lean: true}
	prevPlain := false
	for i := 0; i < len(blocks); i++ {
		b := blocks[i]
		// A run of reminders (a first prompt has half a dozen) folds
		// into one line that names them.
		if b.Kind == session.KindReminder && r.detail != DetailFull {
			j := i
			var labels []string
			for j < len(blocks) && blocks[j].Kind == session.KindReminder {
				labels = append(labels, reminderLabel(blocks[j]))
				j++
			}
			r.line(fmt.Sprintf("%s: %s", plural(j-i, "system reminder"), strings.Join(labels, ", ")))
			i = j - 1
			prevPlain = false
			continue
		}
		if l, ok := r.folded(b); ok {
			r.line(l)
			prevPlain = false
			continue
		}
		r.tools = false
		r.buf.WriteByte('\n')
		prevPlain = r.block(pr, b, prevPlain)
	}
	return r.flush()
}

// heading writes a message's heading: its time (with its date when the
// day changed since the last one shown) and its role.
func (r *Reading) heading(it *session.Item) {
	r.tools = false
	t := "undated"
	if it.Time != "" {
		t = r.Time(it.Time, "15:04:05")
		if d := r.Time(it.Time, "2006-01-02"); d != r.day {
			t = r.Time(it.Time, "2006-01-02 15:04:05 MST")
			r.day = d
		}
	}
	h := t + " · " + it.Role
	if it.Note != "" {
		h += " · " + it.Note
	}
	r.buf.WriteString("\n### " + oneLine(h) + "\n")
}

// line writes a one-line item: a tool call, or what is folded.
func (r *Reading) line(s string) {
	if !r.tools {
		r.buf.WriteByte('\n')
	}
	r.buf.WriteString("- " + oneLine(s) + "\n")
	r.tools = true
}

// blocks returns the blocks of a message the detail level shows, or nil
// when it shows none of the message.
func (r *Reading) blocks(it *session.Item) []*session.Block {
	prompt := it.Role == "user" && it.Note == ""
	talk := (it.Role == "user" || it.Role == "assistant") && (it.Note == "" || it.Note == "sidechain")
	switch r.detail {
	case DetailPrompts:
		if !prompt {
			return nil
		}
	case DetailConversation:
		if !talk && !(it.Role == "system" && it.Note == "compaction") {
			return nil
		}
	}
	var out []*session.Block
	for i := range it.Blocks {
		b := &it.Blocks[i]
		switch r.detail {
		case DetailPrompts:
			if b.Kind != session.KindText && b.Kind != session.KindFile {
				continue
			}
		case DetailConversation:
			if b.Kind == session.KindNote || b.Kind == session.KindThinking && b.Text == "" {
				continue
			}
		default:
			if b.Kind == session.KindThinking && b.Text == "" {
				continue
			}
		}
		out = append(out, b)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// folded returns the one line a block is shown as, when it is one.
func (r *Reading) folded(b *session.Block) (string, bool) {
	full := r.detail == DetailFull
	switch b.Kind {
	case session.KindToolUse:
		if full {
			return "", false
		}
		return toolLine(b), true
	case session.KindThinking:
		if full {
			return "", false
		}
		return fmt.Sprintf("Thinking (%s)", plural(len(strings.Fields(b.Text)), "word")), true
	case session.KindRaw:
		if full {
			return "", false
		}
		return b.Label + " (an entry shown as recorded)", true
	case session.KindToolResult:
		if full {
			return "", false
		}
		return "Tool result", true
	case session.KindCompaction:
		s := "Conversation compacted"
		if t := b.Compaction.Trigger; t != "" {
			s += " (" + t + ")"
		}
		if full {
			return "", false
		}
		return s, true
	case session.KindFile:
		return fileLine(b.File), true
	}
	return "", false
}

// block writes a block unfolded, and reports whether it was plain text.
func (r *Reading) block(pr printer, b *session.Block, prevPlain bool) bool {
	w := &r.buf
	switch b.Kind {
	case session.KindText:
		if prevPlain && pickForm(b.Text, true) == formPlain {
			w.WriteByte('\n')
		}
		return pr.text(b.Text, "text", true) == formPlain
	case session.KindThinking:
		w.WriteString("_Thinking:_\n\n")
		pr.text(b.Text, "text", true)
	case session.KindNote:
		w.WriteString("_" + b.Text + "_\n")
	case session.KindReminder:
		w.WriteString("_System reminder (" + reminderLabel(b) + "):_\n\n")
		pr.text(b.Text, "text", true)
	case session.KindRaw:
		w.WriteString("_" + b.Label + " (shown as recorded):_\n\n")
		pr.text(b.Text, "json", false)
	case session.KindToolUse:
		r.tool(pr, b)
	case session.KindToolResult:
		w.WriteString("_Tool result:_\n\n")
		r.parts(pr, b.Result)
	case session.KindCompaction:
		s := "Conversation compacted"
		if t := b.Compaction.Trigger; t != "" {
			s += " (" + t + ")"
		}
		w.WriteString("_" + s + "._\n")
		if b.Text != "" {
			w.WriteString("\n_Compaction summary:_\n\n")
			pr.text(b.Text, "text", true)
		}
	}
	return false
}

// tool writes a call unfolded: its line, its input in its view (as the
// document shows it) and its result.
func (r *Reading) tool(pr printer, b *session.Block) {
	w := &r.buf
	w.WriteString("**" + toolLine(b) + "**\n\n")
	in, _ := decodeTree([]byte(b.Input))
	_, _, parts, viewed := toolView(b, in)
	if !viewed || !pr.view(in, parts) {
		var pretty bytes.Buffer
		if json.Indent(&pretty, []byte(b.Input), "", "  ") == nil {
			writeFence(w, pretty.String(), "json")
		} else {
			pr.text(b.Input, "json", false)
		}
	}
	if b.Sidechain != "" {
		w.WriteString("\nSidechain: " + b.Sidechain + "\n")
	}
	if b.Result == nil {
		return
	}
	w.WriteString("\n_Result:_\n\n")
	r.parts(pr, b.Result)
}

func (r *Reading) parts(pr printer, res *session.Result) {
	if res == nil || len(res.Parts) == 0 {
		r.buf.WriteString("_(empty)_\n")
		return
	}
	for i, p := range res.Parts {
		if i > 0 {
			r.buf.WriteByte('\n')
		}
		switch p.Kind {
		case session.KindFile:
			r.buf.WriteString(fileLine(p.File) + "\n")
		case session.KindText:
			pr.text(p.Text, "text", false)
		default:
			pr.text(p.Text, "json", false)
		}
	}
}

// flush writes what the view holds, with the controls a terminal would
// obey shown instead (a session's text is shown, never run).
func (r *Reading) flush() error {
	_, err := r.w.Write(terminalSafe(r.buf.Bytes()))
	r.buf.Reset()
	return err
}

// terminalSafe replaces the control characters of valid UTF-8 text that a
// terminal would act on (an escape sequence, a bell, a carriage return
// that overwrites the line) with their pictures (U+2400 on, ␛ for ESC);
// a line end, a tab and the CR of a CRLF stay as they are.
func terminalSafe(b []byte) []byte {
	clean := true
	for i, c := range b {
		if c < 0x20 && c != '\n' && c != '\t' && !(c == '\r' && i+1 < len(b) && b[i+1] == '\n') || c == 0x7f ||
			c == 0xc2 && i+1 < len(b) && b[i+1] >= 0x80 && b[i+1] <= 0x9f {
			clean = false
			break
		}
	}
	if clean {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '\n' || c == '\t' || c == '\r' && i+1 < len(b) && b[i+1] == '\n':
			out = append(out, c)
		case c < 0x20:
			out = utf8.AppendRune(out, rune(0x2400+int(c)))
		case c == 0x7f:
			out = utf8.AppendRune(out, '\u2421')
		case c == 0xc2 && i+1 < len(b) && b[i+1] >= 0x80 && b[i+1] <= 0x9f:
			out = utf8.AppendRune(out, '\ufffd')
			i++
		default:
			out = append(out, c)
		}
	}
	return out
}

// reminderLabel names a reminder as the document's summary line does.
func reminderLabel(b *session.Block) string {
	if b.Label == "meta" {
		return "Client message (not typed by a person)"
	}
	return b.Label
}

// fileLine is the line of an image or document a session showed.
func fileLine(f *session.File) string {
	if f == nil {
		return "a file"
	}
	return fmt.Sprintf("%s (%s): %s", f.Type, f.MediaType, f.Path)
}

// oneLine collapses white space (line ends included) to single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
