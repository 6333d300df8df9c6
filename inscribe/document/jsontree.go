package document

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/scribe-archive/scribe/internal/jsonpatch"
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

// decodeTree reads one JSON value. Numbers keep their literal. It reads
// what encoding/json's Decoder reads, token for token (FuzzDecodeTree
// compares them), at a fraction of its cost: a document renders every
// tool call's input through it, twice.
func decodeTree(data []byte) (*jnode, error) {
	if !json.Valid(data) {
		// Unmarshal checks as Valid does, first: its error says what is
		// wrong, as encoding/json says it.
		var v any
		return nil, json.Unmarshal(data, &v)
	}
	t := treeReader{data: data}
	return t.value(), nil
}

// treeReader reads a JSON value json.Valid accepted.
type treeReader struct {
	data []byte
	i    int
}

func (t *treeReader) space() {
	for t.i < len(t.data) {
		switch t.data[t.i] {
		case ' ', '\t', '\n', '\r':
			t.i++
		default:
			return
		}
	}
}

func (t *treeReader) value() *jnode {
	t.space()
	switch c := t.data[t.i]; c {
	case '{':
		n := &jnode{kind: 'o'}
		t.i++
		for t.space(); t.data[t.i] != '}'; t.space() {
			if t.data[t.i] == ',' {
				t.i++
				t.space()
			}
			k := t.str()
			t.space()
			t.i++ // :
			n.keys = append(n.keys, k)
			n.kids = append(n.kids, t.value())
		}
		t.i++
		return n
	case '[':
		n := &jnode{kind: 'a'}
		t.i++
		for t.space(); t.data[t.i] != ']'; t.space() {
			if t.data[t.i] == ',' {
				t.i++
			}
			n.kids = append(n.kids, t.value())
		}
		t.i++
		return n
	case '"':
		return &jnode{kind: 's', str: t.str()}
	case 't':
		t.i += len("true")
		return &jnode{kind: 'b', str: "true"}
	case 'f':
		t.i += len("false")
		return &jnode{kind: 'b', str: "false"}
	case 'n':
		t.i += len("null")
		return &jnode{kind: 'z'}
	}
	start := t.i
	for t.i < len(t.data) && strings.IndexByte("+-.0123456789eE", t.data[t.i]) >= 0 {
		t.i++
	}
	return &jnode{kind: 'n', str: string(t.data[start:t.i])}
}

// str reads a string at t.i and decodes it as encoding/json does.
func (t *treeReader) str() string {
	start := t.i
	t.i = jsonpatch.StringEnd(t.data, t.i)
	return jsonpatch.DecodeString(t.data[start:t.i])
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
