package document

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// jnode is a JSON value that keeps what encoding/json's maps lose: the order
// of an object's keys, repeated keys, and a number's literal. A tool view
// (views.go) takes string values out of a tool call's input and writes the
// rest as a template; the parser puts the values back and encodes the tree,
// which must give the input's bytes again.
type jnode struct {
	kind byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' true or false, 'z' null
	str  string
	keys []string // object
	kids []*jnode // object values, array elements
}

var errJSONTrailing = errors.New("JSON value followed by more data")

// decodeTree reads one JSON value. Numbers keep their literal.
func decodeTree(data []byte) (*jnode, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := decodeNode(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errJSONTrailing
	}
	return n, nil
}

func decodeNode(dec *json.Decoder) (*jnode, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch v := tok.(type) {
	case json.Delim:
		switch v {
		case '{':
			n := &jnode{kind: 'o'}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				kid, err := decodeNode(dec)
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, k.(string))
				n.kids = append(n.kids, kid)
			}
			_, err := dec.Token() // '}'
			return n, err
		case '[':
			n := &jnode{kind: 'a'}
			for dec.More() {
				kid, err := decodeNode(dec)
				if err != nil {
					return nil, err
				}
				n.kids = append(n.kids, kid)
			}
			_, err := dec.Token() // ']'
			return n, err
		}
		return nil, fmt.Errorf("unexpected %v", v)
	case string:
		return &jnode{kind: 's', str: v}, nil
	case json.Number:
		return &jnode{kind: 'n', str: string(v)}, nil
	case bool:
		return &jnode{kind: 'b', str: strconv.FormatBool(v)}, nil
	case nil:
		return &jnode{kind: 'z'}, nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

// encode writes the value as compact JSON, its strings escaped as
// JavaScript's JSON.stringify and Rust's serde_json escape them (the clients
// that write the inputs scribe shows): '"', '\\' and the control
// characters, nothing else; with ascii, also every character past ASCII,
// as "\u" and four lowercase hex digits (a surrogate pair past U+FFFF), as
// Python's json.dumps does.
func (n *jnode) encode(w Writer, ascii bool) {
	switch n.kind {
	case 'o':
		w.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				w.WriteByte(',')
			}
			writeJSString(w, k, ascii)
			w.WriteByte(':')
			n.kids[i].encode(w, ascii)
		}
		w.WriteByte('}')
	case 'a':
		w.WriteByte('[')
		for i, k := range n.kids {
			if i > 0 {
				w.WriteByte(',')
			}
			k.encode(w, ascii)
		}
		w.WriteByte(']')
	case 's':
		writeJSString(w, n.str, ascii)
	case 'n', 'b':
		w.WriteString(n.str)
	default:
		w.WriteString("null")
	}
}

func (n *jnode) bytes(ascii bool) []byte {
	var buf bytes.Buffer
	n.encode(&buf, ascii)
	return buf.Bytes()
}

func writeJSString(w Writer, s string, ascii bool) {
	w.WriteByte('"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 && ascii {
			w.WriteString(s[start:i])
			r, size := utf8.DecodeRuneInString(s[i:])
			if r >= 0x10000 {
				r1, r2 := utf16.EncodeRune(r)
				fmt.Fprintf(w, `\u%04x\u%04x`, r1, r2)
			} else {
				fmt.Fprintf(w, `\u%04x`, r)
			}
			i += size - 1
			start = i + 1
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		w.WriteString(s[start:i])
		switch c {
		case '"':
			w.WriteString(`\"`)
		case '\\':
			w.WriteString(`\\`)
		case '\n':
			w.WriteString(`\n`)
		case '\r':
			w.WriteString(`\r`)
		case '\t':
			w.WriteString(`\t`)
		case '\b':
			w.WriteString(`\b`)
		case '\f':
			w.WriteString(`\f`)
		default:
			fmt.Fprintf(w, `\u%04x`, c)
		}
		start = i + 1
	}
	w.WriteString(s[start:])
	w.WriteByte('"')
}

// clone returns a deep copy.
func (n *jnode) clone() *jnode {
	c := &jnode{kind: n.kind, str: n.str, keys: append([]string(nil), n.keys...)}
	for _, k := range n.kids {
		c.kids = append(c.kids, k.clone())
	}
	return c
}

// A path names a value inside a JSON value: keys and array indexes joined
// by ".", or "." for the value itself. The first of repeated keys is the
// one named.
const rootPath = "."

func splitPath(p string) []string {
	if p == rootPath {
		return nil
	}
	return strings.Split(p, ".")
}

// at returns the value at path p, or nil.
func (n *jnode) at(p string) *jnode {
	for _, seg := range splitPath(p) {
		if n = n.child(seg); n == nil {
			return nil
		}
	}
	return n
}

func (n *jnode) child(seg string) *jnode {
	switch n.kind {
	case 'o':
		for i, k := range n.keys {
			if k == seg {
				return n.kids[i]
			}
		}
	case 'a':
		if i, err := strconv.Atoi(seg); err == nil && i >= 0 && i < len(n.kids) && strconv.Itoa(i) == seg {
			return n.kids[i]
		}
	}
	return nil
}

// str returns the string at path p.
func (n *jnode) strAt(p string) (string, bool) {
	v := n.at(p)
	if v == nil || v.kind != 's' {
		return "", false
	}
	return v.str, true
}

// set replaces the value at path p by the string s; it reports whether the
// path names a value.
func (n *jnode) set(p, s string) bool {
	v := n.at(p)
	if v == nil {
		return false
	}
	*v = jnode{kind: 's', str: s}
	return true
}

// blank replaces the value at path p by null: in a template, the place of a
// value the view shows.
func (n *jnode) blank(p string) {
	if v := n.at(p); v != nil {
		*v = jnode{kind: 'z'}
	}
}

// validPath reports whether p is a path as views write them.
func validPath(p string) bool {
	if p == rootPath {
		return true
	}
	if p == "" || !utf8.ValidString(p) {
		return false
	}
	for _, seg := range strings.Split(p, ".") {
		if seg == "" || strings.ContainsAny(seg, " \t\n\r") {
			return false
		}
	}
	return true
}
