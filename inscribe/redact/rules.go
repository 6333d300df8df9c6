package redact

import (
	_ "embed"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/pelletier/go-toml/v2"
)

// gitleaksDefault is gitleaks' default configuration, config/gitleaks.toml
// of the version go.mod requires, kept as gitleaks publishes it
// (TestDefaultRulesAreGitleaks compares the two; go test -update copies
// it again). Detection is gitleaks' own, ported (engine.go); linking
// gitleaks itself cost every command of scribe 2 to 3 ms of start-up and
// inscription 6 to 9 MB of heap for rules it compiled whether or not a
// text ever needed them.
//
//go:embed gitleaks.toml
var gitleaksDefault string

// A rule is one rule of gitleaks' configuration (config.Rule): a secret
// is what its expression finds, where one of its keywords occurs, unless
// its entropy is too low or an allowlist lets it be.
type rule struct {
	id          string
	src         string // the expression, as written; "" for a rule of a path alone
	path        string // the expression of a path the rule is limited to, or ""
	secretGroup int
	entropy     float64
	keywords    []string // lower case
	allowlists  []*allowlist
	required    []required
	skipReport  bool

	// The expressions are compiled when a text first needs them: most
	// rules never run on what a session holds.
	once     sync.Once
	re       *regexp.Regexp
	pathNone bool // the path expression matches no empty path: the rule finds nothing in text
	err      error
}

// required is a rule a composite rule needs to find something near its
// own finding (config.Required).
type required struct {
	id            string
	withinLines   *int
	withinColumns *int
}

// compile compiles the rule's expressions, once.
func (r *rule) compile() error {
	r.once.Do(func() {
		if r.path != "" {
			p, err := regexp.Compile(r.path)
			if err != nil {
				r.err = fmt.Errorf("rule %q: path: %w", r.id, err)
				return
			}
			// scribe's texts have no path: a rule limited to paths
			// finds something only if its path expression matches the
			// empty one (gitleaks' detectRule).
			r.pathNone = !p.MatchString("")
		}
		if r.src != "" {
			r.re, r.err = regexp.Compile(r.src)
			if r.err != nil {
				r.err = fmt.Errorf("rule %q: %w", r.id, r.err)
			} else if r.secretGroup > r.re.NumSubexp() {
				r.err = fmt.Errorf("rule %q: secretGroup %d, but its expression has %d groups", r.id, r.secretGroup, r.re.NumSubexp())
			}
		}
	})
	return r.err
}

// An allowlist lets findings be (config.Allowlist): those whose secret
// (or match, or line: target) an expression of regexes matches, or that
// hold a stop word. With condition "AND", every check it has must pass;
// a check of paths or commits never does, as scribe's texts have neither.
type allowlist struct {
	and       bool
	target    string // "" (the secret), "match" or "line"
	regexes   []string
	stopWords []string // lower case
	paths     bool     // it has paths or commits to check

	once sync.Once
	re   *regexp.Regexp // regexes joined as gitleaks joins them
	err  error
}

func (a *allowlist) compile() error {
	a.once.Do(func() {
		if len(a.regexes) == 0 {
			return
		}
		// Each alone first, as gitleaks compiles them: joined, two wrong
		// ones can make a right one ("0[" and "0]").
		for _, s := range a.regexes {
			if _, err := regexp.Compile(s); err != nil {
				a.err = err
				return
			}
		}
		a.re, a.err = regexp.Compile("(?:" + strings.Join(a.regexes, "|") + ")")
	})
	return a.err
}

// allows reports whether the allowlist lets a finding be
// (detect.checkFindingAllowed).
func (a *allowlist) allows(secret, match, line string) bool {
	t := secret
	switch a.target {
	case "match":
		t = match
	case "line":
		t = line
	}
	regex := a.re != nil && t != "" && a.re.MatchString(t)
	stop := false
	if secret != "" && len(a.stopWords) > 0 {
		l := strings.ToLower(secret)
		for _, w := range a.stopWords {
			// An empty stop word matches nothing, as in gitleaks' trie
			// (stopwords = "a," reads as "a" and ""); it still counts
			// as a check under AND.
			if w != "" && strings.Contains(l, w) {
				stop = true
				break
			}
		}
	}
	if !a.and {
		return regex || stop
	}
	if a.paths {
		return false
	}
	return (len(a.regexes) == 0 || regex) && (len(a.stopWords) == 0 || stop)
}

