package index

import (
	"cmp"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"modernc.org/sqlite"
)

// Phrases of common words.
//
// FTS5 finds a phrase by reading the rounds that have all its words and
// comparing where in them the words are: a phrase of three common words
// found in 90 of a million rounds reads the half million that have the
// words. So pairs_fts indexes every two adjacent words of a body as one
// token, "go_test" for "go test", and a phrase's candidates are the rounds
// with all its pairs (with two words, exactly its rounds): few when the
// phrase is rare, however common its words. The pairs are cut in Go
// (scribe_pairs, called by the triggers); FTS5 folds their case and
// diacritics as it folds words, the same in the index and in the query.
const (
	// unpairedToken stands for the pairs of a body that has not got them
	// all: a round with it is a candidate for every phrase. No pair is
	// it: a pair has '_'.
	unpairedToken = "unpaired"
	// pairBytes is the longest body whose pairs are indexed: the pairs
	// are twice the body, in memory while the row is written.
	pairBytes = 1 << 20
)

func init() {
	sqlite.MustRegisterDeterministicScalarFunction("scribe_pairs", -1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		var texts []string
		for _, a := range args {
			t, _ := a.(string)
			texts = append(texts, t)
		}
		return pairsOf(texts...), nil
	})
	sqlite.MustRegisterDeterministicScalarFunction("scribe_cjk", 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		t, _ := args[0].(string)
		return cjkText(t), nil
	})
}

// pairsOf returns the pairs of texts (pairText), those of each text after
// the last's; unpairedToken when a text has not got them all.
func pairsOf(texts ...string) string {
	size := 0
	for _, t := range texts {
		size += len(t)
	}
	if size > pairBytes {
		return unpairedToken
	}
	var sb strings.Builder
	for _, t := range texts {
		p := pairText(t)
		if p == unpairedToken {
			return p
		}
		sb.WriteString(p)
	}
	return sb.String()
}

// pairText returns the pairs of adjacent tokens of body, each as the two
// tokens joined with '_', separated by spaces; unpairedToken when body
// is longer than pairBytes or has a combining mark (FTS5 keeps those in
// the token they follow, which Go's tokens end at, so their pairs would
// not be FTS5's).
func pairText(body string) string {
	if len(body) > pairBytes {
		return unpairedToken
	}
	var sb strings.Builder
	prev := ""
	for i, after := 0, 0; ; {
		start, end, next := nextToken(body, i)
		if start == len(body) {
			break
		}
		if from := max(i, after); from < start && hasMark(body[from:start]) {
			return unpairedToken
		}
		tok := body[start:end]
		if prev != "" && pairable(prev, tok) {
			sb.Grow(len(prev) + len(tok) + 2)
			sb.WriteString(prev)
			sb.WriteByte('_')
			sb.WriteString(tok)
			sb.WriteByte(' ')
		}
		prev, i, after = tok, next, end
	}
	return sb.String()
}

// hasMark reports whether s, text between tokens, has a combining mark.
func hasMark(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			r, _ := utf8.DecodeRuneInString(s[i:])
			if unicode.IsMark(r) {
				return true
			}
		}
	}
	return false
}

// phrasePairs returns the pairs_fts tokens of p's adjacent whole tokens
// (a prefix is not whole), as FTS5 strings.
func phrasePairs(p phrase) []string {
	toks := p.tokens
	if p.prefix {
		toks = toks[:len(toks)-1]
	}
	var out []string
	for i := 0; i+1 < len(toks); i++ {
		if !pairable(toks[i], toks[i+1]) {
			continue
		}
		out = append(out, `"`+strings.ReplaceAll(toks[i]+"_"+toks[i+1], `"`, `""`)+`"`)
	}
	return out
}

// pairable reports whether two adjacent tokens have their pair in
// pairs_fts: not two of a run of CJK letters, whose tokens are pairs of
// letters already (a word of them is found by its few tokens in text_fts;
// their pairs would cost a CJK text three times the time to index).
func pairable(a, b string) bool {
	ra, _ := utf8.DecodeRuneInString(a)
	rb, _ := utf8.DecodeRuneInString(b)
	return !isCJK(ra) || !isCJK(rb)
}

// uncertain reports whether a token of body has a letter or digit beyond
// ASCII: FTS5 folds some of them (diacritics) where the matcher does not,
// so a body the matcher finds no match in may still be one.
func uncertain(body string) bool {
	for i := 0; i < len(body); i++ {
		if body[i] >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(body[i:])
			if isTokenRune(r) || unicode.IsMark(r) {
				return true
			}
			i += n - 1
		}
	}
	return false
}

// uncertain reports whether a text of c read has a letter FTS5 may fold
// (uncertain).
func (c *candidate) uncertain() bool {
	for _, t := range c.texts {
		if t != nil && uncertain(*t) {
			return true
		}
	}
	return false
}

// commonWord is how many rounds a word of a query with phrases must match
// for the phrases' pairs to be searched: the rounds of a rarer word are
// fewer, and they are the candidates instead.
const commonWord = 1024

// A scan (scanSource) reads the newest scanProbe rounds first, and gives
// way to FTS5 (errScan) when fewer than half the rounds it read match, or
// when more than scanChecks of those that do not have letters FTS5 may
// fold (which FTS5 is asked about: matching).
const (
	scanProbe  = 32
	scanChecks = 4
)

// lookups is how many rounds matching asks FTS5 about one by one, at most.
const lookups = 16

// errScan is a scan's (scanSource) that gives way to FTS5.
var errScan = errors.New("index: a scan gives way to FTS5")

