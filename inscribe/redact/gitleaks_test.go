package redact

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"regexp/syntax"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2"
	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/report"

	"github.com/scribe-archive/scribe/internal/jsonpatch"
	"github.com/scribe-archive/scribe/internal/testkit/testenv"
)

// The tests in this file hold scribe's port of gitleaks (rules.go,
// engine.go) to gitleaks itself, the version go.mod requires: the same
// default rules, the same configuration read the same way, the same
// findings in the same texts.

// TestDefaultRulesAreGitleaks: gitleaks.toml is gitleaks' default
// configuration (go test -update copies it again, after go.mod names
// another gitleaks).
func TestDefaultRulesAreGitleaks(t *testing.T) {
	if gitleaksDefault == config.DefaultConfig {
		return
	}
	if *testenv.Update {
		if err := os.WriteFile("gitleaks.toml", []byte(config.DefaultConfig), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("gitleaks.toml is not the default configuration of the gitleaks go.mod requires: run go test ./inscribe/redact -update, and read what changed")
}

// gitleaksConfig reads src as gitleaks does.
func gitleaksConfig(src string) (cfg config.Config, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(src)); err != nil {
		return cfg, err
	}
	var vc config.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		return cfg, err
	}
	vc.Extend = config.Extend{}
	return vc.Translate()
}

// ownConfig reads src as scribe does, checked as validate checks it but
// that a rule named must be one of src's own (as gitleaks reads it alone).
func ownConfig(src string) (*ruleConfig, error) {
	c, err := parseConfig(src)
	if err != nil {
		return nil, err
	}
	return c, c.check(func(id string) bool {
		return slices.ContainsFunc(c.rules, func(r *rule) bool { return r.id == id })
	})
}

type reportFinding = report.Finding

// describe writes a configuration's rules and allowlists in one form for
// both readers, to compare.
func describeOwn(c *ruleConfig) string {
	var b strings.Builder
	ids := map[string]*rule{}
	for _, r := range c.rules {
		ids[r.id] = r
	}
	for _, id := range sortedKeys(ids) {
		r := ids[id]
		fmt.Fprintf(&b, "rule %s regex=%q path=%q group=%d entropy=%g kw=%q skip=%t\n", r.id, r.src, r.path, r.secretGroup, r.entropy, r.keywords, r.skipReport)
		for _, a := range append(slices.Clone(r.allowlists), c.targeted[r.id]...) {
			b.WriteString("  " + describeOwnList(a) + "\n")
		}
		for _, q := range r.required {
			fmt.Fprintf(&b, "  required %s lines=%s columns=%s\n", q.id, intp(q.withinLines), intp(q.withinColumns))
		}
	}
	for _, a := range c.global {
		b.WriteString("global " + describeOwnList(a) + "\n")
	}
	return b.String()
}

func describeOwnList(a *allowlist) string {
	re := "<nil>"
	if a.re != nil {
		re = a.re.String()
	}
	w := slices.Clone(a.stopWords)
	sort.Strings(w)
	return fmt.Sprintf("allow and=%t target=%q regex=%q stop=%q paths=%t", a.and, a.target, re, w, a.paths)
}

// describeGitleaks is describeOwn of gitleaks' reading, in scribe's types.
func describeGitleaks(c config.Config) string {
	own := &ruleConfig{}
	list := func(a *config.Allowlist) *allowlist {
		o := &allowlist{and: a.MatchCondition == config.AllowlistMatchAnd, target: a.RegexTarget, stopWords: a.StopWords, paths: len(a.Paths)+len(a.Commits) > 0}
		for _, r := range a.Regexes {
			o.regexes = append(o.regexes, r.String())
		}
		if o.compile() != nil {
			panic("gitleaks compiled it")
		}
		return o
	}
	for _, r := range c.Rules {
		o := &rule{id: r.RuleID, secretGroup: r.SecretGroup, entropy: r.Entropy, keywords: r.Keywords, skipReport: r.SkipReport}
		if r.Regex != nil {
			o.src = r.Regex.String()
		}
		if r.Path != nil {
			o.path = r.Path.String()
		}
		for _, a := range r.Allowlists {
			o.allowlists = append(o.allowlists, list(a))
		}
		for _, q := range r.RequiredRules {
			o.required = append(o.required, required{id: q.RuleID, withinLines: q.WithinLines, withinColumns: q.WithinColumns})
		}
		own.rules = append(own.rules, o)
	}
	for _, a := range c.Allowlists {
		own.global = append(own.global, list(a))
	}
	return describeOwn(own)
}