// A ruleConfig is what one file in gitleaks' configuration form says: its
// rules in order, its allowlists for every rule and for some, and the
// rules it disables ([extend] disabledRules).
type ruleConfig struct {
	rules    []*rule
	shadowed []*rule // rules a later one of the same id replaces
	global   []*allowlist
	targeted map[string][]*allowlist // by the id of the rule
	disabled []string
}

// parseConfig reads src, a file in gitleaks' configuration form, as
// gitleaks reads it (viper and config.ViperConfig.Translate): keys in any
// case, a string where a list is wanted split at commas, numbers written
// as strings. [extend] path, url and useDefault are not followed: the
// default rules are always there.
func parseConfig(src string) (*ruleConfig, error) {
	top, err := readTOML([]byte(src))
	if err != nil {
		return nil, err
	}
	c := &ruleConfig{targeted: map[string][]*allowlist{}}
	if ext, ok := top["extend"].(map[string]any); ok {
		d, err := asStrings(ext["disabledrules"])
		if err != nil {
			return nil, fmt.Errorf("[extend] disabledRules: %w", err)
		}
		c.disabled = d
	}
	rules, err := tables(top["rules"])
	if err != nil {
		return nil, fmt.Errorf("[[rules]]: %w", err)
	}
	at := map[string]int{}
	pos := map[*rule]int{} // each rule's place in the file
	for i, t := range rules {
		r, err := parseRule(t)
		if err != nil {
			return nil, fmt.Errorf("[[rules]] %s: %w", ruleName(i, r), err)
		}
		pos[r] = i
		// A rule of the same id replaces one before it, as in gitleaks'
		// map of rules; only the last is checked whole (its expression is
		// compiled all the same: check).
		if j, ok := at[r.id]; ok {
			c.shadowed = append(c.shadowed, c.rules[j])
			c.rules[j] = r
			continue
		}
		at[r.id] = len(c.rules)
		c.rules = append(c.rules, r)
	}
	for _, r := range c.rules {
		if strings.TrimSpace(r.id) == "" {
			return nil, fmt.Errorf("[[rules]] %s: its id is missing or empty", ruleName(pos[r], r))
		}
		if r.src == "" && r.path == "" {
			return nil, fmt.Errorf("[[rules]] %s: both its regex and its path are empty: it would find nothing", ruleName(pos[r], r))
		}
	}
	lists, err := allowlistTables(top, "[allowlist]", "[[allowlists]]")
	if err != nil {
		return nil, err
	}
	for i, t := range lists {
		a, err := parseAllowlist(t)
		if err == nil {
			var targets []string
			if targets, err = asStrings(t["targetrules"]); err == nil && len(targets) > 0 {
				for _, id := range targets {
					c.targeted[id] = append(c.targeted[id], a)
				}
				continue
			}
		}
		if err != nil {
			return nil, fmt.Errorf("[[allowlists]] %d: %w", i+1, err)
		}
		c.global = append(c.global, a)
	}
	return c, nil
}

// check compiles c's expressions, and checks that the rules its
// allowlists aim at, and those its composite rules require, are rules
// (known).
func (c *ruleConfig) check(known func(id string) bool) error {
	for _, r := range c.shadowed {
		for _, src := range []string{r.src, r.path} {
			if _, err := regexp.Compile(src); err != nil {
				return fmt.Errorf("rule %q: %w", r.id, err)
			}
		}
	}
	for _, r := range c.rules {
		if err := r.compile(); err != nil {
			return err
		}
		for _, a := range r.allowlists {
			if err := a.compile(); err != nil {
				return fmt.Errorf("rule %q: allowlist: %w", r.id, err)
			}
		}
		for _, q := range r.required {
			if !known(q.id) {
				return fmt.Errorf("rule %q: [[rules.required]]: no rule has the id %q", r.id, q.id)
			}
		}
	}
	for _, a := range c.global {
		if err := a.compile(); err != nil {
			return fmt.Errorf("[[allowlists]]: %w", err)
		}
	}
	for id, as := range c.targeted {
		if !known(id) {
			return fmt.Errorf("[[allowlists]]: targetRules: no rule has the id %q", id)
		}
		for _, a := range as {
			if err := a.compile(); err != nil {
				return fmt.Errorf("[[allowlists]]: %w", err)
			}
		}
	}
	return nil
}

