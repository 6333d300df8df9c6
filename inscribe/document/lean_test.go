package document

import (
	"bytes"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/internal/testkit/testenv"
)

// TestRenderLean: over the corpora, a lean view holds none of scribe's
// identities or markers, shrinks with the detail level, and, full with the
// identities kept, is the document's messages.
func TestRenderLean(t *testing.T) {
	paths := append(testenv.Transcripts(t, testenv.Projects(t)), testenv.PublicTranscripts(t)...)
	for _, p := range paths {
		d := buildDoc(t, p)
		var doc, ids bytes.Buffer
		var sizes [3]int
		for i := range d.Items {
			RenderItem(&doc, &d.Items[i])
			RenderLean(&ids, &d.Items[i], DetailFull, true)
		}
		if !bytes.Equal(doc.Bytes(), ids.Bytes()) {
			t.Errorf("%s: the full view with identities is not the document's messages", p)
		}
		for level := DetailFull; level <= DetailPrompts; level++ {
			var buf bytes.Buffer
			RenderLeanItems(&buf, d.Items, level, false)
			if s := buf.String(); strings.Contains(s, "<!-- scribe") || strings.Contains(s, "scribe:") || strings.Contains(s, `<a id="m-`) {
				t.Errorf("%s: the %s view keeps scribe's markers", p, level)
			}
			sizes[level] = buf.Len()
		}
		if !(sizes[DetailPrompts] <= sizes[DetailConversation] && sizes[DetailConversation] <= sizes[DetailFull] && (sizes[DetailFull] < doc.Len() || doc.Len() == 0)) {
			t.Errorf("%s: sizes %v, document %d", p, sizes, doc.Len())
		}
	}
}

func TestParseDetail(t *testing.T) {
	for i, name := range Details {
		if d, err := ParseDetail(name); err != nil || int(d) != i || d.String() != name {
			t.Errorf("%s: %v %v", name, d, err)
		}
	}
	if _, err := ParseDetail("all"); err == nil {
		t.Error("ParseDetail(all) succeeds")
	}
}
