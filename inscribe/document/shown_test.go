package document

import (
	"testing"

	"github.com/scribe-archive/scribe/session"
)

// Shown is what a text with bytes that are not UTF-8 reads back as, in the
// places the printer puts a message's text: exporters rely on it to tell
// such a text, unedited, from an edit.
func TestShownIsWhatReadsBack(t *testing.T) {
	for _, s := range []string{"plain", "a \xff b", "\xfe\xff", "\xed\xa0\x80 half", "cut \xc3", "\xef\xbf\xbd real U+FFFD \xff"} {
		res := &session.Result{Entry: "r1", Time: "t", Parts: []session.Part{{Kind: session.KindText, Text: s}}}
		d := &session.Document{
			Meta:    session.Meta{Format: session.FormatVersion, SessionID: "s", AgentID: "claude"},
			Summary: "summary",
			Items: []session.Item{
				{Round: 1, Time: "t", Role: "user", IDs: []string{"u1"}, Blocks: []session.Block{{Kind: session.KindText, Text: s}}},
				{Round: 1, Time: "t", Role: "assistant", IDs: []string{"a1"}, Blocks: []session.Block{
					{Kind: session.KindThinking, Text: s},
					{Kind: session.KindText, Text: s},
					{Kind: session.KindToolUse, Label: "Bash", ID: "t1", Input: "{}", Result: res},
				}},
			},
		}
		back, err := Parse(Render(d), "shown")
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		want := Shown(s)
		got := []string{back.Items[0].Blocks[0].Text, back.Items[1].Blocks[0].Text, back.Items[1].Blocks[1].Text, back.Items[1].Blocks[2].Result.Parts[0].Text}
		for i, g := range got {
			if g != want {
				t.Errorf("%q: text %d reads back as %q, Shown gives %q", s, i, g, want)
			}
		}
	}
}
