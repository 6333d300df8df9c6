package redact

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/scribe-archive/scribe/internal/jsonpatch"
	"github.com/scribe-archive/scribe/session/source"
)

// A Redactor replaces the secrets a Detector finds with markers keyed by a
// store's key.
type Redactor struct {
	// Detector finds the secrets; when nil, build makes it on first use.
	Detector *Detector
	Key      []byte

	// build makes the detector of a store's settings (Settings.Redactor)
	// when a text is first scanned: loading gitleaks' rules costs some 60
	// ms and 12 MB of heap, which a command with nothing to scan (append
	// of a session with nothing new, from a hook) should not pay.
	build func() *Detector
	once  sync.Once
}

// KeyID names the markers' key: the first 4 bytes, in hex, of a SHA-256
// of it, which does not give it away (inscribe.Redactor).
func (r *Redactor) KeyID() string {
	h := sha256.Sum256(append([]byte("scribe marker key\x00"), r.Key...))
	return hex.EncodeToString(h[:4])
}

// detector returns the detector, made on first use.
func (r *Redactor) detector() *Detector {
	r.once.Do(func() {
		if r.Detector == nil && r.build != nil {
			r.Detector = r.build()
		}
	})
	return r.Detector
}

// Find returns the secrets in text (Detector.Find).
func (r *Redactor) Find(text string) []Finding { return r.detector().Find(text) }

// A Replacement is one secret replaced.
type Replacement struct {
	Rule   string // the rule that found it
	Marker string // what replaced it
	// Path is the JSON path of the value it was found in ("" for a text
	// that is not a line's value).
	Path string
	// Excerpt is the text around the secret, with the secret masked: it
	// shows where the secret was without showing it.
	Excerpt string
}

