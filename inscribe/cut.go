package inscribe

import (
	"strings"
	"unicode/utf8"
)

// CutText returns the longest prefix of s (longer than n bytes) of at most
// n bytes that ends between two words, or, in a run of more than 64 bytes
// without a space, between two characters: no cut word is indexed.
func CutText(s string, n int) string {
	const spaces = " \t\n\r"
	if strings.IndexByte(spaces, s[n]) >= 0 {
		return s[:n]
	}
	from := max(0, n-64)
	if i := strings.LastIndexAny(s[from:n], spaces); i >= 0 {
		return s[:from+i]
	}
	if n < 64 {
		return "" // the start of a word
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// cutTextEnd is CutText from the end: the longest suffix of s (longer
// than n bytes) of at most n bytes that starts between two words, or
// between two characters.
func cutTextEnd(s string, n int) string {
	const spaces = " \t\n\r"
	at := len(s) - n
	if strings.IndexByte(spaces, s[at-1]) >= 0 {
		return s[at:]
	}
	if i := strings.IndexAny(s[at:min(len(s), at+64)], spaces); i >= 0 {
		return s[at+i+1:]
	}
	if n < 64 {
		return ""
	}
	for at < len(s) && !utf8.RuneStart(s[at]) {
		at++
	}
	return s[at:]
}

// What of a text of a tool's result (a command's output, a file read) the
// store's index holds: its first ResultHead and last ResultTail bytes. The
// start of a long output says what it is, and its end, often, how it
// failed.
const (
	ResultHead = 48 << 10
	ResultTail = 16 << 10
)

// resultCut is the separator of a result's text cut in two.
const resultCut = "\n…\n"

// ResultText returns what the index holds of a text of a tool's result:
// the text, or, when it is longer than ResultHead and ResultTail and some,
// its first ResultHead and last ResultTail bytes, cut between words, on
// either side of a line "…". A text it returns it returns unchanged.
func ResultText(s string) string {
	if len(s) <= ResultHead+ResultTail+len(resultCut) {
		return s
	}
	return CutText(s, ResultHead) + resultCut + cutTextEnd(s, ResultTail)
}
