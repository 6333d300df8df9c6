package jsonpatch

import (
	"bytes"
	"math"
	"strconv"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"

	"github.com/scribe-archive/scribe/internal/room"
)

// A StringValue is one string value of a JSON entry: where it lies (Start
// and End span the quoted string, quotes included) and the keys and array
// indexes that lead to it (Path; Patch and Locate take it joined with
// dots).
type StringValue struct {
	Path       []string
	Start, End int
	// Key marks an object's key (Keys): Path is then the key's own path.
	Key bool
}

// Strings calls fn for every string value of the JSON entry data (object
// keys are not values), in the order they appear. fn's Path is valid only
// during the call. A descent into an object or array that fn's skip reports
// for its path is not made: skip may be nil. Strings stops at the first
// syntax error and reports it; the values before it have been visited.
func Strings(data []byte, skip func(path []string) bool, fn func(v StringValue)) error {
	w := &walker{s: scanner{data: data}, skip: skip, fn: fn}
	w.s.skipSpace()
	return w.value()
}

// Keys is Strings for the keys of every object instead of its values.
func Keys(data []byte, fn func(v StringValue)) error {
	w := &walker{s: scanner{data: data}, fn: func(StringValue) {}, keys: fn}
	w.s.skipSpace()
	return w.value()
}

type walker struct {
	s    scanner
	path []string
	skip func([]string) bool
	fn   func(StringValue)
	keys func(StringValue)
	// inPlace reads the keys of the path in place in data, rather than
	// copying them (TextValues: the path does not outlive the walk, and
	// data does not change during it).
	inPlace bool
}

func (w *walker) value() error {
	s := &w.s
	s.skipSpace()
	if s.i >= len(s.data) {
		return errSyntax
	}
	switch s.data[s.i] {
	case '"':
		start := s.i
		if err := s.skipString(); err != nil {
			return err
		}
		w.fn(StringValue{Path: w.path, Start: start, End: s.i})
		return nil
	case '{', '[':
		if w.skip != nil && len(w.path) > 0 && w.skip(w.path) {
			return s.skipValue()
		}
		return w.container()
	}
	return s.skipValue()
}

func (w *walker) container() error {
	s := &w.s
	obj := s.data[s.i] == '{'
	closer := byte(']')
	if obj {
		closer = '}'
	}
	s.i++
	depth := len(w.path)
	for k := 0; ; k++ {
		s.skipSpace()
		if s.i < len(s.data) && s.data[s.i] == closer {
			s.i++
			return nil
		}
		seg := strconv.Itoa(k)
		if obj {
			start := s.i
			if err := s.skipString(); err != nil {
				return err
			}
			if q := s.data[start+1 : s.i-1]; w.inPlace && len(q) > 0 && bytes.IndexByte(q, '\\') < 0 {
				seg = unsafe.String(&q[0], len(q))
			} else {
				seg = unquoteKey(s.data[start:s.i])
			}
			if w.keys != nil {
				w.keys(StringValue{Path: append(w.path[:depth], seg), Start: start, End: s.i, Key: true})
			}
			if err := s.expect(':'); err != nil {
				return err
			}
		}
		w.path = append(w.path[:depth], seg)
		err := w.value()
		w.path = w.path[:depth]
		if err != nil {
			return err
		}
		s.skipSpace()
		if s.i < len(s.data) && s.data[s.i] == ',' {
			s.i++
			continue
		}
		if s.i < len(s.data) && s.data[s.i] == closer {
			s.i++
			return nil
		}
		return errSyntax
	}
}

func unquoteKey(q []byte) string {
	inner := q[1 : len(q)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return intern(inner)
	}
	if k, err := strconv.Unquote(string(q)); err == nil {
		return k
	}
	return string(inner)
}

// DecodeString decodes a quoted JSON string (as Strings spans it). Escapes
// are read as JSON reads them: a lone surrogate becomes U+FFFD, and so does
// each byte of invalid UTF-8.
func DecodeString(q []byte) string {
	inner := q[1 : len(q)-1]
	room.Make(len(inner)) // the text's buffer, of about the quoted bytes' length
	first := bytes.IndexByte(inner, '\\')
	valid := utf8.Valid(inner)
	if first < 0 && valid {
		return string(inner)
	}
	b, _ := decodeUnits(make([]byte, 0, len(inner)), inner, 0, valid, math.MaxInt)
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// DecodeInPlace decodes a quoted JSON string into its own bytes, as
// DecodeString would, and returns the text (a prefix of q's memory, which
// it overwrites); ok is false, and q is left alone, when it is not valid
// UTF-8 or holds an escape JSON does not have: decoded, those would not
// fit. Every escape's text is shorter than the escape, so the text is
// written behind what is still to be read.
func DecodeInPlace(q []byte) (text []byte, ok bool) {
	if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
		return nil, false
	}
	inner := q[1 : len(q)-1]
	if !utf8.Valid(inner) {
		return nil, false
	}
	for i := 0; ; {
		j := bytes.IndexByte(inner[i:], '\\')
		if j < 0 {
			break
		}
		i += j
		if i+1 >= len(inner) {
			return nil, false
		}
		switch inner[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i += 2
		case 'u':
			if _, n := hex4(inner[i+2:]); n != 4 {
				return nil, false
			}
			i += 6
		default:
			return nil, false
		}
	}
	if bytes.IndexByte(inner, '\\') < 0 {
		return inner, true
	}
	text, _ = decodeUnits(inner[:0], inner, 0, true, math.MaxInt)
	return text, true
}

