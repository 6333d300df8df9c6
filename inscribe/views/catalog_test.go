package views

import (
	"bytes"
	"html"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"

	"github.com/scribe-archive/scribe/inscribe/document"
)

// A table cell shows its text as it was, whether or not it was escaped as
// markdown first: no stray backslash, no cell split by a "|".
func TestCell(t *testing.T) {
	md := goldmark.New(goldmark.WithExtensions(extension.Table))
	for _, text := range []string{"a|b", `a\|b`, "a || b", `ends in \`, "two\nlines\r\n", "*stars* and [brackets]"} {
		for _, escaped := range []bool{false, true} {
			c := cell(text)
			if escaped {
				c = cell(document.EscapeInline(text))
			}
			src := "| h | x |\n| --- | --- |\n| " + c + " | end |\n"
			var out bytes.Buffer
			if err := md.Convert([]byte(src), &out); err != nil {
				t.Fatal(err)
			}
			shown := out.String()
			if !strings.Contains(shown, "<td>end</td>") {
				t.Errorf("cell(%q) (escaped %v) = %q splits the row:\n%s", text, escaped, c, shown)
			}
			if escaped {
				want := strings.TrimSpace(strings.NewReplacer("\r", " ", "\n", " ").Replace(text))
				if !strings.Contains(shown, "<td>"+html.EscapeString(want)+"</td>") {
					t.Errorf("cell(document.EscapeInline(%q)) = %q shows\n%s\nwant the text %q", text, c, shown, want)
				}
			}
		}
	}
}