// readTOML reads src's tables as viper reads them (lowerKeys); an error
// names the line and column.
func readTOML(src []byte) (map[string]any, error) {
	var top map[string]any
	if err := toml.Unmarshal(src, &top); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return nil, fmt.Errorf("line %d, column %d: %v", row, col, de)
		}
		return nil, err
	}
	return lowerKeys(top), nil
}

// allowlistTables returns the tables of the allowlist keys of t: the old
// single one or the list of them, not both.
func allowlistTables(t map[string]any, one, many string) ([]map[string]any, error) {
	single, hasOne := t["allowlist"]
	list, err := tables(t["allowlists"])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", many, err)
	}
	if !hasOne || single == nil {
		return list, nil
	}
	if len(list) > 0 {
		return nil, fmt.Errorf("%s is deprecated, it cannot be used alongside %s", one, many)
	}
	s, ok := single.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s is not a table", one)
	}
	return []map[string]any{s}, nil
}

// ruleName names the i-th rule of a file (from 0), r, in an error.
func ruleName(i int, r *rule) string {
	if r != nil && r.id != "" {
		return fmt.Sprintf("rule %d (%s)", i+1, r.id)
	}
	return fmt.Sprintf("rule %d", i+1)
}

func parseRule(t map[string]any) (*rule, error) {
	r := &rule{}
	var err error
	str := func(key string) string {
		var s string
		if err == nil {
			s, err = asString(t[key])
			if err != nil {
				err = fmt.Errorf("%s: %w", key, err)
			}
		}
		return s
	}
	r.id = str("id")
	r.src = str("regex")
	r.path = str("path")
	if err != nil {
		return r, err
	}
	if r.secretGroup, err = asInt(t["secretgroup"]); err != nil {
		return r, fmt.Errorf("secretGroup: %w", err)
	}
	if r.entropy, err = asFloat(t["entropy"]); err != nil {
		return r, fmt.Errorf("entropy: %w", err)
	}
	if r.skipReport, err = asBool(t["skipreport"]); err != nil {
		return r, fmt.Errorf("skipReport: %w", err)
	}
	if r.keywords, err = asStrings(t["keywords"]); err != nil {
		return r, fmt.Errorf("keywords: %w", err)
	}
	for i, k := range r.keywords {
		r.keywords[i] = strings.ToLower(k)
	}
	lists, err := allowlistTables(t, "[rules.allowlist]", "[[rules.allowlists]]")
	if err != nil {
		return r, err
	}
	for i, lt := range lists {
		a, err := parseAllowlist(lt)
		if err != nil {
			return r, fmt.Errorf("[[rules.allowlists]] %d: %w", i+1, err)
		}
		r.allowlists = append(r.allowlists, a)
	}
	reqs, err := tables(t["required"])
	if err != nil {
		return r, fmt.Errorf("[[rules.required]]: %w", err)
	}
	for _, rt := range reqs {
		var q required
		if q.id, err = asString(rt["id"]); err != nil || q.id == "" {
			return r, errors.New("[[rules.required]]: a required rule's id is empty")
		}
		for key, p := range map[string]**int{"withinlines": &q.withinLines, "withincolumns": &q.withinColumns} {
			if v, ok := rt[key]; ok && v != nil {
				n, err := asInt(v)
				if err != nil {
					return r, fmt.Errorf("[[rules.required]] %s: %w", key, err)
				}
				*p = &n
			}
		}
		r.required = append(r.required, q)
	}
	return r, nil
}

