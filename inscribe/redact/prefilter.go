package redact

import (
	"strings"
	"unicode/utf8"
)

// A prefilter answers, for a text, whether any of a set of keywords occurs
// in it, ignoring ASCII case: an Aho-Corasick automaton over lowercase
// bytes. gitleaks runs a rule only when one of its keywords occurs in the
// text (lowercased), so a text none of the rules' keywords occurs in is
// one gitleaks finds nothing in; most texts are such. Asking costs one
// pass over the text and allocates nothing, where gitleaks lowercases a
// copy first.
type prefilter struct {
	next [][256]int32 // goto, completed with the failure links
	out  []bool       // a keyword ends at this state
	// always is set when a keyword is not ASCII: the filter then passes
	// every text.
	always bool
}

func newPrefilter(keywords []string) *prefilter {
	p := &prefilter{next: make([][256]int32, 1), out: make([]bool, 1)}
	for _, k := range keywords {
		if k == "" {
			continue
		}
		for i := 0; i < len(k); i++ {
			if k[i] >= utf8.RuneSelf {
				p.always = true
			}
		}
		s := int32(0)
		for _, c := range []byte(strings.ToLower(k)) {
			if p.next[s][c] == 0 {
				p.next = append(p.next, [256]int32{})
				p.out = append(p.out, false)
				p.next[s][c] = int32(len(p.next) - 1)
			}
			s = p.next[s][c]
		}
		p.out[s] = true
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
		p.out[s] = p.out[s] || p.out[fail[s]]
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

// any reports whether a keyword occurs in s, in any case. The Kelvin sign
// lowercases to k: a text that holds one always passes.
func (p *prefilter) any(s string) bool {
	if p.always || strings.Contains(s, "\u212a") {
		return true
	}
	st := int32(0)
	for i := 0; i < len(s); i++ {
		st = p.next[st][lower[s[i]]]
		if p.out[st] {
			return true
		}
	}
	return false
}
