package redact

import (
	"encoding/base64"
	"strings"
	"unicode/utf8"
)

// minEncoded is the shortest run of base64 decoded to be scanned: 18
// bytes, shorter than any secret a rule finds with its context.
const minEncoded = 24

// maxDecode is how many times text is decoded within text (base64 of
// base64) to be scanned.
const maxDecode = 2

// encoded returns the secrets written in base64 in c: a run of base64 (of
// at least minEncoded characters, standard or URL-safe alphabet) that
// decodes to text in which the rules find a secret is a secret of that
// rule, and is replaced whole (echo QVdT… | base64 -d, a Kubernetes
// secret's data, a basic authorization header). gitleaks decodes too, but
// reports the decoded secret, which does not occur in the text to replace.
// A run longer than a chunk is decoded where it starts in one.
func (d *Detector) encoded(c string, depth int) []Finding {
	var out []Finding
	for i := 0; i < len(c); {
		if !isB64(c[i]) {
			i++
			continue
		}
		j := i
		for j < len(c) && isB64(c[j]) {
			j++
		}
		end := j
		for end < len(c) && end-j < 2 && c[end] == '=' {
			end++
		}
		run := c[i:end]
		i = end
		if j-(end-len(run)) < minEncoded {
			continue
		}
		text, ok := decodeText(run)
		if !ok {
			continue
		}
		for _, f := range d.scanDepth(text, depth+1) {
			out = append(out, Finding{Rule: f.Rule, Secret: run})
			break
		}
	}
	return out
}

// isB64 reports whether c is a character of base64, in the standard or
// the URL-safe alphabet (not its padding).
func isB64(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_'
}

// decodeText decodes a run of base64 that is text: UTF-8 with no control
// character but tab and line ends. Most runs of its alphabet are words,
// paths and hashes, which decode to bytes that are not.
func decodeText(run string) (string, bool) {
	s := strings.TrimRight(run, "=")
	enc := base64.RawStdEncoding
	if strings.ContainsAny(s, "-_") {
		if strings.ContainsAny(s, "+/") {
			return "", false
		}
		enc = base64.RawURLEncoding
	}
	if len(s)%4 == 1 {
		s = s[:len(s)-1]
	}
	b, err := enc.DecodeString(s)
	if err != nil || !utf8.Valid(b) {
		return "", false
	}
	for _, c := range b {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
			return "", false
		}
	}
	return string(b), true
}
