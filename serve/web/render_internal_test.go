package web

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/scribe-archive/scribe/inscribe/document"
)

// TestLongTextCut: a text of more than webTextMax bytes shows its first
// webTextMax as typed, what is left and where it is whole; a shorter one
// shows as it always did.
func TestLongTextCut(t *testing.T) {
	v := &docView{ref: docRef{key: "s1"}, l: linker{base: "../../"}}
	for _, s := range []string{"a *short* text", strings.Repeat("é", webTextMax/2)} {
		var got, want bytes.Buffer
		v.textHTML(&got, s, true)
		document.TextHTML(&want, s, true)
		if got.String() != want.String() {
			t.Errorf("a text of %d bytes: shown otherwise than document.TextHTML shows it", len(s))
		}
	}
	long := strings.Repeat("é", webTextMax) // 2 MiB: cut in a character's middle would be invalid
	var got bytes.Buffer
	v.textHTML(&got, long, true)
	out := got.String()
	if !utf8.ValidString(out) || got.Len() > webTextMax+1000 {
		t.Fatalf("a text of %d bytes: %d bytes of HTML, valid UTF-8 %v", len(long), got.Len(), utf8.ValidString(out))
	}
	if want := `The text goes on for 1.0 MB more: <a href="../../s/s1/document.md">the document</a> holds it whole.`; !strings.Contains(out, want) {
		t.Fatalf("a text of %d bytes ends %q, want %q", len(long), out[len(out)-200:], want)
	}
}