// MarkerPattern returns the expression that matches a marker:
// [REDACTED:<rule>:<hash>] (compiled when first asked for).
var MarkerPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[REDACTED:[A-Za-z0-9_.-]+(?::[0-9a-f]+)?\]`) })

// Marker returns the marker that replaces secret, found by rule: the rule
// and the first 4 hex digits of the secret's HMAC-SHA256 under the store's
// key. Four digits tell equal secrets apart from other secrets of a session
// (a collision is a 1 in 65,536 chance per pair) while giving away at most
// 16 bits about a weak secret to someone who holds the store and its key.
func (r *Redactor) Marker(rule, secret string) string {
	m := hmac.New(sha256.New, r.Key)
	m.Write([]byte(secret))
	return "[REDACTED:" + rule + ":" + hex.EncodeToString(m.Sum(nil))[:4] + "]"
}

// Text returns text with every occurrence of every secret found in it
// replaced, and what was replaced (once per secret).
func (r *Redactor) Text(text string) (string, []Replacement) {
	fs := r.Find(text)
	if len(fs) == 0 {
		return text, nil
	}
	return r.apply(text, fs, "")
}

// apply replaces the secrets fs in text.
func (r *Redactor) apply(text string, fs []Finding, path string) (string, []Replacement) {
	var reps []Replacement
	// Longest first, so a secret that holds another is replaced whole.
	sort.SliceStable(fs, func(i, j int) bool { return len(fs[i].Secret) > len(fs[j].Secret) })
	for _, f := range fs {
		i := strings.Index(text, f.Secret)
		if i < 0 {
			continue
		}
		m := r.Marker(f.Rule, f.Secret)
		reps = append(reps, Replacement{Rule: f.Rule, Marker: m, Path: path, Excerpt: Excerpt(text, i, i+len(f.Secret))})
		text = strings.ReplaceAll(text, f.Secret, m)
	}
	return text, reps
}

// Excerpt returns the line of text around text[i:j] with that part
// masked: its first characters (at most 4, and at most a quarter of it),
// then "…" and its length. The context shows no secret either: a word
// cut at its edge is left out, and every word that looks like a secret
// (maskLooking) is masked, whether a rule found it or not.
func Excerpt(text string, i, j int) string {
	start := max(0, i-30)
	if nl := strings.LastIndexByte(text[start:i], '\n'); nl >= 0 {
		start += nl + 1
	}
	for start > 0 && start < i && tokenByte(text[start-1]) && tokenByte(text[start]) {
		start++ // a word cut short: left out
	}
	end := min(len(text), j+30)
	if nl := strings.IndexByte(text[j:end], '\n'); nl >= 0 {
		end = j + nl
	}
	for end < len(text) && end > j && tokenByte(text[end]) && tokenByte(text[end-1]) {
		end--
	}
	return maskLooking(clean(text[start:i])) + Mask(text[i:j]) + maskLooking(clean(text[j:end]))
}

// tokenByte reports whether c can be part of a secret as maskLooking reads
// words: letters, digits and the punctuation of keys and encodings.
func tokenByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("+/=_-.", c) >= 0
}

// maskLooking masks the words of s that look like secrets, as Mask does:
// 12 characters or more of letters, digits and +/=_-. holding upper
// case, lower case and digits, or 20 and more holding letters and digits.
// Words of prose, paths and times do not.
func maskLooking(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if !tokenByte(s[i]) {
			b.WriteByte(s[i])
			i++
			continue
		}
		j := i
		var upper, lower, digit bool
		for j < len(s) && tokenByte(s[j]) {
			c := s[j]
			upper = upper || c >= 'A' && c <= 'Z'
			lower = lower || c >= 'a' && c <= 'z'
			digit = digit || c >= '0' && c <= '9'
			j++
		}
		w := s[i:j]
		if len(w) >= 12 && upper && lower && digit || len(w) >= 20 && (upper || lower) && digit {
			b.WriteString(Mask(w))
		} else {
			b.WriteString(w)
		}
		i = j
	}
	return b.String()
}

// Mask shows a secret as its first characters and its length.
func Mask(s string) string {
	rs := []rune(s)
	show := min(4, len(rs)/4)
	return string(rs[:show]) + "…(" + itoa(len(rs)) + " chars)"
}

func clean(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// junction is how much of two neighbouring fields is scanned together, for
// a secret split between them.
const junction = 256

// Line returns a JSON line with the secrets in its text fields replaced,
// every other byte kept, and what was replaced; it returns line itself
// when nothing was. A secret found in one field is replaced in every text
// field of the line. One split between two neighbouring fields (a key cut
// across two content blocks) is replaced in both: each part by the
// secret's marker.
func (r *Redactor) Line(line []byte, fields []source.TextField) ([]byte, []Replacement) {
	if len(fields) == 0 {
		return line, nil
	}
	var all []Finding
	seen := map[string]bool{}
	add := func(fs []Finding) {
		for _, f := range fs {
			if !seen[f.Secret] {
				seen[f.Secret] = true
				all = append(all, f)
			}
		}
	}
	for i, f := range fields {
		if f.Long {
			// The client's copy of a tool's output is scanned once.
			if jsonpatch.SpelledBefore(line, fields[:i], f.Start, f.End, true) < 0 {
				add(r.detector().find(func() *textStream { return longStream(line, f) }))
			}
			continue
		}
		if len(f.Text) < minSecret {
			continue
		}
		dup := false
		for _, g := range fields[:i] {
			if len(g.Text) == len(f.Text) && g.Text == f.Text {
				dup = true // the client's copy of a tool's output
				break
			}
		}
		if !dup {
			add(r.Find(f.Text))
		}
	}
	// Secrets split between neighbouring content blocks (the same list,
	// consecutive indexes): found in the junction, in neither block whole.
	splits := map[int][]split{}
	for i := 0; i+1 < len(fields); i++ {
		if siblings(fields[i].Path, fields[i+1].Path) {
			if ss := r.splits(junctionText(line, fields[i], true), junctionText(line, fields[i+1], false)); len(ss) > 0 {
				splits[i] = ss
			}
		}
	}
	if len(all) == 0 && len(splits) == 0 {
		return line, nil
	}
	// The texts before and after: a long one is decoded only where a
	// secret is replaced in it.
	orig, texts := make([]string, len(fields)), make([]string, len(fields))
	decode := func(i int) {
		if fields[i].Long && orig[i] == "" {
			orig[i] = FieldText(line, fields[i])
			texts[i] = orig[i]
		}
	}
	var reps []Replacement
	for i, f := range fields {
		orig[i], texts[i] = f.Text, f.Text
		if len(all) > 0 {
			if f.Long {
				if !r.occursLong(line, f, all) {
					continue
				}
				decode(i)
			}
			var rs []Replacement
			texts[i], rs = r.apply(texts[i], append([]Finding(nil), all...), f.Path)
			reps = append(reps, rs...)
		}
	}
	for i, ss := range splits {
		decode(i)
		decode(i + 1)
		for _, s := range ss {
			var rep *Replacement
			texts[i], texts[i+1], rep = r.cut(texts[i], texts[i+1], s, fields[i].Path+" + "+fields[i+1].Path)
			if rep != nil {
				reps = append(reps, *rep)
			}
		}
	}
	// Splice the changed values, from the last to the first.
	out := line
	copied := false
	for i := len(fields) - 1; i >= 0; i-- {
		if texts[i] == orig[i] {
			continue
		}
		if !copied {
			out = append([]byte(nil), line...)
			copied = true
		}
		enc := jsonpatch.EncodeString(texts[i])
		out = append(out[:fields[i].Start], append(enc, out[fields[i].End:]...)...)
	}
	if !copied {
		return line, nil
	}
	return out, reps
}

// A split is a secret found across the junction of two texts: the first
// ends with tail, the second starts with the rest.
type split struct {
	f    Finding
	tail string
}

// splits returns the secrets cut between a and b: found where the end of
// a and the start of b are joined, and in neither whole.
func (r *Redactor) splits(a, b string) []split {
	if a == "" || b == "" {
		return nil
	}
	ta, hb := a[cutStart(a, len(a)-junction):], b[:cutEnd(b, junction)]
	joined := ta + hb
	var out []split
	for _, f := range r.Find(joined) {
		k := strings.Index(joined, f.Secret)
		if k < 0 || k >= len(ta) || k+len(f.Secret) <= len(ta) {
			continue // not across the junction
		}
		out = append(out, split{f: f, tail: ta[k:]})
	}
	return out
}

// cut replaces each part of the split secret s, at the end of a and the
// start of b, by the secret's marker, when a still ends and b still starts
// with them; it returns the replacement made, if any.
func (r *Redactor) cut(a, b string, s split, path string) (string, string, *Replacement) {
	head := s.f.Secret[len(s.tail):]
	if !strings.HasSuffix(a, s.tail) || !strings.HasPrefix(b, head) {
		return a, b, nil
	}
	m := r.Marker(s.f.Rule, s.f.Secret)
	rest := a[:len(a)-len(s.tail)]
	rep := &Replacement{Rule: s.f.Rule, Marker: m, Path: path, Excerpt: Excerpt(rest+s.f.Secret, len(rest), len(rest)+len(s.f.Secret))}
	return rest + m, m + b[len(head):], rep
}

// Joint returns a and b with the secrets cut between them replaced, each
// part by the secret's marker, and what was replaced: a is the last text
// block of one line and b the first of the next, parts of one message
// (source.TextJoiner).
func (r *Redactor) Joint(a, b string) (string, string, []Replacement) {
	var reps []Replacement
	for _, s := range r.splits(a, b) {
		var rep *Replacement
		if a, b, rep = r.cut(a, b, s, ""); rep != nil {
			reps = append(reps, *rep)
		}
	}
	return a, b, reps
}

// RedactJoint is Joint as the store uses it (inscribe.Redactor).
func (r *Redactor) RedactJoint(a, b string) (string, string, bool) {
	a, b, reps := r.Joint(a, b)
	return a, b, len(reps) > 0
}

// siblings reports whether two paths name neighbouring elements of one
// list, or values at the same place in them: message.content.3.text and
// message.content.4.text.
func siblings(a, b string) bool {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	for i > 0 && a[i-1] != '.' {
		i--
	}
	num := func(s string) (int, int, bool) {
		n, j := 0, i
		for j < len(s) && s[j] >= '0' && s[j] <= '9' && j-i < 9 {
			n = n*10 + int(s[j]-'0')
			j++
		}
		return n, j, j > i && (j == len(s) || s[j] == '.')
	}
	x, ja, okA := num(a)
	y, jb, okB := num(b)
	return okA && okB && y == x+1 && a[ja:] == b[jb:]
}

// cutStart moves i forward to a rune boundary of s (0 if negative).
func cutStart(s string, i int) int {
	if i <= 0 {
		return 0
	}
	for i < len(s) && s[i]&0xC0 == 0x80 {
		i++
	}
	return i
}

// cutEnd moves i back to a rune boundary of s (len(s) if past it).
func cutEnd(s string, i int) int {
	if i >= len(s) {
		return len(s)
	}
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return i
}
