package inscribe

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// decodeState decodes a read note into st as encoding/json would, in one
// pass over the bytes, for a note as scribe writes it: the fields of a
// docState, strings without escapes, whole numbers. Anything else (an
// escape, a fraction, a null, a key it does not know) makes it report
// false, and the caller decodes the note with encoding/json, whose answer
// is the reference (FuzzDecodeState). An append over an unchanged tree
// reads one note per document, and encoding/json, which scans the bytes
// twice and fills the fields by reflection, was a tenth of its time.
func decodeState(data []byte, st *docState) bool {
	p := noteParser{b: data}
	if !p.state(st, 0) {
		return false
	}
	p.ws()
	return p.i == len(p.b)
}

// maxNoteDepth bounds the notes within notes (Next) the fast decoder
// follows: a note holds one at most.
const maxNoteDepth = 4

type noteParser struct {
	b []byte
	i int
}

func (p *noteParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// next consumes c, after any white space.
func (p *noteParser) next(c byte) bool {
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// peek reports whether c comes next, after any white space.
func (p *noteParser) peek(c byte) bool {
	p.ws()
	return p.i < len(p.b) && p.b[p.i] == c
}

// object calls field for each key of an object, positioned at its value.
func (p *noteParser) object(field func(key []byte) bool) bool {
	if !p.next('{') {
		return false
	}
	if p.next('}') {
		return true
	}
	for {
		p.ws()
		key, ok := p.rawString()
		if !ok || !p.next(':') {
			return false
		}
		p.ws()
		if !field(key) {
			return false
		}
		if p.next(',') {
			continue
		}
		return p.next('}')
	}
}

// rawString reads a string without escapes, of valid UTF-8, and returns
// its bytes.
func (p *noteParser) rawString() ([]byte, bool) {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return nil, false
	}
	start := p.i + 1
	for j := start; j < len(p.b); j++ {
		switch c := p.b[j]; {
		case c == '"':
			s := p.b[start:j]
			if !utf8.Valid(s) {
				return nil, false
			}
			p.i = j + 1
			return s, true
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

func (p *noteParser) str(to *string) bool {
	s, ok := p.rawString()
	*to = string(s)
	return ok
}

// integer reads a JSON number that is a whole number of bits bits.
func (p *noteParser) integer(bits int) (int64, bool) {
	start := p.i
	if p.i < len(p.b) && p.b[p.i] == '-' {
		p.i++
	}
	digits := p.i
	for p.i < len(p.b) && '0' <= p.b[p.i] && p.b[p.i] <= '9' {
		p.i++
	}
	n := p.i - digits
	if n == 0 || n > 1 && p.b[digits] == '0' {
		return 0, false
	}
	if p.i < len(p.b) {
		switch p.b[p.i] {
		case '.', 'e', 'E':
			return 0, false
		}
	}
	v, err := strconv.ParseInt(string(p.b[start:p.i]), 10, bits)
	return v, err == nil
}

func (p *noteParser) int64(to *int64) bool {
	v, ok := p.integer(64)
	*to = v
	return ok
}

func (p *noteParser) int(to *int) bool {
	v, ok := p.integer(strconv.IntSize)
	*to = int(v)
	return ok
}

func (p *noteParser) boolean(to *bool) bool {
	for _, lit := range []string{"true", "false"} {
		if bytes.HasPrefix(p.b[p.i:], []byte(lit)) {
			p.i += len(lit)
			*to = lit == "true"
			return true
		}
	}
	return false
}

// raw reads any JSON value and returns its bytes, as json.RawMessage
// holds them.
func (p *noteParser) raw(to *json.RawMessage) bool {
	start := p.i
	depth := 0
	for p.i < len(p.b) {
		switch c := p.b[p.i]; c {
		case '"':
			end := p.i + 1
			for ; end < len(p.b) && p.b[end] != '"'; end++ {
				if p.b[end] == '\\' {
					end++
				}
			}
			if end >= len(p.b) {
				return false
			}
			p.i = end + 1
			if depth == 0 {
				return p.rawValid(start, to)
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return p.rawValid(start, to)
			}
			depth--
			if depth == 0 {
				p.i++
				return p.rawValid(start, to)
			}
		case ',':
			if depth == 0 {
				return p.rawValid(start, to)
			}
		}
		p.i++
	}
	return p.rawValid(start, to)
}

func (p *noteParser) rawValid(start int, to *json.RawMessage) bool {
	v := bytes.TrimRight(p.b[start:p.i], " \t\n\r")
	if len(v) == 0 || !json.Valid(v) {
		return false
	}
	*to = append(json.RawMessage(nil), v...)
	return true
}

func (p *noteParser) roundSum(to **roundSum) bool {
	var r roundSum
	ok := p.object(func(key []byte) bool {
		switch string(key) {
		case "round":
			return p.int(&r.Round)
		case "size":
			return p.int64(&r.Size)
		case "sha256":
			return p.str(&r.SHA256)
		}
		return false
	})
	*to = &r
	return ok
}

func (p *noteParser) state(st *docState, depth int) bool {
	if depth > maxNoteDepth {
		return false
	}
	return p.object(func(key []byte) bool {
		switch string(key) {
		case "version":
			return p.int(&st.Version)
		case "source":
			return p.str(&st.Source)
		case "size":
			return p.int64(&st.Size)
		case "tail_hash":
			return p.str(&st.TailHash)
		case "seen":
			return p.int64(&st.Seen)
		case "open_offset":
			return p.int64(&st.OpenOffset)
		case "open_line":
			return p.int(&st.OpenLine)
		case "closed_hash":
			return p.str(&st.ClosedHash)
		case "closed_tail":
			return p.str(&st.ClosedTail)
		case "open_first_id":
			return p.str(&st.OpenFirstID)
		case "doc_open_at":
			return p.int64(&st.DocOpenAt)
		case "doc_tail_hash":
			return p.str(&st.DocTailHash)
		case "builder":
			return p.raw(&st.Builder)
		case "doc_format":
			return p.str(&st.DocFormat)
		case "graph_size":
			return p.int64(&st.GraphSize)
		case "rounds_size":
			var n int64
			st.RoundsSize = &n
			return p.int64(&n)
		case "open_round":
			return p.peek('{') && p.roundSum(&st.OpenRound)
		case "next":
			st.Next = &docState{}
			return p.peek('{') && p.state(st.Next, depth+1)
		case "none":
			return p.boolean(&st.None)
		}
		return false
	})
}
