package document

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/scribe-archive/scribe/session"
)

// Detail says how much of a message a lean view ([RenderLean]) shows.
type Detail int

const (
	// DetailFull shows every block, as the document does.
	DetailFull Detail = iota
	// DetailConversation shows the person's prompts, the replies, one line
	// per tool call and compactions (and a subagent's messages written in
	// the main transcript); thinking, reminders, notes, client messages and
	// entries shown as recorded are left out.
	DetailConversation
	// DetailPrompts shows the person's prompts only.
	DetailPrompts
)

// Details are the names of the detail levels, in order.
var Details = []string{"full", "conversation", "prompts"}

func (d Detail) String() string {
	if d >= 0 && int(d) < len(Details) {
		return Details[d]
	}
	return fmt.Sprintf("Detail(%d)", int(d))
}

// ParseDetail reads a detail level by its name.
func ParseDetail(s string) (Detail, error) {
	for i, name := range Details {
		if s == name {
			return Detail(i), nil
		}
	}
	return 0, fmt.Errorf("detail %q is not one of %s", s, strings.Join(Details, ", "))
}

// RenderLean writes a message for a reader, not for the parser: a view of
// a session for a successor (scribe context). It is not a document and is
// never read back. Its heading is the document's; without keepIDs the
// identity comment and the anchors are left out, and so are scribe's
// markers in the blocks and the separator above the heading, and a fence's
// info string keeps only its language. At DetailFull with keepIDs, it
// writes what RenderItem writes. A message with nothing to show at the
// detail level (a client's message, a reply that is only thinking) is not
// written at all; RenderLean reports whether it wrote anything.
func RenderLean(w *bytes.Buffer, it *session.Item, d Detail, keepIDs bool) bool {
	return renderLean(w, it, d, keepIDs, true, new(bool))
}

// RenderLeanItems writes messages as RenderLean does, and, below
// DetailFull and without keepIDs, writes a message that continues one of
// the same role (a reply the client recorded as several messages) under
// the heading of the first.
func RenderLeanItems(w *bytes.Buffer, items []session.Item, d Detail, keepIDs bool) {
	var last *session.Item
	tools := false // the last thing written is the line of a tool call
	for i := range items {
		it := &items[i]
		heading := last == nil || keepIDs || d == DetailFull || it.Role != last.Role || it.Note != last.Note
		if renderLean(w, it, d, keepIDs, heading, &tools) {
			last = it
		}
	}
}

func renderLean(w *bytes.Buffer, it *session.Item, d Detail, keepIDs, withHeading bool, tools *bool) bool {
	if d == DetailFull && keepIDs {
		RenderItem(w, it)
		return true
	}
	blocks := leanBlocks(it, d)
	if blocks == nil {
		return false
	}
	if withHeading {
		*tools = false
		if keepIDs {
			w.WriteString("\n---\n")
		}
		w.WriteString("\n### ")
		w.WriteString(heading(it))
		w.WriteByte('\n')
		if keepIDs {
			writeIdentity(w, it)
		}
	}
	pr := printer{w: w, lean: true}
	prevPlain := false
	for _, b := range blocks {
		if d != DetailFull && b.Kind == session.KindToolUse {
			// One line per call; the calls in a row make a list.
			if !*tools {
				w.WriteByte('\n')
			}
			w.WriteString("- " + EscapeInline(toolLine(b)) + "\n")
			*tools, prevPlain = true, false
			continue
		}
		*tools = false
		w.WriteByte('\n')
		if d != DetailFull && b.Kind == session.KindCompaction {
			w.WriteString("_Conversation compacted")
			if t := b.Compaction.Trigger; t != "" {
				w.WriteString(" (" + EscapeInline(t) + ")")
			}
			w.WriteString("._\n")
			prevPlain = false
			continue
		}
		prevPlain = pr.block(b, prevPlain)
	}
	return true
}

// leanBlocks returns the blocks of an item a detail level shows, or nil
// when it shows none of the item.
func leanBlocks(it *session.Item, d Detail) []*session.Block {
	prompt := it.Role == "user" && it.Note == ""
	switch d {
	case DetailPrompts:
		if !prompt {
			return nil
		}
	case DetailConversation:
		// A subagent's messages written in the main transcript (older
		// clients) are conversation too.
		talk := (it.Role == "user" || it.Role == "assistant") && (it.Note == "" || it.Note == "sidechain")
		if !talk && !(it.Role == "system" && it.Note == "compaction") {
			return nil
		}
	}
	var out []*session.Block
	for i := range it.Blocks {
		b := &it.Blocks[i]
		switch d {
		case DetailFull:
			if !(printer{lean: true}).shows(b) {
				continue
			}
		case DetailConversation:
			switch b.Kind {
			case session.KindText, session.KindToolUse, session.KindFile, session.KindCompaction:
			default:
				continue
			}
		case DetailPrompts:
			if b.Kind != session.KindText && b.Kind != session.KindFile {
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

// toolLine is the one line of a tool call in a lean view: its name, what
// its summary line shows, and how it ended when that was not well.
func toolLine(b *session.Block) string {
	s := "Tool: " + b.Label
	if in, err := decodeTree([]byte(b.Input)); err == nil {
		if h := toolHint(b.Label, in); h != "" {
			s += " — " + h
		}
	}
	switch r := b.Result; {
	case r == nil:
		s += " (no result recorded)"
	case exitCode(b.Label, r) != "":
		s += " (exit " + exitCode(b.Label, r) + ")"
	case r.Error:
		s += " (error)"
	}
	return s
}
