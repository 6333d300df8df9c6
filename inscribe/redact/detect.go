// Package redact finds secrets in the text of sessions and replaces them
// with markers, for the store (docs/FORMAT.md §15).
//
// Detection is gitleaks' (github.com/zricethezav/gitleaks/v8), used as a
// library: its default rule set (some 220 rules for the credentials of
// named services, private key blocks, JWTs, URLs with passwords, and a
// generic rule for key = value assignments whose value has high entropy),
// extended by a store's own rules and allowlists, in gitleaks' own
// .gitleaks.toml form, in the store's redact.toml. This is the one package
// of scribe that imports gitleaks.
//
// A secret found is replaced, everywhere it occurs in the text scanned, by a
// marker that names the rule and a short keyed hash of the secret,
// [REDACTED:aws-access-token:3f9c]: equal secrets read as equal, and the
// secret cannot be read back from the marker.
package redact

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"hash/maphash"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/rs/zerolog"
	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
	"github.com/zricethezav/gitleaks/v8/report"
)

func init() {
	// gitleaks logs to stderr; a library of scribe's never prints.
	logging.Logger = zerolog.Nop()
}

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
	gl *detect.Detector
	// pre passes the texts where a keyword of gl's rules occurs: gitleaks
	// runs on those only.
	pre *prefilter
	// hot are rules that gitleaks runs on almost every text (their
	// keywords are common words) but that can match only where a cheap
	// test finds their shape; each runs alone, after its test.
	hot []hotRule

	// cache holds the findings of chunks scanned, by their hash, in shards
	// so that workers seldom wait for one another.
	cache [cacheShards]chunkCache
	seed  maphash.Seed
}

const cacheShards = 32

var (
	defaultOnce sync.Once
	defaultCfg  config.Config
	defaultErr  error
)

// defaultConfig is gitleaks' default configuration, translated once: it
// goes through viper's global instance, which is not safe for concurrent
// use.
func defaultConfig() (config.Config, error) {
	defaultOnce.Do(func() {
		d, err := detect.NewDetectorDefaultConfig()
		if err != nil {
			defaultErr = fmt.Errorf("gitleaks' default rules: %w", err)
			return
		}
		defaultCfg = d.Config
		defaultCfg.Allowlists = withoutTries(defaultCfg.Allowlists)
		for id, r := range defaultCfg.Rules {
			r.Allowlists = withoutTries(r.Allowlists)
			if r.Regex != nil && id != "generic-api-key" {
				if w := widened(r.Regex.String()); w != r.Regex.String() {
					r.Regex = regexp.MustCompile(w)
				}
			}
			defaultCfg.Rules[id] = r
		}
	})
	return defaultCfg, defaultErr
}

// withoutTries returns allowlists with the same checks, but whose stop
// words are looked for one by one rather than with the Aho-Corasick trie
// gitleaks builds for them: the trie of the generic rule's 1,450 stop words
// is 8.6 MB of heap, most of what the detector holds, and a heap that
// large costs four times as much resident memory under scribe's GC setting
// (GOGC=300); the stop words are looked for only in what a rule found, a
// few short strings.
func withoutTries(als []*config.Allowlist) []*config.Allowlist {
	out := make([]*config.Allowlist, len(als))
	for i, a := range als {
		out[i] = a
		if len(a.StopWords) == 0 {
			continue
		}
		b := &config.Allowlist{Description: a.Description, MatchCondition: a.MatchCondition, Commits: a.Commits,
			Paths: a.Paths, RegexTarget: a.RegexTarget, Regexes: a.Regexes}
		if len(b.Commits)+len(b.Paths)+len(b.Regexes) > 0 {
			if err := b.Validate(); err != nil {
				continue // keep gitleaks' own
			}
		}
		b.StopWords = a.StopWords // lower case already (Validate)
		out[i] = b
	}
	return out
}

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
	cfg, err := mergedConfig(extra)
	if err != nil {
		return nil, err
	}
	d := &Detector{seed: maphash.MakeSeed()}
	for _, h := range hotRules {
		r, ok := cfg.Rules[h.id]
		if !ok || !sameRegex(r, h.regex) {
			continue // disabled, or changed by the store: run it as any rule
		}
		one := cfg
		one.Rules = map[string]config.Rule{h.id: r}
		one.Keywords = keywords(one.Rules)
		one.OrderedRules = []string{h.id}
		h.det = detect.NewDetector(one)
		d.hot = append(d.hot, h)
		delete(cfg.Rules, h.id)
	}
	cfg.Keywords = keywords(cfg.Rules)
	d.gl = detect.NewDetector(cfg)
	var kws []string
	for k := range cfg.Keywords {
		kws = append(kws, k)
	}
	d.pre = newPrefilter(kws)
	for _, r := range cfg.Rules {
		if r.Regex != nil && len(r.Keywords) == 0 {
			d.pre.always = true // a rule without keywords runs on every text
		}
	}
	return d, nil
}