func intp(p *int) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

func sortedKeys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// configCases are configurations gitleaks reads, or refuses, in the forms
// its documentation and its readers allow.
var configCases = []string{
	"",
	builtin,
	"[[rules]]\nid = \"a\"\nregex = '''a_[0-9]{8}'''\nkeywords = [\"A_\"]\n",
	// keys in any case, a list written as a string, numbers as strings
	"[[Rules]]\nID = \"a\"\nREGEX = '''a_([0-9]{8})'''\nSecretGroup = \"1\"\nentropy = \"2.5\"\nKeywords = \"a_,b_\"\n",
	"[[rules]]\nid = \"a\"\nregex = '''a_[0-9]{8}'''\nentropy = 3\n[rules.allowlist]\nregexes = ['''0{8}''']\nstopwords = [\"ABC\", \"abc\"]\n",
	"[[rules]]\nid = \"a\"\nregex = '''a_[0-9]{8}'''\n[[rules.allowlists]]\ncondition = \"AND\"\nregexTarget = \"line\"\nregexes = ['''x''', '''(?i)y''']\nstopwords = [\"q\"]\n[[rules.allowlists]]\ncondition = \"||\"\npaths = ['''\\.md$''']\n",
	"[[rules]]\nid = \"a\"\nregex = '''a_[0-9]{8}'''\n[[allowlists]]\ntargetRules = [\"a\"]\nregexes = ['''1''']\n[[allowlists]]\ndescription = \"all\"\nregexTarget = \"match\"\nregexes = ['''2''']\n",
	"[allowlist]\nregexes = ['''2''']\ncommits = [\"abc\"]\n",
	// an empty stop word, which matches nothing
	"[[rules]]\nid = \"a\"\nregex = '''a_[0-9]{8}'''\n[[rules.allowlists]]\nstopwords = \"zzz,\"\n[[rules.allowlists]]\ncondition = \"AND\"\nregexes = ['''5''']\nstopwords = [\"\"]\n[[allowlists]]\nstopwords = [\"yyy\", \"\"]\n",
	"[[rules]]\nid = \"a\"\nregex = '''a_[0-9]{8}'''\n[[rules.allowlists]]\ncondition = \"&&\"\nregexes = ['''1''']\nstopwords = [\"2\"]\n[[rules.allowlists]]\ncondition = \"and\"\nregexes = ['''3''']\n",
	"[[rules]]\nid = \"a\"\nregex = '''a_[0-9]{8}'''\n[[rules.required]]\nid = \"b\"\nwithinLines = 2\n[[rules]]\nid = \"b\"\nregex = '''b_[0-9]{8}'''\nskipReport = true\n",
	"[[rules]]\nid = \"p\"\npath = '''\\.pem$'''\n",
	"[extend]\ndisabledRules = [\"generic-api-key\"]\n",
	// refused
	"[[rules]]\nregex = '''a'''\n",
	"[[rules]]\nid = \"a\"\n",
	"[[rules]]\nid = \"a\"\nregex = '''([a-'''\n",
	"[[rules]]\nid = \"a\"\nregex = '''a'''\nsecretGroup = 2\n",
	"[[rules]]\nid = \"a\"\nregex = '''a'''\n[[rules.allowlists]]\ndescription = \"empty\"\n",
	"[[rules]]\nid = \"a\"\nregex = '''a'''\n[[rules.allowlists]]\ncondition = \"XOR\"\nregexes = ['''b''']\n",
	"[[rules]]\nid = \"a\"\nregex = '''a'''\n[[rules.allowlists]]\nregexTarget = \"word\"\nregexes = ['''b''']\n",
	"[[rules]]\nid = \"a\"\nregex = '''a'''\n[[rules.allowlists]]\nregexes = ['''(''']\n",
	"[[rules]]\nid = \"a\"\nregex = '''a'''\n[rules.allowlist]\nregexes = ['''b''']\n[[rules.allowlists]]\nregexes = ['''c''']\n",
	"[[rules]]\nid = \"a\"\nregex = '''a'''\n[[rules.required]]\nid = \"nope\"\n",
	"[[allowlists]]\ntargetRules = [\"nope\"]\nregexes = ['''1''']\n",
	"[[rules]]\nid = \"a\"\nregex = '''a'''\nentropy = \"high\"\n",
	"rules = 3\n",
	"[[rules]\nid = \"a\"\n",
}