// decodeUnits appends to dst the text of inner (a JSON string without its
// quotes) from offset i on, a unit at a time (an escape, the two escapes
// of a surrogate pair, a run of other bytes), until dst holds limit bytes
// or more or inner ends, and returns dst and the offset it stopped at: the
// start of a unit, or of a character in a run. valid is whether all of
// inner is valid UTF-8: a run is then copied as it is, else a character
// at a time (a bad byte is U+FFFD). Decoding a string in several calls
// gives what one call gives (TextWindows).
func decodeUnits(dst, inner []byte, i int, valid bool, limit int) ([]byte, int) {
	for i < len(inner) && len(dst) < limit {
		// A run without escapes, copied at once when it is valid UTF-8.
		j := bytes.IndexByte(inner[i:], '\\')
		if j < 0 {
			j = len(inner) - i
		}
		if j > 0 {
			run := inner[i : i+j]
			if room := limit - len(dst); len(run) > room {
				run = run[:runeCut(run, room)]
			}
			if valid {
				dst = append(dst, run...)
			} else {
				for r := run; len(r) > 0; {
					c, n := utf8.DecodeRune(r)
					dst = utf8.AppendRune(dst, c) // RuneError for a bad byte
					r = r[n:]
				}
			}
			i += len(run)
			continue
		}
		if i+1 >= len(inner) {
			dst = utf8.AppendRune(dst, utf8.RuneError)
			i++
			continue
		}
		switch e := inner[i+1]; e {
		case '"', '\\', '/':
			dst = append(dst, e)
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, n := hex4(inner[i+2:])
			if n == 0 {
				dst = utf8.AppendRune(dst, utf8.RuneError)
				i += 2
				continue
			}
			i += 2 + n
			if r >= 0xD800 && r < 0xDC00 {
				if len(inner) >= i+6 && inner[i] == '\\' && inner[i+1] == 'u' {
					if r2, m := hex4(inner[i+2:]); m == 4 && r2 >= 0xDC00 && r2 < 0xE000 {
						dst = utf8.AppendRune(dst, (r-0xD800)<<10+(r2-0xDC00)+0x10000)
						i += 6
						continue
					}
				}
				dst = utf8.AppendRune(dst, utf8.RuneError)
				continue
			}
			if r >= 0xDC00 && r < 0xE000 {
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default:
			dst = utf8.AppendRune(dst, utf8.RuneError)
		}
		i += 2
	}
	return dst, i
}

// runeCut returns where to cut run to keep about n of its bytes (n < len(run)):
// before the character byte n is in, or, if that is the first, after it.
// A byte that cannot continue a character starts one, whether run is
// valid UTF-8 or not, so a run decoded in two pieces reads as in one.
func runeCut(run []byte, n int) int {
	k := max(n, 1)
	for k > 0 && !utf8.RuneStart(run[k]) {
		k--
	}
	if k == 0 {
		for k = 1; k < len(run) && !utf8.RuneStart(run[k]); k++ {
		}
	}
	return k
}

func hex4(b []byte) (rune, int) {
	if len(b) < 4 {
		return 0, 0
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, 0
		}
	}
	return r, 4
}

// interned holds the object keys (and short paths) seen, so that walking
// a line does not allocate them again: a client writes a few hundred. It
// is copied on write, so that reading it (every key of every line, from
// every worker) takes no lock.
var interned atomic.Pointer[map[string]string]

func intern(b []byte) string {
	if m := interned.Load(); m != nil {
		if s, ok := (*m)[string(b)]; ok {
			return s
		}
	}
	s := string(b)
	if !internable(b) {
		return s
	}
	for {
		old := interned.Load()
		var next map[string]string
		if old == nil || len(*old) >= 1<<12 {
			next = map[string]string{s: s}
		} else {
			next = make(map[string]string, len(*old)+1)
			for k, v := range *old {
				next[k] = v
			}
			next[s] = s
		}
		if interned.CompareAndSwap(old, &next) {
			return s
		}
	}
}

// internable reports whether a key or path is worth keeping: short, a
// name rather than data (a file's path), with small indexes.
func internable(b []byte) bool {
	if len(b) > 48 {
		return false
	}
	digits := 0
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			if digits++; digits > 1 {
				return false // message.content.12: indexes past 9 vary too much
			}
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '-' || c == '.' || c == '$':
			digits = 0
		default:
			return false
		}
	}
	return true
}

// JoinPath joins a path with dots, as Patch and Locate take it; a short
// path is kept once for all (a client's paths repeat line after line).
func JoinPath(path []string) string {
	var buf [64]byte
	b := buf[:0]
	for i, seg := range path {
		if i > 0 {
			b = append(b, '.')
		}
		b = append(b, seg...)
	}
	if len(b) > len(buf) {
		return string(b)
	}
	return intern(b)
}
