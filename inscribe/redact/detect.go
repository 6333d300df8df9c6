// Package redact finds secrets in the text of sessions and replaces them
// with markers, for the store (docs/FORMAT.md §15).
//
// Detection is gitleaks' (github.com/zricethezav/gitleaks/v8): its default
// rule set (some 220 rules for the credentials of named services, private
// key blocks, JWTs, URLs with passwords, and a generic rule for key = value
// assignments whose value has high entropy; gitleaks.toml, its
// configuration file as gitleaks publishes it), extended by a store's own
// rules and allowlists, in gitleaks' own .gitleaks.toml form, in the
// store's redact.toml. Its detection is ported (engine.go, rules.go), not
// linked: the tests hold the port to gitleaks itself, rule by rule
// (gitleaks_test.go).
//
// A secret found is replaced, everywhere it occurs in the text scanned, by a
// marker that names the rule and a short keyed hash of the secret,
// [REDACTED:aws-access-token:3f9c]: equal secrets read as equal, and the
// secret cannot be read back from the marker.
package redact

import (
	"bytes"
	"cmp"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"
	"sync"
)

// A Finding is one secret found in a text.
type Finding struct {
	// Rule is the id of the gitleaks rule that found it ("aws-access-token",
	// "generic-api-key"), or "forgotten" for a value scribe forget removed.
	Rule string
	// Secret is the secret itself.
	Secret string
}

// A Detector finds secrets in texts. It may be used by several goroutines
// at once.
type Detector struct {
	rules *ruleSet
	// pre finds which of the rules' keywords a text holds: a rule runs
	// only where one of its own does, as in gitleaks.
	pre *prefilter

	// cache holds the findings of chunks scanned, by their hash, in shards
	// so that workers seldom wait for one another.
	cache [cacheShards]chunkCache
	seed  maphash.Seed
}

const cacheShards = 32

// defaultRules are gitleaks' default rules and allowlists (read once; the
// rules' expressions are compiled when first needed, and then kept for
// every detector).
var defaultRules = sync.OnceValues(func() (*ruleConfig, error) {
	c, err := parseConfig(gitleaksDefault)
	if err != nil {
		return nil, fmt.Errorf("gitleaks' default rules: %w", err)
	}
	for _, r := range c.rules {
		if r.id != "generic-api-key" {
			r.src = widened(r.src)
		}
	}
	return c, nil
})

// glDelimiter is how some 150 of gitleaks' rules end: the secret must be
// followed by white space, a quote, a backtick, a semicolon, an escaped
// line end or the end of the text. In prose, a key is as often followed
// by a comma, a full stop, a colon or a closing bracket ("the key is
// sk_live_…, and", "use AIza…."), which that misses.
const glDelimiter = `(?:[\x60'"\s;]|\\[nr]|$)`

// delimiter is glDelimiter with the punctuation that ends a word in prose.
const delimiter = `(?:[\x60'"\s;,.:!?)\]}>|]|\\[nr]|$)`

// widened returns a rule's expression with gitleaks' delimiter, where it
// ends with it, widened to prose's (delimiter). The secret is the rule's
// group, before the delimiter, so it is the same secret, found in more
// places. The generic rule keeps gitleaks' delimiter: its value is any
// word after a keyword and an operator, and a word before a full stop is
// most often a file's name ("validate_token",\ninternal/sem/csharp.go).
func widened(re string) string {
	if strings.HasSuffix(re, glDelimiter) {
		return strings.TrimSuffix(re, glDelimiter) + delimiter
	}
	return re
}

// NewDetector returns a detector of gitleaks' default rules, extended by
// extra: the text of a file in gitleaks' .gitleaks.toml form (its [[rules]]
// and [[allowlists]], and [extend] disabledRules), or nil.
func NewDetector(extra []byte) (*Detector, error) {
	own, rs, err := checkedRules(extra)
	if err != nil {
		return nil, err
	}
	return newDetector(own, rs)
}

