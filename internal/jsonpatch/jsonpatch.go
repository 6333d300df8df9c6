// Package jsonpatch finds and edits values of a JSON line in place,
// keeping every other byte, and encodes strings as the clients whose lines
// scribe keeps write them. Exporters use it to carry a person's edit of a
// document back into the source entry it came from; readers of small JSON
// files scribe writes walk them with it (Members).
package jsonpatch

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Patch replaces the value at path in a JSON entry with value (itself JSON)
// and returns the new entry. Every other byte of the entry is kept as it
// was, so an entry that a person edited in one place differs from the
// original in that place only. path is dot-separated: object keys, and
// array indexes in decimal ("message.content.0.text"); "" is the whole
// entry.
func Patch(entry []byte, path string, value []byte) ([]byte, error) {
	if path == "" {
		return append([]byte(nil), value...), nil
	}
	start, end, err := Locate(entry, strings.Split(path, "."))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := make([]byte, 0, len(entry)-(end-start)+len(value))
	out = append(out, entry[:start]...)
	out = append(out, value...)
	return append(out, entry[end:]...), nil
}

// EncodeString encodes s as Claude Code (JavaScript's JSON.stringify) and
// Codex (Rust's serde_json) write strings: only '"', '\\' and control
// characters are escaped, the common ones by their short escapes and the
// rest as \u00xx in lower-case hex; everything else, "<", ">", "&", U+2028,
// DEL and non-ASCII included, is written as is.
func EncodeString(s string) []byte {
	var b bytes.Buffer
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			if c < utf8.RuneSelf {
				b.WriteByte(c)
				i++
				continue
			}
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				b.WriteString(`\ufffd`)
			} else {
				b.WriteString(s[i : i+n])
			}
			i += n
			continue
		}
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			fmt.Fprintf(&b, `\u%04x`, c)
		}
		i++
	}
	b.WriteByte('"')
	return b.Bytes()
}

var errNotFound = errors.New("no such value in the entry")

// Locate returns the byte span of the value at path (split at its dots)
// in data.
func Locate(data []byte, path []string) (int, int, error) {
	s := &scanner{data: data}
	s.skipSpace()
	for _, seg := range path {
		s.skipSpace()
		if s.i >= len(s.data) {
			return 0, 0, errNotFound
		}
		switch s.data[s.i] {
		case '{':
			if err := s.findKey(seg); err != nil {
				return 0, 0, err
			}
		case '[':
			n, err := strconv.Atoi(seg)
			if err != nil || n < 0 {
				return 0, 0, errNotFound
			}
			if err := s.findIndex(n); err != nil {
				return 0, 0, err
			}
		default:
			return 0, 0, errNotFound
		}
	}
	s.skipSpace()
	start := s.i
	if err := s.skipValue(); err != nil {
		return 0, 0, err
	}
	return start, s.i, nil
}

// Members calls f with the key (its bytes between the quotes, as written)
// and the span data[start:end] of the value of each member of the JSON
// object that data holds, in order, until f returns false. It reports
// whether data is one object, with nothing but white space around it, and
// f took every member. It checks the object's own syntax; what a value
// holds is the caller's to check (a value's end is found by ValueEnd).
func Members(data []byte, f func(key []byte, start, end int) bool) bool {
	s := &scanner{data: data}
	if s.expect('{') != nil {
		return false
	}
	s.skipSpace()
	if s.i < len(s.data) && s.data[s.i] == '}' {
		s.i++
	} else {
		for {
			s.skipSpace()
			ks := s.i
			if s.skipString() != nil {
				return false
			}
			key := s.data[ks+1 : s.i-1]
			if s.expect(':') != nil {
				return false
			}
			s.skipSpace()
			vs := s.i
			if s.i = ValueEnd(s.data, vs); s.i < 0 || !f(key, vs, s.i) {
				return false
			}
			if s.expect(',') == nil {
				continue
			}
			if s.expect('}') != nil {
				return false
			}
			break
		}
	}
	s.skipSpace()
	return s.i == len(s.data)
}