// TestConfigAsGitleaks: scribe reads each configuration as gitleaks
// does, and refuses those gitleaks refuses; gitleaks' default one too.
func TestConfigAsGitleaks(t *testing.T) {
	for i, src := range append([]string{gitleaksDefault}, configCases...) {
		theirs, gerr := gitleaksConfig(src)
		ours, err := ownConfig(src)
		if (gerr == nil) != (err == nil) {
			t.Errorf("case %d: gitleaks: %v, scribe: %v\n%s", i, gerr, err, src)
			continue
		}
		if err != nil {
			continue
		}
		if g, o := describeGitleaks(theirs), describeOwn(ours); g != o {
			t.Errorf("case %d: read differently:\ngitleaks:\n%s\nscribe:\n%s", i, g, o)
		}
	}
}

// FuzzConfigAsGitleaks: scribe reads any configuration as gitleaks does,
// or refuses it as gitleaks does (but where two keys differ only in case,
// which viper merges in an order of its own).
func FuzzConfigAsGitleaks(f *testing.F) {
	for _, c := range configCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, src string) {
		var top map[string]any
		if toml.Unmarshal([]byte(src), &top) == nil && caseClash(top) {
			return
		}
		theirs, gerr := gitleaksConfig(src)
		ours, err := ownConfig(src)
		if (gerr == nil) != (err == nil) {
			t.Fatalf("gitleaks: %v, scribe: %v\n%s", gerr, err, src)
		}
		if err == nil {
			if g, o := describeGitleaks(theirs), describeOwn(ours); g != o {
				t.Fatalf("read differently:\ngitleaks:\n%s\nscribe:\n%s", g, o)
			}
		}
	})
}

// caseClash reports whether a table holds two keys that differ only in case.
func caseClash(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		seen := map[string]bool{}
		for k, x := range v {
			if seen[strings.ToLower(k)] || caseClash(x) {
				return true
			}
			seen[strings.ToLower(k)] = true
		}
	case []any:
		for _, x := range v {
			if caseClash(x) {
				return true
			}
		}
	}
	return false
}

// sample returns a text an expression matches, at random.
func sample(rng *rand.Rand, re *syntax.Regexp, b *strings.Builder) {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if re.Flags&syntax.FoldCase != 0 && rng.Intn(2) == 0 {
				r = []rune(strings.ToUpper(string(r)))[0]
			}
			b.WriteRune(r)
		}
	case syntax.OpCharClass:
		var rs []rune
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			if hi-lo > 200 {
				hi = lo + 200
			}
			for r := lo; r <= hi; r++ {
				if r >= ' ' && r != 0x7f && utf8.ValidRune(r) {
					rs = append(rs, r)
				}
			}
		}
		if len(rs) > 0 {
			b.WriteRune(rs[rng.Intn(len(rs))])
		}
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		b.WriteByte("abcXYZ019_-+/="[rng.Intn(14)])
	case syntax.OpCapture:
		sample(rng, re.Sub[0], b)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		lo, hi := 0, 3
		switch re.Op {
		case syntax.OpPlus:
			lo = 1
		case syntax.OpQuest:
			hi = 1
		case syntax.OpRepeat:
			lo, hi = re.Min, re.Max
			if hi < 0 {
				hi = lo + 3
			}
		}
		for n := lo + rng.Intn(hi-lo+1); n > 0; n-- {
			sample(rng, re.Sub[0], b)
		}
	case syntax.OpConcat:
		for _, s := range re.Sub {
			sample(rng, s, b)
		}
	case syntax.OpAlternate:
		sample(rng, re.Sub[rng.Intn(len(re.Sub))], b)
	case syntax.OpEndText, syntax.OpEndLine:
		b.WriteByte('\n')
	case syntax.OpBeginLine, syntax.OpBeginText:
		b.WriteByte('\n')
	case syntax.OpWordBoundary:
		b.WriteByte(' ')
	}
}

