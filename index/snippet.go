package index

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A hit's snippet is cut here, in Go, rather than by SQLite's snippet(),
// whose time grows with the square of the matches in a round: a common
// word in a round of 100 MB kept it busy for many minutes. This costs one
// pass over the round's text at most, and usually a few kilobytes: it
// finds the first match and cuts a window of tokens around it.
const (
	snippetTokens = 16   // tokens in a snippet, as snippet(…, 16) had
	snippetBefore = 3    // of which, at most, before the first match
	snippetBytes  = 240  // longest snippet, for rounds of very long tokens
	snippetReach  = 1024 // how far from the first match a snippet may reach
)

// snippet returns the part of body around the first match of the phrases
// (or the match at byte at, if at >= 0), each match marked with
// HighlightStart and HighlightEnd, and "…" where it cuts the body: text as
// it was written, on one line (each run of spaces, tabs and line breaks
// one space), cut between tokens. With no match (FTS5 folds some letters
// this does not), it is the start of body.
func snippet(body string, phrases []phrase, at int) string {
	m := at
	if m < 0 {
		var ok bool
		if m, ok = firstMatch(body, phrases); !ok {
			m, _, _ = nextToken(body, 0)
		}
	}
	// The tokens of the region around m.
	type span struct{ start, end int }
	lo, hi := runeStart(body, m-snippetReach), runeStart(body, m+snippetReach)
	region := body[:hi]
	var toks []span
	t := 0 // the token at m
	for i := lo; ; {
		start, end, next := nextToken(region, i)
		if start == len(region) {
			break
		}
		if start <= m {
			t = len(toks)
		}
		toks = append(toks, span{start, end})
		i = next
	}
	if len(toks) == 0 {
		return oneLine(cut(body, 0, runeStart(body, snippetBytes)))
	}
	// A window of snippetTokens tokens, snippetBefore of them before the
	// match unless the region ends too soon after it, and no longer than
	// snippetBytes unless one token is.
	a := max(0, t-snippetBefore)
	b := min(len(toks), a+snippetTokens)
	a = max(0, b-snippetTokens)
	for b-1 > t && toks[b-1].end-toks[a].start > snippetBytes {
		b--
	}
	for a < t && toks[b-1].end-toks[a].start > snippetBytes {
		a++
	}
	start, end := toks[a].start, toks[b-1].end
	if end-start > snippetBytes { // one long token
		start = max(start, runeStart(body, m-snippetBytes/4))
		end = min(end, runeStart(body, start+snippetBytes))
	}
	if a == 0 && lo == 0 {
		start = 0 // the body's first token: keep what leads up to it
	}
	if b == len(toks) && hi == len(body) {
		end = len(body) // its last: keep what follows it
	}

	// matchAt returns how many tokens the longest phrase that matches at
	// toks[i] spans within the snippet (0: none).
	matchAt := func(i int) int {
		n := 0
		for _, p := range phrases {
			if len(p.tokens) <= n || i+len(p.tokens) > b || toks[i+len(p.tokens)-1].end > end {
				continue
			}
			ok := true
			for k, want := range p.tokens {
				tk := toks[i+k]
				if !tokenMatches(body[tk.start:tk.end], want, p.prefix && k == len(p.tokens)-1) {
					ok = false
					break
				}
			}
			if ok {
				n = len(p.tokens)
			}
		}
		return n
	}
	var sb strings.Builder
	if start > 0 {
		sb.WriteString("…")
	}
	at = start
	for i := a; i < b; i++ {
		if toks[i].start < at {
			continue
		}
		n := matchAt(i)
		if n == 0 {
			continue
		}
		writeOneLine(&sb, body[at:toks[i].start])
		sb.WriteString(HighlightStart)
		writeOneLine(&sb, body[toks[i].start:toks[i+n-1].end])
		sb.WriteString(HighlightEnd)
		at = toks[i+n-1].end
	}
	writeOneLine(&sb, body[at:end])
	if end < len(body) {
		sb.WriteString("…")
	}
	return strings.TrimSpace(sb.String())
}

