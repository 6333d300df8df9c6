package lifecycle

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/scribe-archive/scribe/session"
)

// ValidText returns raw bytes as a string, with invalid UTF-8 replaced: the
// document is always valid UTF-8; the exact bytes stay in the round files.
func ValidText(raw []byte) string {
	if utf8.Valid(raw) {
		return string(raw)
	}
	return strings.ToValidUTF8(string(raw), "\uFFFD")
}

// CompactJSON returns a JSON value (a tool's input) as compact JSON, valid
// UTF-8; a value that is not JSON comes back as its text.
func CompactJSON(raw []byte) string {
	if len(raw) == 0 {
		return ""
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return ValidText(raw)
	}
	return ValidText(buf.Bytes())
}

// FirstLine returns the first line of s, white space trimmed, and of it
// at most FirstLineMax bytes (cut where a character starts): what a
// session's first prompt is listed by. A list shows 120 characters of it,
// and a builder's state keeps it in the read note, which every update and
// export reads and writes whole: a prompt of 100 MB in one line was held
// and copied there several times over (issue 33).
func FirstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	if len(s) > FirstLineMax {
		i := FirstLineMax
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s = strings.Clone(s[:i]) // not the whole text kept alive by it
	}
	return s
}

// FirstLineMax is how much of a first line FirstLine keeps: 1,024
// characters at least, far more than a title or a summary shows.
const FirstLineMax = 4 << 10

// ShortErr is an error's message cut to 120 bytes, for a warning.
func ShortErr(err error) string {
	s := err.Error()
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

// Opt returns nil for "", else a pointer to s: an optional field of
// [session.Meta].
func Opt(s string) *string {
	if s == "" {
		return nil
	}
	return session.Ptr(s)
}

// Widen widens a session's time span, *started to *ended, to take t (a
// timestamp in RFC 3339, which sorts as text); an empty t is no time.
func Widen(started, ended *string, t string) {
	if t == "" {
		return
	}
	if *started == "" || t < *started {
		*started = t
	}
	if t > *ended {
		*ended = t
	}
}

// File is data the document shows as a file beside it (an image, a
// document), named as every adapter names files (docs/FORMAT.md §2): the
// first 8 bytes of the data's SHA-256 in hex, with an extension from its
// media type, where the store puts files (source.Config.FilePath).
func (c *Context) File(typ, mediaType string, data []byte) *session.File {
	sum := sha256.Sum256(data)
	name := hex.EncodeToString(sum[:8]) + "." + extension(mediaType)
	return &session.File{Type: typ, MediaType: mediaType, Path: c.cfg.FileOf(name), Data: data}
}

func extension(mediaType string) string {
	switch mediaType {
	case "image/png":
		return "png"
	case "image/jpeg":
		return "jpg"
	case "image/gif":
		return "gif"
	case "image/webp":
		return "webp"
	case "application/pdf":
		return "pdf"
	case "text/plain":
		return "txt"
	}
	return "bin"
}

// Tokens counts the tokens of a round as its records report them, when
// a source reports one message's tokens on several records.
type Tokens struct {
	total int64
	byID  map[string]int64
}

// Once counts n tokens for message id, unless id has been counted (a
// message written in parts, each part repeating its usage). An empty id
// is always counted.
func (t *Tokens) Once(id string, n int64) {
	if _, ok := t.byID[id]; ok && id != "" {
		return
	}
	t.Set(id, n)
}

// Set counts n tokens for message id in place of any counted before (a
// message written again, whole, replaces its earlier record). An empty id
// is always counted.
func (t *Tokens) Set(id string, n int64) {
	if id == "" {
		t.total += n
		return
	}
	if t.byID == nil {
		t.byID = make(map[string]int64)
	}
	t.total += n - t.byID[id]
	t.byID[id] = n
}

// Total is the round's tokens.
func (t *Tokens) Total() int64 { return t.total }
