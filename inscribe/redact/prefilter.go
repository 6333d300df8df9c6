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
	next [][256]int32 // goto, completed with the failure links
	outs [][]int32    // the keywords that end at each state
	n    int          // keywords
	// unicode is set when a keyword is not ASCII: texts that are not are
	// then lowercased as gitleaks lowercases them, before the automaton.
	unicode bool
}

func newPrefilter(keywords []string) *prefilter {
	p := &prefilter{next: make([][256]int32, 1), outs: make([][]int32, 1), n: len(keywords)}
	for i, k := range keywords {
		if k == "" {
			continue
		}
		for j := 0; j < len(k); j++ {
			if k[j] >= utf8.RuneSelf {
				p.unicode = true
			}
		}
		s := int32(0)
		for _, c := range []byte(strings.ToLower(k)) {
			if p.next[s][c] == 0 {
				p.next = append(p.next, [256]int32{})
				p.outs = append(p.outs, nil)
				p.next[s][c] = int32(len(p.next) - 1)
			}
			s = p.next[s][c]
		}
		p.outs[s] = append(p.outs[s], int32(i))
	}
	// Breadth first: failure links, folded into the goto table.
	fail := make([]int32, len(p.next))
	var queue []int32
	for c := 0; c < 256; c++ {
		if t := p.next[0][c]; t != 0 {
			queue = append(queue, t)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if f := fail[s]; len(p.outs[f]) > 0 {
			p.outs[s] = append(p.outs[s][:len(p.outs[s]):len(p.outs[s])], p.outs[f]...)
		}
		for c := 0; c < 256; c++ {
			t := p.next[s][c]
			if t == 0 {
				p.next[s][c] = p.next[fail[s]][c]
				continue
			}
			fail[t] = p.next[fail[s]][c]
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
		st = p.next[st][lower[s[i]]]
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
