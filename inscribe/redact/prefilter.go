package redact

import (
	"strings"
	"unicode/utf8"
)

// A prefilter answers, for a text, which of a set of keywords occur in
// it, ignoring case as gitleaks does (it looks for a rule's keywords in
// the text lowercased, and runs the rule only where one occurs): an
// Aho-Corasick automaton over lowercase bytes. Most texts hold none of the
// keywords; asking costs one pass over the text and allocates nothing
// then, where gitleaks lowercases a copy first.
type prefilter struct {
	// class maps a byte (lowercased) to its class: 0 for a byte no
	// keyword holds, else one of the width-1 bytes keywords hold. The
	// automaton's table has a column per class, not per byte: gitleaks'
	// keywords hold 40 or so bytes, and a table of 256 columns was
	// 1.8 MB of every redacting command's heap.
	class [256]uint8
	width int
	next  []int32   // goto, completed with the failure links: next[state*width+class]
	outs  [][]int32 // the keywords that end at each state
	n     int       // keywords
	// unicode is set when a keyword is not ASCII: texts that are not are
	// then lowercased as gitleaks lowercases them, before the automaton.
	unicode bool
}

func newPrefilter(keywords []string) *prefilter {
	p := &prefilter{n: len(keywords), width: 1}
	var bytesOf [256]bool
	for _, k := range keywords {
		for _, c := range []byte(strings.ToLower(k)) {
			bytesOf[c] = true
			if c >= utf8.RuneSelf {
				p.unicode = true
			}
		}
	}
	for c := range bytesOf {
		if bytesOf[c] {
			// At most 230 classes: a lowercased keyword holds no A to Z.
			p.class[c] = uint8(p.width)
			p.width++
		}
	}
	for c := range p.class {
		p.class[c] = p.class[lower[c]]
	}
	p.next = make([]int32, p.width)
	p.outs = make([][]int32, 1)
	for i, k := range keywords {
		if k == "" {
			continue
		}
		s := int32(0)
		for _, c := range []byte(strings.ToLower(k)) {
			at := int(s)*p.width + int(p.class[c])
			if p.next[at] == 0 {
				p.next = append(p.next, make([]int32, p.width)...)
				p.outs = append(p.outs, nil)
				p.next[at] = int32(len(p.outs) - 1)
			}
			s = p.next[at]
		}
		p.outs[s] = append(p.outs[s], int32(i))
	}
	// Breadth first: failure links, folded into the goto table. Class 0
	// (a byte of no keyword) always leads back to the start.
	fail := make([]int32, len(p.outs))
	var queue []int32
	for c := 1; c < p.width; c++ {
		if t := p.next[c]; t != 0 {
			queue = append(queue, t)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if f := fail[s]; len(p.outs[f]) > 0 {
			p.outs[s] = append(p.outs[s][:len(p.outs[s]):len(p.outs[s])], p.outs[f]...)
		}
		row, frow := int(s)*p.width, int(fail[s])*p.width
		for c := 1; c < p.width; c++ {
			t := p.next[row+c]
			if t == 0 {
				p.next[row+c] = p.next[frow+c]
				continue
			}
			fail[t] = p.next[frow+c]
			queue = append(queue, t)
		}
	}
	return p
}

// lower maps ASCII upper-case letters to lower case, every other byte to
// itself.
var lower = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if i >= 'A' && i <= 'Z' {
			t[i] = byte(i + 'a' - 'A')
		}
	}
	return t
}()

// hits returns, by keyword, whether it occurs in s lowercased
// (strings.ToLower, as gitleaks lowercases it); nil when none does.
// Lowercasing turns only two characters that are not ASCII into ASCII,
// the Kelvin sign (k) and the capital I with a dot (i): a text without
// them is read a byte at a time, unless a keyword is not ASCII.
func (p *prefilter) hits(s string) []bool {
	if p.unicode || strings.Contains(s, "\u212a") || strings.Contains(s, "\u0130") {
		s = strings.ToLower(s)
	}
	var hit []bool
	st := int32(0)
	for i := 0; i < len(s); i++ {
		st = p.next[int(st)*p.width+int(p.class[s[i]])]
		if outs := p.outs[st]; len(outs) > 0 {
			if hit == nil {
				hit = make([]bool, p.n)
			}
			for _, k := range outs {
				hit[k] = true
			}
		}
	}
	return hit
}