// transcriptStrings are the strings of the bundled transcripts longer
// than 20 bytes.
func transcriptStrings(t testing.TB) []string {
	var texts []string
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "claude", "projects", "*", "*.jsonl"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		for _, l := range bytes.Split(data, []byte("\n")) {
			jsonpatch.Strings(l, nil, func(v jsonpatch.StringValue) {
				if s := jsonpatch.DecodeString(l[v.Start:v.End]); len(s) > 20 {
					texts = append(texts, s)
				}
			})
		}
	}
	if len(texts) == 0 {
		t.Fatal("no bundled transcripts")
	}
	return texts
}

// gitleaksTexts are texts to scan: the bundled transcripts' strings, with
// secrets planted, and for each rule of gitleaks' default configuration
// texts its expression matches, with a keyword of its.
func gitleaksTexts(t *testing.T, rules []*rule) []string {
	texts := transcriptStrings(t)
	rng := rand.New(rand.NewSource(3))
	var secrets []string
	for _, r := range rules {
		if r.src == "" {
			continue
		}
		re, err := syntax.Parse(r.src, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 6; i++ {
			var b strings.Builder
			if len(r.keywords) > 0 && i%2 == 0 {
				b.WriteString(r.keywords[rng.Intn(len(r.keywords))] + " ")
			}
			sample(rng, re, &b)
			secrets = append(secrets, b.String())
		}
	}
	for _, s := range planted {
		secrets = append(secrets, "key = "+s, s)
	}
	secrets = append(secrets,
		"password: Hx8Qm2Lr7Xv4Kp9Tz3Wc6Np1 # gitleaks:allow",
		"gitleaks:allow\nghp_R8x2mQ7vLk4Tz9Wc1Np5Hs3Jd6Fb0Ga2Ye4U",
		"api_key = \"Zq8Lr2Xv7Kp4Tz9Wc1Np5Hs3Jd6Fb0\" and AKIAZ7QX3M5N2PLKWJ4R on one line",
		"\n\nDATABASE_URL=postgres://app:Vq7mK2xL9pR4tZ8w@db.example:5432/x\n",
		"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n-----END RSA PRIVATE KEY-----",
		"the \u212aey = Zq8Lr2Xv7Kp4Tz9Wc1Np5Hs3Jd6Fb0",
		"AP\u0130_KEY = Zq8Lr2Xv7Kp4Tz9Wc1Np5Hs3Jd6Fb0",
		// the global allowlist's stop words
		"api_key = \"abcdefghijklmnopqrstuvwxyz0123\"",
		"secret_token = 014df517-39d1-4453-b7b3-9930c563627c",
	)
	out := slices.Clone(secrets)
	for i := 0; i < 1500; i++ {
		s := texts[rng.Intn(len(texts))]
		at := rng.Intn(len(s) + 1)
		for at > 0 && at < len(s) && !utf8.RuneStart(s[at]) {
			at--
		}
		sep := []string{"\n", " ", "", "\"", "="}[rng.Intn(5)]
		out = append(out, s[:at]+sep+secrets[rng.Intn(len(secrets))]+sep+s[at:])
	}
	return append(out, texts...)
}

// findings is what a detection found, one line each, in order.
func findings[F any](fs []F, rule, secret func(F) string) string {
	var l []string
	for _, f := range fs {
		l = append(l, rule(f)+" "+secret(f))
	}
	sort.Strings(l)
	return strings.Join(l, "\n")
}

// compareDetection runs gitleaks and the port, each with the
// configuration src, over texts.
func compareDetection(t *testing.T, name string, gl *detect.Detector, rs *ruleSet, texts []string) map[string]bool {
	t.Helper()
	pre := newPrefilter(rs.keywords)
	bad := 0
	rules := map[string]bool{}
	for _, text := range texts {
		gf := gl.DetectString(text)
		for _, f := range gf {
			rules[f.RuleID] = true
		}
		want := findings(gf, func(f reportFinding) string { return f.RuleID }, func(f reportFinding) string { return f.Secret })
		got := findings(rs.detect(text, pre.hits(text)), func(f found) string { return f.rule }, func(f found) string { return f.secret })
		if got != want {
			if bad++; bad <= 5 {
				t.Errorf("%s: in %q\ngitleaks finds:\n%s\nscribe finds:\n%s", name, text, want, got)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d texts found differently", name, bad, len(texts))
	}
	return rules
}

// TestDetectAsGitleaks: with gitleaks' default rules, and with each
// configuration of configCases gitleaks reads, the port finds what
// gitleaks finds, rule and secret, in every text.
func TestDetectAsGitleaks(t *testing.T) {
	def, err := parseConfig(gitleaksDefault)
	if err != nil {
		t.Fatal(err)
	}
	texts := gitleaksTexts(t, def.rules)
	gl, err := detect.NewDetectorDefaultConfig()
	if err != nil {
		t.Fatal(err)
	}
	// Every rule with an expression finds something in the texts: the
	// comparison is of findings, not of silences.
	hit := compareDetection(t, "default rules", gl, newRuleSet(def.rules, def.global, def.targeted), texts)
	for _, r := range def.rules {
		if r.src != "" && r.path == "" && !hit[r.id] {
			t.Errorf("%s found nothing in the texts: the comparison proves nothing for it", r.id)
		}
	}
	for i, src := range configCases {
		cfg, err := gitleaksConfig(src)
		if err != nil || len(cfg.Rules) == 0 {
			continue
		}
		c, err := ownConfig(src)
		if err != nil {
			t.Fatal(err)
		}
		extra := []string{"a_12345678 b_87654321", "a_00000000", "x a_12345678\nb_11112222", "a_12345678\n\n\nb_11112222", "a_12345678 2", "1 a_12345678", "a_9876543q",
			"DATABASE_URL=postgres://app:Vq7mK2xL9pR4tZ8w@db.example:5432/x", "mysql://root:password@localhost/db",
			"AKIAZ7QX3M5N2PLKWJ4R and its secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Lr2Xv7Kp4"}
		if hit := compareDetection(t, fmt.Sprintf("case %d", i), detect.NewDetector(cfg), newRuleSet(c.rules, c.global, c.targeted), append(extra, texts[:200]...)); len(hit) == 0 && !strings.Contains(src, "path =") {
			t.Errorf("case %d: gitleaks found nothing: the case proves little", i)
		}
	}
}

// FuzzDetectAsGitleaks: in any text, the port finds what gitleaks finds.
func FuzzDetectAsGitleaks(f *testing.F) {
	for _, s := range planted {
		f.Add("token = " + s + "\nnext")
	}
	f.Add("password: Hx8Qm2Lr7Xv4Kp9Tz3Wc6Np1 # gitleaks:allow")
	f.Add("DATABASE_URL=postgres://app:Vq7mK2xL9pR4tZ8w@db.example:5432/x")
	def, err := parseConfig(gitleaksDefault)
	if err != nil {
		f.Fatal(err)
	}
	rs := newRuleSet(def.rules, def.global, def.targeted)
	gl, err := detect.NewDetectorDefaultConfig()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		compareDetection(t, "default rules", gl, rs, []string{text})
	})
}