// newDetector returns the detector of a store's rules as checkedRules
// read them: own, and the whole set when it made it (rs), else nil.
func newDetector(own *ruleConfig, rs *ruleSet) (*Detector, error) {
	if rs == nil {
		var err error
		if rs, err = storeRules(own); err != nil {
			return nil, err
		}
	}
	for _, h := range hotRules {
		if i, ok := rs.byID[h.id]; ok && rs.rules[i].src == h.regex {
			rs.rules[i].may = h.may
		}
	}
	return &Detector{rules: rs, pre: newPrefilter(rs.keywords), seed: maphash.MakeSeed()}, nil
}

// checkedRules reads a store's rules, src (nil when it holds none), and
// compiles them (ruleConfig.check). The whole set of rules (storeRules) is
// made only when src names a rule (targetRules, a composite rule's
// required ones), and returned then: gitleaks' rules take 3 ms to read,
// which a command with nothing to scan (a hook's append) does not pay.
func checkedRules(src []byte) (own *ruleConfig, rs *ruleSet, err error) {
	if len(bytes.TrimSpace(src)) == 0 {
		return nil, nil, nil
	}
	if own, err = parseConfig(string(src)); err != nil {
		return nil, nil, err
	}
	var setErr error
	err = own.check(func(id string) bool {
		if rs == nil && setErr == nil {
			rs, setErr = storeRules(own)
		}
		if setErr != nil {
			return false
		}
		_, ok := rs.byID[id]
		return ok
	})
	return own, rs, cmp.Or(setErr, err)
}

// builtinRules are scribe's own rules (builtin), read once.
var builtinRules = sync.OnceValue(func() *ruleConfig {
	c, err := parseConfig(builtin)
	if err != nil {
		panic(fmt.Sprintf("scribe's own rules: %v", err))
	}
	return c
})

// storeRules are gitleaks' default rules with scribe's own (builtin) and
// a store's (own, or nil): a rule of the same id replaces one before it;
// disabledRules removes gitleaks' and scribe's.
func storeRules(own *ruleConfig) (*ruleSet, error) {
	base, err := defaultRules()
	if err != nil {
		return nil, err
	}
	configs := []*ruleConfig{builtinRules()}
	if own != nil {
		configs = append(configs, own)
	}
	rules := slices.Clone(base.rules)
	global := slices.Clone(base.global)
	targeted := map[string][]*allowlist{}
	for id, as := range base.targeted {
		targeted[id] = slices.Clone(as)
	}
	for _, c := range configs {
		rules = slices.DeleteFunc(rules, func(r *rule) bool { return slices.Contains(c.disabled, r.id) })
		for _, r := range c.rules {
			if j := slices.IndexFunc(rules, func(q *rule) bool { return q.id == r.id }); j >= 0 {
				rules[j] = r
			} else {
				rules = append(rules, r)
			}
		}
		global = append(global, c.global...)
		for id, as := range c.targeted {
			targeted[id] = append(targeted[id], as...)
		}
	}
	return newRuleSet(rules, global, targeted), nil
}

// Find returns the secrets in text, each once, in the order they first
// occur. A marker is never a secret.
func (d *Detector) Find(text string) []Finding {
	return d.find(func() *textStream { return &textStream{win: text} })
}

// find is Find over the text a stream reads; open starts one.
func (d *Detector) find(open func() *textStream) []Finding {
	var out []Finding
	eachChunk(open(), func(c string) {
		for _, f := range d.chunk(c) {
			dup := false
			for _, g := range out {
				dup = dup || g.Secret == f.Secret
			}
			if !dup {
				out = append(out, f)
			}
		}
	})
	if len(out) > 1 {
		at := map[string]int{} // where each secret (once in out) first occurs
		for i, k := range firstIndexes(open(), out) {
			at[out[i].Secret] = k
		}
		slices.SortStableFunc(out, func(a, b Finding) int { return cmp.Compare(at[a.Secret], at[b.Secret]) })
	}
	return out
}

// chunk finds the secrets in one chunk of a text: from the cache when the
// same chunk was scanned before (a tool's output is often recorded twice,
// a prompt three times), else by scanning it.
func (d *Detector) chunk(c string) []Finding {
	h := maphash.String(d.seed, c)
	shard := &d.cache[h%cacheShards]
	if fs, ok := shard.get(h); ok {
		return fs
	}
	fs := d.scan(c)
	shard.put(h, fs)
	return fs
}