func parseAllowlist(t map[string]any) (*allowlist, error) {
	a := &allowlist{}
	cond, err := asString(t["condition"])
	if err != nil {
		return nil, fmt.Errorf("condition: %w", err)
	}
	switch strings.ToUpper(cond) {
	case "AND", "&&":
		a.and = true
	case "", "OR", "||":
	default:
		return nil, fmt.Errorf("unknown condition %q (expected \"and\", \"or\")", cond)
	}
	if a.target, err = asString(t["regextarget"]); err != nil {
		return nil, fmt.Errorf("regexTarget: %w", err)
	}
	switch a.target {
	case "secret":
		a.target = ""
	case "", "match", "line":
	default:
		return nil, fmt.Errorf("unknown regexTarget %q (expected \"match\", \"line\")", a.target)
	}
	lists := map[string]*[]string{"regexes": &a.regexes, "stopwords": &a.stopWords}
	var paths, commits []string
	lists["paths"], lists["commits"] = &paths, &commits
	for key, p := range lists {
		if *p, err = asStrings(t[key]); err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
	}
	for _, p := range paths {
		if _, err := regexp.Compile(p); err != nil {
			return nil, fmt.Errorf("paths: %w", err)
		}
	}
	a.paths = len(paths)+len(commits) > 0
	if len(a.regexes)+len(a.stopWords) == 0 && !a.paths {
		return nil, errors.New("it must hold at least one check: commits, paths, regexes or stopwords")
	}
	seen := map[string]bool{}
	words := a.stopWords[:0:0]
	for _, w := range a.stopWords {
		if w = strings.ToLower(w); !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	a.stopWords = words
	return a, nil
}

// lowerKeys returns t with every key of every table in lower case, as
// viper reads a configuration: it also drops the empty tables that are
// not in an array (it keeps a table's keys as paths, and an empty one
// has none).
func lowerKeys(t map[string]any) map[string]any { return lowerTable(t, true) }

func lowerTable(t map[string]any, drop bool) map[string]any {
	out := make(map[string]any, len(t))
	for k, v := range t {
		v = lowerValue(v, drop)
		if m, ok := v.(map[string]any); ok && len(m) == 0 && drop {
			continue
		}
		out[strings.ToLower(k)] = v
	}
	return out
}

func lowerValue(v any, drop bool) any {
	switch v := v.(type) {
	case map[string]any:
		return lowerTable(v, drop)
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = lowerValue(x, false)
		}
		return out
	case []map[string]any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = lowerTable(x, false)
		}
		return out
	}
	return v
}

// tables reads an array of tables (or one table, as viper reads it).
func tables(v any) ([]map[string]any, error) {
	if v == nil {
		return nil, nil
	}
	if t, ok := v.(map[string]any); ok {
		return []map[string]any{t}, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, errors.New("not an array of tables")
	}
	out := make([]map[string]any, len(list))
	for i, x := range list {
		if out[i], ok = x.(map[string]any); !ok {
			return nil, errors.New("not an array of tables")
		}
	}
	return out, nil
}

// The conversions below are those of the decoder viper uses
// (mapstructure, weakly typed): a number or a boolean where a string is
// wanted, a string where a number is, a string where a list is (split at
// commas).

func asString(v any) (string, error) {
	switch v := v.(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	case bool:
		if v {
			return "1", nil
		}
		return "0", nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	}
	return "", fmt.Errorf("%v is not a string", v)
}

func asStrings(v any) ([]string, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case string:
		if v == "" {
			return []string{}, nil
		}
		return strings.Split(v, ","), nil
	case []any:
		out := make([]string, len(v))
		for i, x := range v {
			s, err := asString(x)
			if err != nil {
				return nil, err
			}
			out[i] = s
		}
		return out, nil
	}
	s, err := asString(v)
	if err != nil {
		return nil, fmt.Errorf("%v is not a list of strings", v)
	}
	return []string{s}, nil
}

func asInt(v any) (int, error) {
	if s, ok := v.(string); ok && s != "" {
		n, err := strconv.ParseInt(s, 0, 0)
		if err != nil {
			return 0, fmt.Errorf("%q is not a number", s)
		}
		return int(n), nil
	}
	f, err := asFloat(v)
	return int(f), err
}

func asFloat(v any) (float64, error) {
	switch v := v.(type) {
	case nil:
		return 0, nil
	case int64:
		return float64(v), nil
	case float64:
		if math.IsNaN(v) {
			return 0, errors.New("nan is not a number")
		}
		return v, nil
	case bool:
		if v {
			return 1, nil
		}
		return 0, nil
	case string:
		if v == "" {
			return 0, nil
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a number", v)
		}
		return f, nil
	}
	return 0, fmt.Errorf("%v is not a number", v)
}

func asBool(v any) (bool, error) {
	switch v := v.(type) {
	case nil:
		return false, nil
	case bool:
		return v, nil
	case int64:
		return v != 0, nil
	case float64:
		return v != 0, nil
	case string:
		if v == "" {
			return false, nil
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return false, fmt.Errorf("%q is not true or false", v)
		}
		return b, nil
	}
	return false, fmt.Errorf("%v is not true or false", v)
}
