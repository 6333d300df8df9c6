package document

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

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
//
// f holds the document's size bytes; name names it in errors.
func ReadHead(f io.ReaderAt, size int64, name string) (*Head, error) {
	// Most heads fit in 8 KiB (a long summary in 64): read more only
	// when this one does not.
	var buf []byte
	for _, n := range []int64{8 << 10, 64 << 10, headLimit} {
		buf = make([]byte, min(size, n))
		if _, err := f.ReadAt(buf, 0); err != nil && !(err == io.EOF && len(buf) > 0) {
			return nil, err
		}
		if int64(len(buf)) == size || findItem(buf, 0) >= 0 {
			break
		}
	}
	return parseHead(buf, size, name)
}

// parseHead reads the head of a document of size bytes from buf, its first
// bytes: all of them, or at least the head.
func parseHead(buf []byte, size int64, name string) (*Head, error) {
	meta, err := ParseMeta(buf, name)
	if err != nil {
		return nil, err
	}
	h := &Head{Meta: meta, Size: size}
	_, body, _, _ := splitFrontmatter(buf, name)
	bodyOff := len(buf) - len(body)
	if !bytes.HasPrefix(body, []byte("\n# ")) {
		return nil, &FormatError{File: name, Line: lineAt(buf, bodyOff+1), Msg: titleMissing}
	}
	h1End := bytes.IndexByte(body[1:], '\n')
	if h1End < 0 {
		return nil, &FormatError{File: name, Line: lineAt(buf, len(buf)), Msg: cutShort}
	}
	summaryStart := bodyOff + 1 + h1End + 2
	if summaryStart-1 < len(buf) && buf[summaryStart-1] != '\n' {
		return nil, &FormatError{File: name, Line: lineAt(buf, summaryStart-1), Msg: "a blank line must follow the title"}
	}
	// The first message may start on the blank line after the title, when
	// the summary is empty and its line is gone.
	first := findItem(buf, summaryStart-1)
	switch {
	case first >= 0:
		if i := invalidUTF8(buf[bodyOff:first]); i >= 0 {
			return nil, &FormatError{File: name, Line: lineAt(buf, bodyOff+i), Msg: invalidText}
		}
		h.BodyAt = int64(first)
		if first-1 > summaryStart {
			h.Summary = string(buf[summaryStart : first-1])
		}
	case int64(len(buf)) < size:
		return nil, &FormatError{File: name, Msg: "no message in the first 4 MiB: the summary is too long"}
	case summaryStart < len(buf) && buf[len(buf)-1] != '\n':
		return nil, &FormatError{File: name, Line: lineAt(buf, len(buf)-1), Msg: cutShort}
	case invalidUTF8(buf[bodyOff:]) >= 0:
		return nil, &FormatError{File: name, Line: lineAt(buf, bodyOff+invalidUTF8(buf[bodyOff:])), Msg: invalidText}
	default:
		h.BodyAt = size
		end := max(summaryStart, len(buf)-1)
		h.Summary = string(buf[min(summaryStart, end):end])
	}
	return h, nil
}

// lineAt returns the number of the line holding offset off of src.
func lineAt(src []byte, off int) int {
	return bytes.Count(src[:min(max(off, 0), len(src))], []byte("\n")) + 1
}

// findItem returns the offset of the first item start at or after from in
// buf, or -1. An item starts with ItemOpen, after a line end (so the blank
// line before the separator is there, as Parse requires), a heading line,
// then scribe's identity comment.
func findItem(buf []byte, from int) int {
	for from < len(buf) {
		i := bytes.Index(buf[from:], []byte(ItemOpen))
		if i < 0 {
			return -1
		}
		at := from + i
		rest := buf[at+len(ItemOpen):]
		if nl := bytes.IndexByte(rest, '\n'); nl >= 0 && at > 0 && buf[at-1] == '\n' && isIdentityLine(firstLine(rest[nl+1:])) {
			return at
		}
		from = at + 1
	}
	return -1
}

// isIdentityLine reports whether a line is a message's identity: a marker
// without a kind, holding a JSON object.
func isIdentityLine(line []byte) bool {
	kind, data, ok := ParseMarker(line)
	return ok && kind == "" && bytes.HasPrefix(data, []byte("{"))
}

// firstLine returns b up to its first line end.
func firstLine(b []byte) []byte {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i]
	}
	return b
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
