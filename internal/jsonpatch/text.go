package jsonpatch

import (
	"bytes"
	"sync"
	"unicode/utf8"
	"unsafe"
)

// A TextValue is a string value of a JSON entry, decoded, with its path
// joined (Strings, DecodeString and JoinPath in one).
type TextValue struct {
	Path       string
	Start, End int
	Text       string
	// Long marks a value of LongText bytes or more, left undecoded (Text
	// is empty): its text is read from the entry where it is needed, a
	// window at a time (TextWindows) or whole (DecodeString), so that a
	// line of 100 MB and its text are not held together.
	Long bool
}

// TextValueLike is TextValue or a type of the same fields (the adapters'
// source.TextField), for the functions that give or read them.
type TextValueLike interface {
	~struct {
		Path       string
		Start, End int
		Text       string
		Long       bool
	}
}

// LongText is the length of a value, in bytes of JSON, from which
// TextValues leaves it undecoded.
const LongText = 1 << 20

// longHead is how much of a long value's text TextValues gives keep.
const longHead = 64 << 10

// TextValues returns the string values of the JSON entry data whose path
// skip does not report, and whose text keep accepts, in the order they
// appear; descents into objects and arrays skip reports are not made. The
// keys of the path skip is given are parts of data, valid during the call only: a
// skip that keeps one keeps a copy (strings.Clone).
//
// A value of LongText bytes or more is given undecoded (Long), and keep
// is given the first 64 KiB of its text only.
//
// It gives what Strings with DecodeString and JoinPath would give, at a
// fraction of the cost (the text finders of the adapters call it for every
// line inscribed with redaction): the keys of the path are read in place
// rather than copied, and the joined paths are parts of one string.
func TextValues[T TextValueLike](data []byte, skip func(path []string) bool, keep func(text string) bool) []T {
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	sc.paths, sc.ends, sc.vals = sc.paths[:0], sc.ends[:0], sc.vals[:0]
	w := &walker{s: scanner{data: data}, skip: skip, inPlace: true}
	w.fn = func(v StringValue) {
		if len(v.Path) > 0 && skip(v.Path) {
			return
		}
		inner := data[v.Start+1 : v.End-1]
		if len(inner)+2 >= LongText {
			head := NewTextWindows(data[v.Start:v.End]).Next(nil, longHead)
			if keep(unsafe.String(unsafe.SliceData(head), len(head))) {
				sc.addPath(v.Path)
				sc.vals = append(sc.vals, TextValue{Start: v.Start, End: v.End, Long: true})
			}
			return
		}
		var text string
		if t, ok := sameLong(data, sc.vals, v); ok {
			text = t
		} else if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
			text = string(inner)
		} else {
			text = DecodeString(data[v.Start:v.End])
		}
		if !keep(text) {
			return
		}
		sc.addPath(v.Path)
		sc.vals = append(sc.vals, TextValue{Start: v.Start, End: v.End, Text: text})
	}
	w.s.skipSpace()
	w.value()
	if len(sc.vals) == 0 {
		return nil
	}
	out := make([]T, len(sc.vals))
	joined := string(sc.paths)
	start := 0
	for i, v := range sc.vals {
		v.Path = joined[start:sc.ends[i]]
		start = sc.ends[i]
		out[i] = T(v)
	}
	clear(sc.vals) // the pool keeps no text
	return out
}

// sameLong returns the text of an earlier value of vals spelled as v is,
// when v is long: a client's line can hold a long text twice (Claude
// Code's tool output, in the message and in toolUseResult), and its two
// values then share one string instead of being decoded twice (52 MB each
// in a line of 110).
func sameLong(data []byte, vals []TextValue, v StringValue) (string, bool) {
	if v.End-v.Start < 64<<10 {
		return "", false
	}
	if i := SpelledBefore(data, vals, v.Start, v.End, false); i >= 0 {
		return vals[i].Text, true
	}
	return "", false
}

// SpelledBefore returns the index of the first of vals, long or not as
// long says, whose JSON in data is data[start:end], or -1.
func SpelledBefore[T TextValueLike](data []byte, vals []T, start, end int, long bool) int {
	raw := data[start:end]
	for i, t := range vals {
		u := TextValue(t)
		if u.Long == long && u.End-u.Start == len(raw) && bytes.Equal(data[u.Start:u.End], raw) {
			return i
		}
	}
	return -1
}

// scratch is TextValues' working memory, kept between calls.
type scratch struct {
	paths []byte
	ends  []int
	vals  []TextValue
}

// addPath joins path with dots after the paths before it.
func (sc *scratch) addPath(path []string) {
	for i, seg := range path {
		if i > 0 {
			sc.paths = append(sc.paths, '.')
		}
		sc.paths = append(sc.paths, seg...)
	}
	sc.ends = append(sc.ends, len(sc.paths))
}

// TextWindows decodes a quoted JSON string (as Strings spans it) a window
// at a time: the windows, joined, are DecodeString's text.
type TextWindows struct {
	inner []byte
	i     int
	valid bool
}

// NewTextWindows returns the windows of the quoted JSON string q.
func NewTextWindows(q []byte) *TextWindows {
	inner := q[1 : len(q)-1]
	return &TextWindows{inner: inner, valid: utf8.Valid(inner)}
}

// Next appends the next n bytes of text or so to dst (fewer at the end,
// a few more where an escape or a character would be cut).
func (w *TextWindows) Next(dst []byte, n int) []byte {
	dst, w.i = decodeUnits(dst, w.inner, w.i, w.valid, len(dst)+n)
	return dst
}

// Done reports whether the text has all been given.
func (w *TextWindows) Done() bool { return w.i >= len(w.inner) }

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// FieldText returns the text of a value TextValues gave: its
// Text, or, for a long one, its text decoded whole from data.
func FieldText[T TextValueLike](data []byte, f T) string {
	if v := TextValue(f); v.Long {
		return DecodeString(data[v.Start:v.End])
	}
	return TextValue(f).Text
}

// IsIndex reports whether a key of a path is an array index.
func IsIndex(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < '0' || k[i] > '9' {
			return false
		}
	}
	return true
}

// Key is the key a value at path goes by, for a text finder telling text
// from identities by it: its own key, or, for an element of an array, the
// array's.
func Key(path []string) string {
	k := path[len(path)-1]
	if IsIndex(k) && len(path) > 1 {
		k = path[len(path)-2]
	}
	return k
}