// scanSource returns whether a query is found by reading the newest
// rounds and checking each (verified), where FTS5 would read and merge
// the rounds of dozens of terms: a literal query of one prefix of one
// character, with no agent, project or engagement filter (time bounds are
// a range of rounds to read), is each prefix of two characters it can be
// (phraseMatch), whose rounds FTS5 merges in 4-7 ms at 200,000 rounds;
// and most rounds have a word it starts.
func (s *searcher) scanSource(q Query, phrases []phrase, filters []string) (source, bool) {
	ok := !q.Raw && len(phrases) == 1 && phrases[0].prefix && len(phrases[0].tokens) == 1 &&
		utf8.RuneCountInString(phrases[0].tokens[0]) == 1 && isASCII(phrases[0].tokens[0]) && len(filters) == 0 && s.project == ""
	return source{oneTerm: true}, ok
}

// phraseSource returns where a literal query that has a phrase of two whole
// words or more finds its candidates, when not as FTS5 does (ok false).
// That is the rounds of its rarest word in text_fts when one is in fewer
// than commonWord rounds (within the time bounds), else the rounds with
// all its phrases' pairs in pairs_fts; with the filters, either way.
func (s *searcher) phraseSource(q Query, phrases []phrase, parts, filters []string) (src source, ok bool, err error) {
	if q.Raw {
		return source{}, false, nil
	}
	if src, ok := s.scanSource(q, phrases, filters); ok {
		return src, true, nil
	}
	var pairs, words []string
	for i, p := range phrases {
		if pp := phrasePairs(p); len(pp) > 0 {
			pairs = append(pairs, pp...)
		} else {
			words = append(words, parts[i])
		}
	}
	if len(pairs) == 0 {
		return source{}, false, nil
	}
	rarest, fewest := "", commonWord
	for _, w := range words {
		var n int
		if err := s.tx.QueryRowContext(s.ctx, `SELECT count(*) FROM (SELECT 1 FROM text_fts WHERE text_fts MATCH ? AND rowid >= ? AND rowid < ? LIMIT `+strconv.Itoa(commonWord)+`)`,
			s.within(w), s.lo, s.hi).Scan(&n); err != nil {
			return source{}, false, err
		}
		if n < fewest {
			rarest, fewest = w, n
		}
	}
	if rarest != "" {
		return source{"text_fts", s.within(rarest) + filterAnd(filters), len(filters) == 0}, true, nil
	}
	slices.Sort(pairs)
	pairs = slices.Compact(pairs)
	src = source{"pairs_fts", "((" + strings.Join(pairs, " AND ") + ") OR " + unpairedToken + ")", len(pairs) == 1 && len(filters) == 0}
	// pairs_fts keeps no positions (detail=none), so it answers no column
	// query: the filter tokens go unqualified (hex, they are no pair).
	for _, f := range filters {
		src.match += " AND " + f
	}
	return src, true, nil
}

// verified returns the newest k rounds (or fewer) that src selects and
// that match body, the query's text_fts match without its filters (which
// src's match has), scored. The texts read decide for most rounds
// (scorer.score); FTS5 for those they cannot (a text not read whole, or
// with letters FTS5 may fold), a batch's at once (matching).
func (s *searcher) verified(src source, body string, k int, sc *scorer) ([]candidate, error) {
	var out []candidate
	read, checks, batch := 0, 0, k
	if src.table == "" {
		batch = scanProbe
	}
	for hi := s.hi; ; {
		ids, next, done, err := s.candidates(src, hi, batch)
		if err != nil {
			return nil, err
		}
		read += len(ids)
		cs, err := s.load(ids, sc)
		if err != nil {
			return nil, err
		}
		var unsure []int64
		for _, c := range cs {
			if !c.found && (!c.complete || c.folds) {
				unsure = append(unsure, c.id)
			}
		}
		if checks += len(unsure); src.table == "" && checks > scanChecks {
			return nil, errScan
		}
		inFTS, err := s.matching(body, unsure)
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			if c.found || inFTS[c.id] {
				c.found = true
				out = append(out, c)
			}
		}
		if src.table == "" && 2*len(out) < read {
			return nil, errScan
		}
		batch = k
		if done || len(out) >= k {
			// The newest k, as a search by text_fts ranks.
			slices.SortFunc(out, func(a, b candidate) int { return cmp.Compare(b.id, a.id) })
			return out[:min(len(out), k)], nil
		}
		hi = next
	}
}

// matching returns which of the rounds ids match in text_fts. FTS5 finds
// one round's terms in each of their segments: 0.5-1 ms a round over
// rounds of real sessions, where reading every round of the words from
// the first of ids to the last took 1.5-3.4 ms for 50 and 106 rounds
// that cost 26-106 ms one by one. A range costs what FTS5 reads of the
// words' rounds in it, though: 8 rounds spread over 60,000 took 8-15 ms
// as a range, 9 ms one by one. So up to lookups rounds are looked up, and
// more read as a range.
func (s *searcher) matching(match string, ids []int64) (map[int64]bool, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	q, args := `SELECT rowid FROM text_fts WHERE text_fts MATCH ? AND rowid >= ? AND rowid <= ?`, []any{match, slices.Min(ids), slices.Max(ids)}
	if len(ids) <= lookups {
		list, err := json.Marshal(ids)
		if err != nil {
			return nil, err
		}
		q, args = `SELECT rowid FROM text_fts WHERE text_fts MATCH ? AND rowid IN (SELECT value FROM json_each(?))`, []any{match, list}
	}
	found, err := column[int64](s.ctx, s.tx, q, args...)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]bool, len(ids)) // a range's other rounds were not asked about
	for _, id := range ids {
		out[id] = false
	}
	for _, id := range found {
		if _, asked := out[id]; asked {
			out[id] = true
		}
	}
	return out, nil
}
