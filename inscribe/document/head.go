package document

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/scribe-archive/scribe/session"
)

// headLimit bounds how far into a document its head (frontmatter, title,
// summary) may reach.
const headLimit = 4 << 20

// ItemOpen is how every message starts: the blank line and the separator
// before it, a blank line, and the "### " of its heading. The line after
// the heading starts with the message's identity ([IdentityPrefix]).
const ItemOpen = "\n---\n\n### "

// Head is what comes before a document's first message.
type Head struct {
	Meta    *session.Meta
	Summary string
	// Size is the size of the whole document in bytes.
	Size int64
	// BodyAt is the offset of the first message (of the line end that
	// starts [ItemOpen]), or Size when there is none: the head is the
	// document's first BodyAt bytes, which [RenderHead] gives back.
	BodyAt int64
}

// ReadHead reads the head of a document, reading no more of the file than
// the head (at most 4 MiB). It finds the first message by its bytes
// (ItemOpen, a heading line, then a line starting with "<!-- scribe {"),
// without parsing the body: a document scribe wrote satisfies both readings.
func ReadHead(path string) (*Head, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	// Most heads fit in 64 KiB; read more only when this one does not.
	buf := make([]byte, min(fi.Size(), 64<<10))
	if _, err := io.ReadFull(f, buf); err != nil {
		return nil, err
	}
	if int64(len(buf)) < fi.Size() && findItem(buf, 0) < 0 {
		buf = make([]byte, min(fi.Size(), headLimit))
		if _, err := f.ReadAt(buf, 0); err != nil && err != io.EOF {
			return nil, err
		}
	}
	meta, err := parseMeta(buf, path)
	if err != nil {
		return nil, err
	}
	h := &Head{Meta: meta, Size: fi.Size()}
	_, body, _, _ := splitFrontmatter(buf, path)
	bodyOff := len(buf) - len(body)
	if !bytes.HasPrefix(body, []byte("\n# ")) {
		return nil, &FormatError{File: path, Msg: "expected the title (a \"# \" heading) after the frontmatter"}
	}
	h1End := bytes.IndexByte(body[1:], '\n')
	if h1End < 0 {
		return nil, &FormatError{File: path, Msg: "document ends in its title"}
	}
	summaryStart := bodyOff + 1 + h1End + 2
	first := findItem(buf, summaryStart)
	switch {
	case first >= 0:
		h.BodyAt = int64(first)
		h.Summary = string(buf[min(summaryStart, first-1):max(summaryStart, first-1)])
	case int64(len(buf)) < fi.Size():
		return nil, &FormatError{File: path, Msg: "no message in the first 4 MiB: the summary is too long"}
	default:
		h.BodyAt = fi.Size()
		end := max(summaryStart, len(buf)-1)
		h.Summary = string(buf[min(summaryStart, end):end])
	}
	return h, nil
}

// ReadMeta reads a document's frontmatter, reading no more of the file than
// its head.
func ReadMeta(path string) (*session.Meta, error) {
	h, err := ReadHead(path)
	if err != nil {
		return nil, err
	}
	return h.Meta, nil
}

// findItem returns the offset of the first item start at or after from in
// buf, or -1. An item starts with ItemOpen, a heading line, then scribe's
// identity comment.
func findItem(buf []byte, from int) int {
	for from < len(buf) {
		i := bytes.Index(buf[from:], []byte(ItemOpen))
		if i < 0 {
			return -1
		}
		at := from + i
		rest := buf[at+len(ItemOpen):]
		if nl := bytes.IndexByte(rest, '\n'); nl >= 0 && bytes.HasPrefix(rest[nl+1:], []byte("<!-- scribe {")) {
			return at
		}
		from = at + 1
	}
	return -1
}

// IdentityPrefix returns how the identity line of a message whose first id
// is id starts, as [RenderItem] writes it: a document holds it once, unless
// a person copied the message.
func IdentityPrefix(id string) []byte {
	b, err := json.Marshal(id)
	if err != nil {
		panic(fmt.Sprintf("document: encode an id: %v", err)) // a string always encodes
	}
	return append([]byte(`<!-- scribe {"ids":[`), b...)
}
