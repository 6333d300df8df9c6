package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Every result is text the model reads within its context, so every result
// has a budget in bytes (the max_bytes argument, DefaultBudget when not
// given), which its text never exceeds. A list that does not fit ends with
// a cursor; a round or a view that does not fit is cut at a line where it
// can be, and its cursor continues it there.
const (
	DefaultBudget = 20000
	MinBudget     = 8000
	MaxBudget     = 100000
)

// budgetOf reads a max_bytes argument (0: not given).
func budgetOf(n int) (int, error) {
	switch {
	case n == 0:
		return DefaultBudget, nil
	case n < MinBudget || n > MaxBudget:
		return 0, fmt.Errorf("max_bytes %d: give %d to %d (the default is %d)", n, MinBudget, MaxBudget, DefaultBudget)
	}
	return n, nil
}

// tailRoom is what a page keeps free for what ends it: the cursor and a
// note.
const tailRoom = 600

// A cursor says where a paged result goes on: two numbers whose meaning is
// the tool's, and a hash of the arguments that chose what is paged, so
// that a cursor given with other arguments is refused rather than
// misread. It reads "<a>.<b>.<hash>".
func makeCursor(tool string, args any, a, b int) string {
	return fmt.Sprintf("%d.%d.%s", a, b, argsHash(tool, args))
}

// readCursor reads a cursor made for the same tool and arguments; "" is
// the start (0, 0).
func readCursor(c, tool string, args any) (a, b int, err error) {
	if c == "" {
		return 0, 0, nil
	}
	parts := strings.Split(c, ".")
	if len(parts) == 3 {
		x, err1 := strconv.Atoi(parts[0])
		y, err2 := strconv.Atoi(parts[1])
		if err1 == nil && err2 == nil && x >= 0 && y >= 0 {
			if parts[2] != argsHash(tool, args) {
				return 0, 0, fmt.Errorf("cursor %q was given for other arguments: call %s again with the arguments of the call that returned it, or without a cursor to start over", c, tool)
			}
			return x, y, nil
		}
	}
	return 0, 0, fmt.Errorf("cursor %q is not one %s returned: give the next_cursor of its last result, or no cursor to start over", c, tool)
}

func argsHash(tool string, args any) string {
	b, _ := json.Marshal(args)
	h := fnv.New32a()
	h.Write([]byte(tool))
	h.Write([]byte{0})
	h.Write(b)
	return fmt.Sprintf("%08x", h.Sum32())
}

// clip shortens s to at most n bytes, at a character boundary, marking
// the cut with "…".
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "…"
	cut := n - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:max(cut, 0)] + mark
}

// cutAt returns how much of text fits in room bytes: all of it, else a
// prefix that ends at a character boundary, at a line's end when one lies
// in the second half of room. It is at least one character when room
// holds one.
func cutAt(text []byte, room int) int {
	if len(text) <= room {
		return len(text)
	}
	if room <= 0 {
		return 0
	}
	if nl := bytes.LastIndexByte(text[:room], '\n'); nl >= room/2 {
		return nl + 1
	}
	n := room
	for n > 0 && !utf8.RuneStart(text[n]) {
		n--
	}
	if n == 0 {
		if _, size := utf8.DecodeRune(text); size <= room {
			return size
		}
	}
	return n
}

// listPage is a JSON object holding a list, written item by item within a
// budget: {<head fields>"<name>":[<item>,\n<item>...],<tail fields>}.
type listPage struct {
	budget int
	buf    bytes.Buffer
	n      int // items in the list
}

// newListPage starts a page whose object has head's fields (a struct or
// map marshalled as an object; nil: none) and then the list name.
func newListPage(budget int, head any, name string) *listPage {
	p := &listPage{budget: budget}
	p.buf.WriteByte('{')
	if head != nil {
		b := marshal(head)
		if inner := bytes.TrimSpace(b[1 : len(b)-1]); len(inner) > 0 {
			p.buf.Write(inner)
			p.buf.WriteByte(',')
		}
	}
	p.buf.WriteString(strconv.Quote(name))
	p.buf.WriteString(":[")
	return p
}

// add appends an item if it fits, keeping tailRoom free, and reports
// whether it did.
func (p *listPage) add(item any) bool {
	b := marshal(item)
	if p.buf.Len()+len(b)+2+tailRoom > p.budget {
		return false
	}
	if p.n > 0 {
		p.buf.WriteByte(',')
	}
	p.buf.WriteByte('\n')
	p.buf.Write(b)
	p.n++
	return true
}

// finish closes the list and the object with tail's fields.
func (p *listPage) finish(tail any) string {
	if p.n > 0 {
		p.buf.WriteByte('\n')
	}
	p.buf.WriteByte(']')
	b := marshal(tail)
	if inner := bytes.TrimSpace(b[1 : len(b)-1]); len(inner) > 0 {
		p.buf.WriteByte(',')
		p.buf.Write(inner)
	}
	p.buf.WriteString("}\n")
	return p.buf.String()
}

// marshal encodes v as compact JSON without HTML escaping (a model reads
// <, > and & better as themselves).
func marshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // only the server's own types are encoded
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// pageTail ends a page: where it goes on, and a note for the model.
type pageTail struct {
	Next string `json:"next_cursor,omitempty"`
	Note string `json:"note,omitempty"`
}
