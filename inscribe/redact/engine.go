package redact

import (
	"math"
	"strings"
)

// This file is gitleaks' detection (detect.Detector.DetectString of
// v8.30.1: detectRule, checkFindingAllowed, processRequiredRules, filter)
// ported for what scribe scans: a text with no file path and no commit,
// decoded by scribe itself (encoded.go) rather than by gitleaks. Only
// what gitleaks reports that scribe reads is kept: the rule, the secret,
// and the line and column a composite rule's proximity and the generic
// rule's precedence look at. TestSameAsGitleaks runs gitleaks itself
// beside it.

// A ruleSet is the rules a detector runs, in order, and the allowlists
// of them all.
type ruleSet struct {
	rules  []ruleEntry
	byID   map[string]int // index in rules
	global []*allowlist
	// keywords are the rules' keywords, each once; kwRules[k] are the
	// rules keywords[k] is one of.
	keywords []string
	kwRules  [][]int32
	noKW     []int32 // the rules without keywords: they run on every text
}

// A ruleEntry is a rule with what the store adds to it: allowlists aimed
// at it ([[allowlists]] targetRules) and, for a hot rule, its cheap test.
type ruleEntry struct {
	*rule
	extra []*allowlist
	may   func(string) bool
}

// A found is one finding of a rule, as gitleaks' report.Finding holds it.
type found struct {
	rule, secret, match string
	line, column        int // of the match's start: 0-based line, 1-based column
}

// newRuleSet returns the set of rules, in order.
func newRuleSet(rules []*rule, global []*allowlist, targeted map[string][]*allowlist) *ruleSet {
	rs := &ruleSet{byID: make(map[string]int, len(rules)), global: global}
	kw := map[string]int32{}
	for _, r := range rules {
		i := int32(len(rs.rules))
		rs.rules = append(rs.rules, ruleEntry{rule: r, extra: targeted[r.id]})
		rs.byID[r.id] = int(i)
		if len(r.keywords) == 0 {
			rs.noKW = append(rs.noKW, i)
		}
		for _, k := range r.keywords {
			n, ok := kw[k]
			if !ok {
				n = int32(len(rs.keywords))
				kw[k] = n
				rs.keywords = append(rs.keywords, k)
				rs.kwRules = append(rs.kwRules, nil)
			}
			if l := rs.kwRules[n]; len(l) == 0 || l[len(l)-1] != i {
				rs.kwRules[n] = append(l, i)
			}
		}
	}
	return rs
}

// detect runs the rules on text, as gitleaks' DetectString does: each rule
// one of whose keywords the text holds (hits, by keyword, from the
// prefilter), or that has none; a hot rule only where its test passes.
func (rs *ruleSet) detect(text string, hits []bool) []found {
	run := make([]bool, len(rs.rules))
	for k, hit := range hits {
		if hit {
			for _, i := range rs.kwRules[k] {
				run[i] = true
			}
		}
	}
	for _, i := range rs.noKW {
		run[i] = true
	}
	var out []found
	var nl []int
	for i := range rs.rules {
		if !run[i] {
			continue
		}
		e := &rs.rules[i]
		if e.may != nil && !e.may(text) {
			continue
		}
		out = append(out, rs.detectRule(text, e, false, &nl)...)
	}
	return filterGeneric(out)
}

// detectRule is gitleaks' detectRule: the findings of one rule in text.
// nl holds the offsets of text's line ends, once one rule needed them.
func (rs *ruleSet) detectRule(text string, e *ruleEntry, inherited bool, nl *[]int) []found {
	r := e.rule
	if r.skipReport && !inherited {
		return nil
	}
	if r.compile() != nil {
		return nil // a store's rules are compiled when it is read (validate)
	}
	if r.pathNone || r.re == nil {
		// A rule limited to paths finds nothing in a text without one;
		// one of a path alone whose expression matches the empty path
		// reports the file, with an empty secret, which scribe would
		// drop (minSecret): nothing either.
		return nil
	}
	matches := r.re.FindAllStringIndex(text, -1)
	if len(matches) == 0 {
		return nil
	}
	if *nl == nil {
		*nl = newlines(text)
	}
	var out []found
	for _, m := range matches {
		secret := strings.Trim(text[m[0]:m[1]], "\n")
		m[1] = m[0] + len(secret)
		loc := location(*nl, text, m)
		if m[1] > loc.endLineIndex {
			loc.endLineIndex = m[1]
		}
		line := text[loc.startLineIndex:loc.endLineIndex]
		if strings.Contains(line, "gitleaks:allow") {
			continue
		}
		f := found{rule: r.id, secret: secret, match: secret, line: loc.startLine, column: loc.startColumn}
		if groups := r.re.FindStringSubmatch(f.secret); len(groups) >= 2 {
			if r.secretGroup > 0 {
				if len(groups) <= r.secretGroup {
					continue
				}
				f.secret = groups[r.secretGroup]
			} else {
				for _, s := range groups[1:] {
					if len(s) > 0 {
						f.secret = s
						break
					}
				}
			}
		}
		if r.entropy != 0 && shannonEntropy(f.secret) <= r.entropy {
			continue
		}
		if allowed(rs.global, f, line) || allowed(r.allowlists, f, line) || allowed(e.extra, f, line) {
			continue
		}
		out = append(out, f)
	}
	if inherited || len(r.required) == 0 {
		return out
	}
	return rs.withRequired(text, r, out, nl)
}