// cacheSize bounds the cache of chunks scanned.
const cacheSize = 1 << 16

// A chunkCache is one shard of the cache of chunks scanned. Almost every
// chunk holds no secret, and those are kept as their hash alone: a map of
// hashes to findings cost 80 bytes a chunk (5.3 MB of the live heap at
// 65,536 chunks), which the collector's limit counts once and a half
// (cmd/scribe/memory.go); a set of hashes costs a sixth of it.
type chunkCache struct {
	sync.Mutex
	clean map[uint64]struct{}  // chunks without secrets
	found map[uint64][]Finding // the others
}

func (c *chunkCache) get(h uint64) ([]Finding, bool) {
	c.Lock()
	defer c.Unlock()
	if _, ok := c.clean[h]; ok {
		return nil, true
	}
	fs, ok := c.found[h]
	return fs, ok
}

func (c *chunkCache) put(h uint64, fs []Finding) {
	c.Lock()
	defer c.Unlock()
	if len(c.clean)+len(c.found) >= cacheSize/cacheShards {
		clear(c.clean)
		clear(c.found)
	}
	if len(fs) == 0 {
		if c.clean == nil {
			c.clean = make(map[uint64]struct{})
		}
		c.clean[h] = struct{}{}
		return
	}
	if c.found == nil {
		c.found = make(map[uint64][]Finding)
	}
	c.found[h] = fs
}

// scan runs the rules where the cheap tests pass: a rule where a keyword
// of its occurs, a hot rule where the shape of its secret does too.
func (d *Detector) scan(c string) []Finding { return d.scanDepth(c, 0) }

