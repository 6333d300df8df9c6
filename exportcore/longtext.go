package exportcore

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/scribe-archive/scribe/internal/jsonpatch"
)

// A conversion encodes each line it writes, and a text in a line is
// encoded where the line's parts are (a message's content, the item, the
// line): a prompt or a tool result of 100 MB would be held three times
// more. [LongTexts] writes the same bytes with a long text in pieces.

// longText is the length from which a text is written in pieces.
var longText = 1 << 20

// SetLongTextForTest makes every text of at least n bytes long (0: every
// text), so that tests write each through the marks; it returns what
// undoes it.
func SetLongTextForTest(n int) (restore func()) {
	old := longText
	longText = n
	return func() { longText = old }
}

// LongTexts stands a mark for each long text a converter encodes into a
// line, and writes the line with each mark replaced by its text's
// encoding, a piece at a time. A mark stands for its text in every line
// it is written in (a Gemini CLI message written again with a result).
type LongTexts struct {
	html   bool              // escape <, > and & as json.Marshal does
	nonce  string            // the marks' own: no text holds one
	prefix string            // the marks' start as JSON encodes it in a string
	texts  map[string]string // a mark as encoded -> its text
	fresh  map[string]bool   // the marks since the last Write
}

// NewLongTexts returns the long texts of one conversion; escapeHTML says
// whether its lines are encoded as json.Marshal encodes (true) or with <,
// > and & as they are.
func NewLongTexts(escapeHTML bool) *LongTexts {
	var nonce [8]byte
	rand.Read(nonce[:])
	l := &LongTexts{html: escapeHTML, nonce: hex.EncodeToString(nonce[:]), texts: map[string]string{}, fresh: map[string]bool{}}
	l.prefix = `\u0000scribe long text ` + l.nonce + " "
	return l
}

// Mark returns s, or the mark that stands for it when it is long. The
// mark must be encoded as (part of) a JSON string, once, of the next line
// Write writes.
func (l *LongTexts) Mark(s string) string {
	if len(s) < longText {
		return s
	}
	n := len(l.texts) + 1
	enc := fmt.Sprintf("%s%d\\u0000", l.prefix, n)
	l.texts[enc], l.fresh[enc] = s, true
	return fmt.Sprintf("\x00scribe long text %s %d\x00", l.nonce, n)
}

// Write writes line, a JSON line encoded with the marks of the texts since
// the last Write (and earlier ones), to w with each mark replaced by the
// encoding of its text.
func (l *LongTexts) Write(w *bufio.Writer, line []byte) {
	prefix := []byte(l.prefix)
	for len(l.texts) > 0 {
		i := bytes.Index(line, prefix)
		if i < 0 {
			break
		}
		end := bytes.Index(line[i+len(prefix):], []byte(`\u0000`))
		if end < 0 {
			break
		}
		end += i + len(prefix) + len(`\u0000`)
		mark := string(line[i:end])
		text, ok := l.texts[mark]
		if !ok {
			panic(fmt.Sprintf("exportcore: %s is no long text's mark", mark))
		}
		delete(l.fresh, mark)
		w.Write(line[:i])
		jsonpatch.WriteString(w, text, 64<<10, l.html) // a bufio.Writer's error is Flush's
		line = line[end:]
	}
	if len(l.fresh) > 0 {
		panic(fmt.Sprintf("exportcore: %d long texts are not in the line written", len(l.fresh)))
	}
	w.Write(line)
}