// ValueEnd returns the offset just past the JSON value that starts at
// offset i of data, or -1 when data ends first. It looks only for where
// strings and nestings end, not at what they hold, so it is for JSON
// already validated (a line an adapter decoded), or whose values the
// caller checks: a number or a literal is taken up to the next delimiter.
func ValueEnd(data []byte, i int) int {
	depth := 0
	for i < len(data) {
		switch data[i] {
		case '"':
			if i = StringEnd(data, i); i < 0 || depth == 0 {
				return i
			}
		case '{', '[':
			depth++
			i++
		case '}', ']':
			if depth == 0 {
				return -1
			}
			depth--
			i++
			if depth == 0 {
				return i
			}
		default:
			if depth > 0 {
				i++
				continue
			}
			start := i
			for i < len(data) && !endsLiteral(data[i]) {
				i++
			}
			if i == start {
				return -1
			}
			return i
		}
	}
	return -1
}

type scanner struct {
	data []byte
	i    int
}

var errSyntax = errors.New("malformed JSON")

func (s *scanner) skipSpace() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) expect(c byte) error {
	s.skipSpace()
	if s.i >= len(s.data) || s.data[s.i] != c {
		return errSyntax
	}
	s.i++
	return nil
}

// findKey moves past the key seg of the object at s.i, to its value.
func (s *scanner) findKey(seg string) error {
	s.i++ // {
	for {
		s.skipSpace()
		if s.i < len(s.data) && s.data[s.i] == '}' {
			return errNotFound
		}
		start := s.i
		if err := s.skipString(); err != nil {
			return err
		}
		key, err := strconv.Unquote(string(s.data[start:s.i]))
		if err != nil {
			key = string(s.data[start+1 : s.i-1])
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		if key == seg {
			return nil
		}
		s.skipSpace()
		if err := s.skipValue(); err != nil {
			return err
		}
		s.skipSpace()
		if s.i < len(s.data) && s.data[s.i] == ',' {
			s.i++
			continue
		}
		return errNotFound
	}
}

// findIndex moves to element n of the array at s.i.
func (s *scanner) findIndex(n int) error {
	s.i++ // [
	for k := 0; ; k++ {
		s.skipSpace()
		if s.i < len(s.data) && s.data[s.i] == ']' {
			return errNotFound
		}
		if k == n {
			return nil
		}
		if err := s.skipValue(); err != nil {
			return err
		}
		s.skipSpace()
		if s.i < len(s.data) && s.data[s.i] == ',' {
			s.i++
			continue
		}
		return errNotFound
	}
}

func (s *scanner) skipString() error {
	if s.i >= len(s.data) || s.data[s.i] != '"' {
		return errSyntax
	}
	end := StringEnd(s.data, s.i)
	if end < 0 {
		s.i = len(s.data)
		return errSyntax
	}
	s.i = end
	return nil
}

// StringEnd returns the offset just past the JSON string that starts (its
// opening quote) at offset i of data, or -1 when it is not closed.
func StringEnd(data []byte, i int) int {
	i++
	for {
		// The next quote, unless a backslash escapes it.
		q := bytes.IndexByte(data[i:], '"')
		if q < 0 {
			return -1
		}
		end := i + q
		bs := 0
		for k := end - 1; k >= i && data[k] == '\\'; k-- {
			bs++
		}
		i = end + 1
		if bs%2 == 0 {
			return i
		}
	}
}

func (s *scanner) skipValue() error {
	s.skipSpace()
	if s.i >= len(s.data) {
		return errSyntax
	}
	switch c := s.data[s.i]; c {
	case '"':
		return s.skipString()
	case '{', '[':
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		s.i++
		for {
			s.skipSpace()
			if s.i < len(s.data) && s.data[s.i] == closer {
				s.i++
				return nil
			}
			if c == '{' {
				if err := s.skipString(); err != nil {
					return err
				}
				if err := s.expect(':'); err != nil {
					return err
				}
			}
			if err := s.skipValue(); err != nil {
				return err
			}
			s.skipSpace()
			if s.i < len(s.data) && s.data[s.i] == ',' {
				s.i++
			}
		}
	default:
		// A number, true, false or null: up to the next delimiter.
		start := s.i
		for s.i < len(s.data) && !endsLiteral(s.data[s.i]) {
			s.i++
		}
		if s.i == start {
			return errSyntax
		}
		return nil
	}
}

// endsLiteral reports whether c ends a number or a literal.
func endsLiteral(c byte) bool {
	switch c {
	case ',', ':', ']', '}', ' ', '\t', '\r', '\n':
		return true
	}
	return false
}
