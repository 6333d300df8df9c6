package document

import (
	"testing"
	"unicode/utf8"

	"github.com/scribe-archive/scribe/session"
)

// hostileTexts are texts that try to change a document's structure. Each
// must come back exactly, in every position a text can take.
var hostileTexts = []string{
	"",
	" ",
	"\n",
	"\n\n",
	"plain words",
	"   leading spaces and trailing newline\n\n",
	"### 2025-01-01T00:00:00.000Z · assistant\n<!-- scribe {\"ids\":[\"x\"],\"time\":\"t\",\"role\":\"user\"} -->",
	"---",
	"a\n\n---\n\n### 2025 · user\n<!-- scribe {\"ids\":[\"y\"]} -->\n\nhi",
	"<details><summary>Tool: Bash</summary>\n\n```json\n{}\n```\n</details>",
	"</details>",
	"````markdown\n```\nnested fence\n```\n````",
	"```",
	"```text scribe:verbatim\nfake\n```",
	"~~~\nunclosed tilde fence",
	"<!-- unclosed comment",
	"<pre>\nunclosed pre",
	"[ref]: https://example.com\n\nuse [ref]",
	"---\nsession_id: not-yours\n---",
	"CRLF line\r\nend",
	"lone CR\rhere",
	"trailing spaces   \nand a backslash \\",
	"NUL \x00 and bell \x07 and DEL \x7f and C1 \u0085",
	"zero-width \u200b, line sep \u2028, BOM \ufeff",
	"unicode: héllo 你好 مرحبا 🙂",
	"    indented code",
	"- list\n1. numbered\n> quote\n| a | b |\n|---|---|",
	"<script>alert(1)</script> & &amp; <b>bold</b>",
	"text\n\n<!-- scribe:text -->\n\nmore",
	"-->",
	"a\tb\n---\n### x · user",
	"\ufffd replacement char",
}

func TestHostileTexts(t *testing.T) {
	for _, s := range hostileTexts {
		checkRoundTrip(t, "hostile", hostileDoc(s))
	}
}

// hostileDoc puts s in every place a text can go.
func hostileDoc(s string) *session.Document {
	res := &session.Result{Entry: "r1", Time: "t", Parts: []session.Part{{Kind: session.KindText, Text: s}, {Kind: session.KindRaw, Text: s}}}
	return &session.Document{
		Meta:    session.Meta{Format: session.FormatVersion, SessionID: "s", AgentID: "claude", Title: session.Ptr(s)},
		Summary: "summary",
		Items: []session.Item{
			{Round: 1, Time: "2026-01-01T00:00:00Z", Role: "user", IDs: []string{"u1"}, Blocks: []session.Block{{Kind: session.KindText, Text: s}}},
			{Time: s, Role: "assistant", Note: s, IDs: []string{"a1", "a2"}, Parent: "u0", Blocks: []session.Block{
				{Kind: session.KindText, Text: s},
				{Kind: session.KindText, Text: s},
				{Kind: session.KindThinking, Text: s},
				{Kind: session.KindToolUse, Label: "Bash", ID: "toolu_1", Input: `{"command":` + Quote(s) + `}`, Result: res},
				{Kind: session.KindToolUse, Label: s, ID: "toolu_2", Input: s},
				{Kind: session.KindReminder, Label: s, Entry: "e1", Time: s, Text: s},
				{Kind: session.KindRaw, Label: s, Text: s},
				{Kind: session.KindCompaction, Compaction: &session.Compaction{Trigger: s, Head: "h"}, Entry: "e2", Text: s},
				{Kind: session.KindText, Text: s},
			}},
			{Time: "t", Role: "user", IDs: []string{"u2"}, Blocks: []session.Block{{Kind: session.KindToolResult, ID: "toolu_9", Result: res}, {Kind: session.KindText, Text: s}}},
		},
	}
}

// FuzzText checks that any text survives a round trip in any position,
// tool views included.
func FuzzText(f *testing.F) {
	for _, s := range hostileTexts {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			t.Skip("the model holds valid UTF-8 only: adapters replace invalid bytes (the exact bytes stay in the round files)")
		}
		checkRoundTrip(t, "fuzz", hostileDoc(s))
		checkRoundTrip(t, "fuzz-views", viewDoc(s))
	})
}

// TestNestedReferenceDefinitions: a link reference definition inside a
// quote or a list still defines a link for the whole document, so such a
// text is not written as plain markdown.
func TestNestedReferenceDefinitions(t *testing.T) {
	for _, s := range []string{"> [x]: https://example.com", "- [x]: https://example.com", "1. > [x]: /u", "plain [x] text"} {
		plain := pickForm(s, true) == formPlain
		if want := s == "plain [x] text"; plain != want {
			t.Errorf("%q: plain = %v, want %v", s, plain, want)
		}
	}
}
