package document

import (
	"strings"
	"unicode/utf8"
)

// Shown returns the text a document holds for s, and so reads back: s
// itself when it is valid UTF-8, else s with each byte that is not UTF-8
// replaced by U+FFFD, as the printer writes it (a document is UTF-8 text;
// the exact bytes stay in the round files). An exporter compares a text
// derived from the round files with the document's through Shown: a text
// with invalid bytes that nobody edited is then unchanged, and is exported
// from the round files byte for byte.
func Shown(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var sb strings.Builder
	sb.Grow(len(s) + 8)
	for _, r := range s { // an invalid byte ranges as one utf8.RuneError
		sb.WriteRune(r)
	}
	return sb.String()
}