// mergedConfig is gitleaks' default configuration with scribe's own rules
// and extra's.
func mergedConfig(extra []byte) (config.Config, error) {
	base, err := defaultConfig()
	if err != nil {
		return config.Config{}, err
	}
	cfg := config.Config{
		Title:    base.Title,
		Rules:    make(map[string]config.Rule, len(base.Rules)),
		Keywords: make(map[string]struct{}, len(base.Keywords)),
	}
	for id, r := range base.Rules {
		cfg.Rules[id] = r
	}
	cfg.OrderedRules = append(cfg.OrderedRules, base.OrderedRules...)
	cfg.Allowlists = append(cfg.Allowlists, base.Allowlists...)
	for _, src := range [][]byte{[]byte(builtin), extra} {
		if len(bytes.TrimSpace(src)) == 0 {
			continue
		}
		own, disabled, err := parseRules(src)
		if err != nil {
			return config.Config{}, err
		}
		for _, id := range disabled {
			delete(cfg.Rules, id)
		}
		for id, r := range own.Rules {
			if _, ok := cfg.Rules[id]; !ok {
				cfg.OrderedRules = append(cfg.OrderedRules, id)
			}
			cfg.Rules[id] = r
		}
		cfg.Allowlists = append(cfg.Allowlists, own.Allowlists...)
	}
	cfg.Keywords = keywords(cfg.Rules)
	return cfg, nil
}

func keywords(rules map[string]config.Rule) map[string]struct{} {
	kw := make(map[string]struct{})
	for _, r := range rules {
		for _, k := range r.Keywords {
			kw[strings.ToLower(k)] = struct{}{}
		}
	}
	return kw
}

// parseRules reads rules and allowlists in gitleaks' configuration form.
func parseRules(src []byte) (cfg config.Config, disabled []string, err error) {
	defer func() {
		// gitleaks compiles the regular expressions of a rule with
		// MustCompile.
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(bytes.NewReader(src)); err != nil {
		return cfg, nil, err
	}
	var vc config.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		return cfg, nil, err
	}
	disabled = vc.Extend.DisabledRules
	// The default rules are always there: extending a path or a URL is not
	// followed, and useDefault is what scribe does anyway.
	vc.Extend = config.Extend{}
	cfg, err = vc.Translate()
	if err == nil && len(cfg.Rules) == 0 && len(cfg.Allowlists) == 0 && len(disabled) == 0 && hasRulesKey(v) {
		err = errors.New("no rule could be read")
	}
	return cfg, disabled, err
}

func hasRulesKey(v *viper.Viper) bool { return v.IsSet("rules") || v.IsSet("allowlists") }

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

// scan runs gitleaks where the cheap tests pass: the rules but the hot
// ones where a keyword of theirs occurs, a hot rule where the shape of its
// secret does.
func (d *Detector) scan(c string) []Finding { return d.scanDepth(c, 0) }

// scanDepth is scan of a text decoded depth times (encoded).
func (d *Detector) scanDepth(c string, depth int) []Finding {
	var found []report.Finding
	if d.pre.any(c) {
		found = d.gl.DetectString(c)
	}
	for i := range d.hot {
		if h := &d.hot[i]; h.may(c) {
			found = append(found, h.det.DetectString(c)...)
		}
	}
	var out []Finding
	for _, f := range found {
		s := strings.TrimRight(f.Secret, `\`)
		if len(s) < minSecret || strings.Contains(s, "[REDACTED:") || isMarkerPart(c, s) {
			continue
		}
		out = append(out, Finding{Rule: f.RuleID, Secret: strings.Clone(s)})
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