// allowed reports whether an allowlist of lists lets a finding be.
func allowed(lists []*allowlist, f found, line string) bool {
	for _, a := range lists {
		if a.compile() != nil {
			continue // a store's allowlists are compiled when it is read
		}
		if a.allows(f.secret, f.match, line) {
			return true
		}
	}
	return false
}

// withRequired keeps the findings of a composite rule that each rule it
// requires finds something near (processRequiredRules).
func (rs *ruleSet) withRequired(text string, r *rule, primary []found, nl *[]int) []found {
	if len(primary) == 0 {
		return nil
	}
	aux := make(map[string][]found, len(r.required))
	for _, q := range r.required {
		i, ok := rs.byID[q.id]
		if !ok {
			continue
		}
		aux[q.id] = rs.detectRule(text, &rs.rules[i], true, nl)
	}
	var out []found
	for _, p := range primary {
		have := map[string]bool{}
		for _, q := range r.required {
			for _, f := range aux[q.id] {
				if near(p, f, q) {
					have[f.rule] = true
				}
			}
		}
		all := len(have) > 0
		for _, q := range r.required {
			all = all && have[q.id]
		}
		if all {
			out = append(out, p)
		}
	}
	return out
}

func near(p, f found, q required) bool {
	if q.withinLines != nil && abs(p.line-f.line) > *q.withinLines {
		return false
	}
	if q.withinColumns != nil && abs(p.column-f.column) > *q.withinColumns {
		return false
	}
	return true
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// filterGeneric drops a generic rule's finding where another rule, not a
// generic one, found on the same line a secret that holds it (filter).
func filterGeneric(fs []found) []found {
	var out []found
	for _, f := range fs {
		keep := true
		if strings.Contains(strings.ToLower(f.rule), "generic") {
			for _, g := range fs {
				if f.line == g.line && f.rule != g.rule && strings.Contains(g.secret, f.secret) &&
					!strings.Contains(strings.ToLower(g.rule), "generic") {
					keep = false
					break
				}
			}
		}
		if keep {
			out = append(out, f)
		}
	}
	return out
}

// shannonEntropy is gitleaks' measure of a secret's randomness: the
// entropy of its characters, over its length in bytes.
func shannonEntropy(s string) float64 {
	if s == "" {
		return 0
	}
	var ascii [128]int
	var other map[rune]int
	var order []rune // the characters, in the order they first occur
	for _, c := range s {
		if c < 128 {
			if ascii[c] == 0 {
				order = append(order, c)
			}
			ascii[c]++
			continue
		}
		if other == nil {
			other = map[rune]int{}
		}
		if other[c] == 0 {
			order = append(order, c)
		}
		other[c]++
	}
	inv := 1.0 / float64(len(s))
	e := 0.0
	for _, c := range order {
		n := other[c]
		if c < 128 {
			n = ascii[c]
		}
		p := float64(n) * inv
		e -= p * math.Log2(p)
	}
	return e
}

// newlines returns the offsets of the line ends in text.
func newlines(text string) []int {
	out := []int{}
	for i := 0; ; {
		j := strings.IndexByte(text[i:], '\n')
		if j < 0 {
			return out
		}
		out = append(out, i+j)
		i += j + 1
	}
}

// A loc is where a match lies (gitleaks' Location): its first line and
// column, and the offsets of the lines that hold it, the line end before
// them included.
type loc struct {
	startLine, startColumn       int
	startLineIndex, endLineIndex int
}

// location is gitleaks' location, over the offsets of the line ends.
func location(nl []int, raw string, m []int) loc {
	var (
		prev  int
		l     loc
		set   bool
		last  int
		start = m[0]
		end   = m[1]
	)
	if len(nl) == 0 {
		nl = []int{len(raw)}
	}
	for n, at := range nl {
		last = n
		if prev <= start && start < at {
			set = true
			l.startLine = n
			l.startColumn = start - prev + 1
			l.startLineIndex = prev
			l.endLineIndex = at
		}
		if prev < end && end <= at {
			l.endLineIndex = at
		}
		prev = at
	}
	if !set {
		l.startColumn = start - prev + 1
		l.startLine = last + 1
		i := 0
		for end+i < len(raw) && raw[end+i] != '\n' && raw[end+i] != '\r' {
			i++
		}
		l.endLineIndex = end + i
	}
	return l
}