// scanDepth is scan of a text decoded depth times (encoded).
func (d *Detector) scanDepth(c string, depth int) []Finding {
	var out []Finding
	if hits := d.pre.hits(c); hits != nil || len(d.rules.noKW) > 0 {
		for _, f := range d.rules.detect(c, hits) {
			s := strings.TrimRight(f.secret, `\`)
			if len(s) < minSecret || strings.Contains(s, "[REDACTED:") || isMarkerPart(c, s) {
				continue
			}
			out = append(out, Finding{Rule: f.rule, Secret: strings.Clone(s)})
		}
	}
	if depth < maxDecode {
		for _, f := range d.encoded(c, depth) {
			if !isMarkerPart(c, f.Secret) {
				out = append(out, Finding{Rule: f.Rule, Secret: strings.Clone(f.Secret)})
			}
		}
	}
	return preferSpecific(out)
}

// minSecret is the shortest value replaced: gitleaks' rules find nothing
// shorter, and a user's rule that matched less would replace noise.
const minSecret = 6

// preferSpecific drops a generic rule's finding when a named rule found the
// same secret or one holding it, as gitleaks does within a line.
func preferSpecific(fs []Finding) []Finding {
	if len(fs) < 2 {
		return fs
	}
	var out []Finding
	for i, f := range fs {
		drop := false
		if strings.Contains(f.Rule, "generic") {
			for j, g := range fs {
				if i != j && !strings.Contains(g.Rule, "generic") && strings.Contains(g.Secret, f.Secret) {
					drop = true
					break
				}
			}
		}
		if !drop {
			out = append(out, f)
		}
	}
	return out
}

// eachChunk cuts a text into pieces of about chunkSize bytes at line
// ends (a longer line is cut where it must, the pieces overlapping), the
// way gitleaks reads a file in chunks: a rule's keywords are looked for,
// and its expression run, in the chunk that holds them rather than in a
// whole 100 KB tool output. A private key block is never cut. The text is
// read from a stream, so that a long one is decoded a window at a time:
// a piece depends on the text from its start to at most ahead bytes on
// (or to the end of a line after a key block's end), which the stream is
// made to hold.
func eachChunk(s *textStream, fn func(string)) {
	const ahead = chunkSize + maxBlock + len("-----END")
	for first := true; ; first = false {
		s.need(ahead + 1)
		text := s.rest()
		if len(text) == 0 && !first {
			return
		}
		if len(text) <= chunkSize && !s.more() {
			fn(text)
			return
		}
		n := strings.LastIndexByte(text[:chunkSize], '\n') + 1
		cut := n > 0
		if !cut {
			n = chunkSize
		}
		// Keep a PEM block whole.
		if strings.Contains(text[:n], "-----BEGIN") {
			if b := strings.LastIndex(text[:n], "-----BEGIN"); !strings.Contains(text[b:n], "-----END") {
				if e := strings.Index(text[n:], "-----END"); e >= 0 && e < maxBlock {
					end := n + e + len("-----END")
					nl := strings.IndexByte(text[end:], '\n')
					for nl < 0 && s.more() {
						s.need(len(text) + window)
						text = s.rest()
						nl = strings.IndexByte(text[end:], '\n')
					}
					if nl >= 0 {
						end += nl + 1
					} else {
						end = len(text)
					}
					n, cut = end, true
				}
			}
		}
		fn(text[:n])
		if !cut && (n < len(text) || s.more()) {
			// A line longer than a chunk: the next piece starts a little
			// before the cut, so a secret that straddles it is whole in one.
			n -= overlap
		}
		s.pos += n
	}
}

// chunks is eachChunk's pieces, as a list.
func chunks(text string) []string {
	var out []string
	eachChunk(&textStream{win: text}, func(c string) { out = append(out, c) })
	return out
}

const (
	chunkSize = 4096
	overlap   = 512
	maxBlock  = 64 << 10
)

// isMarkerPart reports whether s occurs in c only inside markers.
func isMarkerPart(c, s string) bool {
	for i := 0; ; {
		j := strings.Index(c[i:], s)
		if j < 0 {
			return true
		}
		j += i
		m := strings.LastIndex(c[:j+1], "[REDACTED:")
		if m < 0 || strings.IndexByte(c[m:j], ']') >= 0 {
			return false
		}
		end := strings.IndexByte(c[m:], ']')
		if end < 0 || m+end < j+len(s)-1 {
			return false
		}
		i = j + 1
	}
}

// awsSecretRegex is an AWS secret access key where gitleaks finds none:
// 40 characters of base64 at most 80 characters after an access key id,
// or after the word "secret", on the same line, with no operator between
// ("the key is AKIA… and secret wJalr…"); gitleaks' generic rule wants
// one (secret = …).
const awsSecretRegex = `(?:\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b|(?i:\bsecret))[^\n]{0,80}?[^A-Za-z0-9/+]([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)`

const urlPasswordRegex = `\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}://[^\s:/?#@'"<>]{1,64}:([^\s:/?#@'"<>]{4,128})@[a-zA-Z0-9][a-zA-Z0-9.-]*`

// builtin are scribe's own rules, added to gitleaks' defaults: gitleaks
// finds a password in a connection string only for a few services, and an
// agent's session is full of them (a database URL in a command, in a .env
// file it read).
const builtin = `
[[rules]]
id = "aws-secret-access-key"
description = "An AWS secret access key (40 characters of base64) after an access key id or the word secret, in prose as in a configuration"
regex = '''` + awsSecretRegex + `'''
secretGroup = 1
entropy = 4.0
keywords = ["akia", "asia", "abia", "acca", "a3t", "secret"]
[[rules.allowlists]]
description = "a path, a word, a hash: not upper case, lower case and digits together"
regexes = ['''^[^0-9]*$''', '''^[^A-Z]*$''', '''^[^a-z]*$''']
[[rules]]
id = "url-password"
description = "A password in a URL (scheme://user:password@host), as in a database's connection string"
regex = '''` + urlPasswordRegex + `'''
secretGroup = 1
entropy = 2.5
keywords = ["://"]
[[rules.allowlists]]
description = "placeholders"
regexes = ['''(?i)^(?:pass(?:word|wd)?|pwd|secret|changeme|\*+|x+|\.+|\$\{?[a-z_][a-z0-9_]*\}?|%[a-z_]+%|<[^>]*>|\{[^}]*\}|\[[^\]]*\])$''']
`
