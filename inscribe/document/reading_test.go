package document

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/scribe-archive/scribe/internal/testkit/testenv"
)

// TestReading: over the corpora, the reading view (scribe show) holds none
// of scribe's identities, markers or HTML, no control a terminal would
// obey, and shrinks with the detail level; a tool call is one line below
// DetailFull.
func TestReading(t *testing.T) {
	paths := append(testenv.Transcripts(t, testenv.Projects(t)), testenv.PublicTranscripts(t)...)
	for _, p := range paths {
		d := buildDoc(t, p)
		// What the session's own text holds may be shown; what scribe
		// adds may not.
		var own strings.Builder
		for _, it := range d.Items {
			for _, b := range it.Blocks {
				own.WriteString(b.Text + b.Input)
				if b.Result != nil {
					for _, pt := range b.Result.Parts {
						own.WriteString(pt.Text)
					}
				}
			}
		}
		var sizes [3]int
		for level := DetailFull; level <= DetailPrompts; level++ {
			var buf bytes.Buffer
			r := NewReading(&buf, level, time.UTC)
			if err := r.Head(&d.Meta, d.Summary); err != nil {
				t.Fatal(err)
			}
			tools := 0
			for i := range d.Items {
				r.Item(&d.Items[i])
				for _, b := range d.Items[i].Blocks {
					if b.Kind == "tool_use" {
						tools++
					}
				}
			}
			s := buf.String()
			for _, bad := range []string{"<!-- scribe", "scribe:", `<a id="m-`, "<summary>Tool: ", "<summary>Thinking</summary>", "<summary>System reminder", "<p><b>Result"} {
				if strings.Count(s, bad) > strings.Count(own.String(), bad) {
					t.Errorf("%s: the %s view holds %q", p, level, bad)
				}
			}
			if strings.ContainsAny(s, "\x1b\a\x7f") {
				t.Errorf("%s: the %s view holds a control a terminal would obey", p, level)
			}
			if level == DetailConversation && strings.Count(s, "\n- Tool: ") < tools {
				t.Errorf("%s: %d tool calls, %d lines of them", p, tools, strings.Count(s, "\n- Tool: "))
			}
			sizes[level] = buf.Len()
		}
		if !(sizes[DetailPrompts] <= sizes[DetailConversation] && sizes[DetailConversation] <= sizes[DetailFull]) {
			t.Errorf("%s: sizes %v", p, sizes)
		}
	}
}

// TestTerminalSafe: what a terminal would act on is shown, not run.
func TestTerminalSafe(t *testing.T) {
	for in, want := range map[string]string{
		"plain\ttext\n":             "plain\ttext\n",
		"crlf\r\nline":              "crlf\r\nline",
		"\x1b[2Jclear\a":            "␛[2Jclear␇",
		"over\rwrite":               "over␍write",
		"del\x7f c1\u009b[31m done": "del␡ c1\ufffd[31m done",
		"wide 漢字 and é":             "wide 漢字 and é",
	} {
		if got := string(terminalSafe([]byte(in))); got != want {
			t.Errorf("terminalSafe(%q) = %q, want %q", in, got, want)
		}
	}
}