// oneLine is s with each run of white space and control characters one
// space.
func oneLine(s string) string {
	var sb strings.Builder
	writeOneLine(&sb, s)
	return sb.String()
}

// writeOneLine writes s with each run of white space and control
// characters as one space (none after one already written).
func writeOneLine(sb *strings.Builder, s string) {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			j := i + n
			for j < len(s) {
				r2, n2 := utf8.DecodeRuneInString(s[j:])
				if !unicode.IsSpace(r2) && !unicode.IsControl(r2) {
					break
				}
				j += n2
			}
			if b := sb.String(); !strings.HasSuffix(b, " ") {
				sb.WriteByte(' ')
			}
			i = j
			continue
		}
		sb.WriteString(s[i : i+n])
		i += n
	}
}

// tokenMatches reports whether a token of the text is want, case aside,
// or with prefix, starts with it.
func tokenMatches(got, want string, prefix bool) bool {
	if prefix && len(got) > len(want) {
		got = got[:len(want)]
	}
	return strings.EqualFold(got, want)
}

// firstMatch returns where the first match of any phrase in body starts.
// It looks for each phrase's first token as bytes, with ASCII letters in
// lower case, and checks what it finds token by token; a phrase whose
// first token has other letters is looked for token by token throughout.
func firstMatch(body string, phrases []phrase) (int, bool) {
	var keys [][]byte
	slow := false
	for _, p := range phrases {
		key := appendASCIILower(nil, p.tokens[0])
		keys = append(keys, key)
		for i := 0; i < len(key); i++ {
			if key[i] >= utf8.RuneSelf {
				slow = true
			}
		}
	}
	if slow {
		return firstMatchByToken(body, phrases)
	}
	longest := 0
	for _, k := range keys {
		longest = max(longest, len(k))
	}
	var buf []byte
	chunk := 64 << 10 // grows: a common word is found at once
	for off := 0; off < len(body); off += chunk {
		if off > 0 {
			chunk = min(2*chunk, 4<<20)
		}
		buf = appendASCIILower(buf[:0], body[off:min(len(body), off+chunk+longest)])
		best := -1
		for pi, key := range keys {
			limit := chunk // look at what starts in this chunk, before the best so far
			if best >= 0 {
				limit = best - off
			}
			for from := 0; from < limit; {
				j := bytes.Index(buf[from:], key)
				if j < 0 || from+j >= limit {
					break
				}
				if at := off + from + j; matchesAt(body, at, phrases[pi]) {
					best = at
					break
				}
				from += j + 1
			}
		}
		if best >= 0 {
			return best, true
		}
	}
	return 0, false
}

// matchesAt reports whether phrase p matches body at byte at, which must
// start a token.
func matchesAt(body string, at int, p phrase) bool {
	if !isTokenStart(body, at) {
		return false
	}
	start := at
	end, next := tokenAt(body, at)
	for k, want := range p.tokens {
		if k > 0 {
			start, end, next = nextToken(body, next)
		}
		if start == len(body) || !tokenMatches(body[start:end], want, p.prefix && k == len(p.tokens)-1) {
			return false
		}
	}
	return true
}

func firstMatchByToken(body string, phrases []phrase) (int, bool) {
	for i := 0; ; {
		start, _, next := nextToken(body, i)
		if start == len(body) {
			return 0, false
		}
		for _, p := range phrases {
			if matchesAt(body, start, p) {
				return start, true
			}
		}
		i = next
	}
}

func appendASCIILower(buf []byte, s string) []byte {
	buf = append(buf, s...)
	for i, c := range buf {
		if 'A' <= c && c <= 'Z' {
			buf[i] = c + 'a' - 'A'
		}
	}
	return buf
}

// runeStart returns i, clamped to s, moved back to the start of a rune.
func runeStart(s string, i int) int {
	i = max(0, min(i, len(s)))
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

// cut is s[start:end] with "…" where it cuts s.
func cut(s string, start, end int) string {
	out := s[start:end]
	if start > 0 {
		out = "…" + out
	}
	if end < len(s) {
		out += "…"
	}
	return out
}
