package gemini

import (
	"os"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/internal/testkit/sourcetest"
)

// TestTextFields checks, over the corpus, that the text of every block the
// document shows is a text field of its line, and that no identity,
// signature or image's bytes are.
func TestTextFields(t *testing.T) {
	a := New()
	notText := func(path string) bool {
		return notText([]string{path[strings.LastIndexByte(path, '.')+1:]}) || strings.HasSuffix(path, "inlineData.data")
	}
	for _, f := range corpus(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sourcetest.TextFields(t, f, data, a, notText, buildFile(t, f).items())
	}
}
