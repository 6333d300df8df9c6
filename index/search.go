package index

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// How a search stays fast at a million rounds.
//
// A word in half the rounds matches half a million of them: scoring every
// match with bm25, or even counting them, takes a second. So a search
// ranks a window of candidates: the newest rankWindow rounds that match
// (rowids order rounds by time, and FTS5 reads a match's rounds newest
// first, stopping when it has enough). A query that matches no more
// rounds than that is ranked whole: every round it matches is a candidate.
//
// The filters are in the match too, so that FTS5 skips the rounds they
// exclude instead of the search reading them: --since and --until are a
// rowid range; an agent, project or engagement is a token of text_fts's
// filters column (a project filter is as many as the projects it selects,
// up to filterProjects; past that, the rounds FTS5 finds are checked).
//
// A prefix of two or three characters is read from FTS5's prefix indexes;
// one of a character is replaced by the prefixes of two it can be (and the
// word of one), a longer one by the words it starts (at most expandWords,
// found in text_terms): FTS5 would merge everything the words it starts
// index before reading the first match.
//
// A phrase of common words found in few rounds is looked up by its pairs
// of words instead (pairs.go).
const (
	rankWindow  = 256     // candidates ranked, at least
	expandWords = 32      // words a long prefix is replaced by, at most
	idfRounds   = 8192    // newest rounds in which a word's frequency is estimated
	scoreBytes  = 1 << 18 // longest body whose matches are counted

	filterProjects = 64 // projects a project filter is a match of, at most
)

// bm25's parameters, FTS5's.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// Search finds rounds, best first, ties broken by session and round. The
// best are those bm25 scores highest among the newest rounds that match
// (rankWindow of them, or Limit if more): a search for a rare word ranks
// all its rounds, one for a common word those of lately. Each hit's
// snippet is about 16 tokens of the round's text around its first match.
// A search that finds nothing because a filter names an agent, project or
// engagement the index does not have is a *FilterError.
func (x *DB) Search(ctx context.Context, q Query) (_ []Hit, err error) {
	defer x.damaged(&err)
	_, phrases, err := parseQuery(q)
	if err != nil {
		return nil, err
	}
	if q.Raw {
		if err := balanced(q.Text); err != nil {
			return nil, err
		}
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 20
	}
	// One transaction: the hits and the text their snippets come from
	// are of the same moment.
	tx, err := x.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	s := &searcher{ctx: ctx, tx: tx, x: x, path: x.path, in: q.In.orAll()}
	defer s.close()
	s.cols = s.in.columns()
	if s.in == Prompts|Replies|Tools && !filterLike(phrases) {
		s.cols = ""
	}
	est := s.estimate(len(phrases))
	defer func() {
		if werr := est.stop(); err == nil && werr != nil {
			err = s.searchError(q, werr)
		}
	}()

	// Each phrase as a match of its own (empty: it cannot match): a
	// literal query is all of them, in the texts searched; then the
	// filters.
	parts := make([]string, len(phrases))
	possible := true
	for i, p := range phrases {
		m, ok, err := s.phraseMatch(p)
		if err != nil {
			return nil, err
		}
		possible = possible && ok
		parts[i] = m
	}
	text := strings.Join(parts, " AND ")
	if q.Raw {
		text, possible = cjkQuery(q.Text), true
	}
	filterTerms, ok, err := s.filterMatch(q)
	if err != nil {
		return nil, err
	}
	if !possible || !ok {
		return nil, unknownFilter(ctx, tx, q)
	}
	filters := filterAnd(filterTerms)
	body := s.within(text)
	match := body + filters
	s.lo, s.hi = math.MinInt64, math.MaxInt64
	if !q.Since.IsZero() {
		s.lo = sinceKey(q.Since)
		s.since = &q.Since
	}
	if !q.Until.IsZero() {
		s.lo, s.hi = max(s.lo, 0), untilKey(q.Until)
		s.until = &q.Until
	}

	k := max(rankWindow, limit)
	// A filter of several projects is an OR of their tokens, and FTS5
	// reads every round of each (an OR skips none): 6-9 ms for ten
	// projects at 200,000 rounds. When the query's words have no more
	// than k rounds with the other filters, their projects are checked
	// instead (exact). Not a query with a phrase, whose rounds FTS5 finds
	// by reading every round with its words (pairs.go).
	if s.projectsTerm != "" && !q.Raw && !slices.ContainsFunc(phrases, func(p phrase) bool { return len(p.tokens) > 1 }) {
		rest := slices.DeleteFunc(slices.Clone(filterTerms), func(t string) bool { return t == s.projectsTerm })
		if ids, err := s.oldest("text_fts", body+filterAnd(rest), s.lo, s.hi, k); err == nil && len(ids) <= k {
			filterTerms, filters, s.project = rest, filterAnd(rest), q.Project
			match = body + filters
		}
	}
	sc, err := s.scorer(q, phrases, parts, est)
	if err != nil {
		return nil, s.searchError(q, err)
	}
	s.oldestFirst = (len(phrases) != 1 || len(phrases[0].tokens) == 1 || len(filterTerms) > 0 || s.in != Prompts|Replies|Tools) &&
		!s.oneWord(q, phrases, filterTerms)
	var found []candidate
	more := false   // rounds that match may be left out of found (older ones)
	var ids []int64 // the window's rounds, when they are not read yet
	window := false // the window is still to be found (overflows)
	src, ok, err := s.phraseSource(q, phrases, parts, filterTerms)
	if err != nil {
		return nil, err
	}
	if ok {
		found, err = s.verified(src, body, k, sc)
		if errors.Is(err, errScan) {
			ok, err = false, nil // as FTS5 finds them
		}
		if err != nil {
			return nil, err
		}
		more = len(found) >= k
	}
	switch {
	case ok: // found above
	case sc.whole != nil && s.oldestFirst && s.since == nil && s.until == nil && s.project == "" && s.overflows("text_fts", match, k):
		// More than the window matches, and the rounds where the words
		// are one phrase are read first (below): the window is read only
		// if they do not fill the page.
		more, window = true, true
	default:
		var done bool
		ids, _, done, err = s.candidates(inText(match), s.hi, k)
		if err != nil {
			return nil, s.searchError(q, err)
		}
		// An OR of --fts may have a rare phrase whose rounds are all older
		// than the window: every round with a rare phrase of the query is a
		// candidate too, up to k of each.
		if q.Raw && len(ids) == k && hasOR(q.Text) {
			if err := est.wait(); err != nil {
				return nil, s.searchError(q, err)
			}
			seen := map[int64]bool{}
			for _, id := range ids {
				seen[id] = true
			}
			for i, m := range parts {
				if m == "" || est.hits[i] > float64(k) {
					continue
				}
				more, _, _, err := s.candidates(inText(s.within(text)+" AND "+s.within(m)+filters), s.hi, k)
				if err != nil {
					return nil, s.searchError(q, err)
				}
				for _, id := range more {
					if !seen[id] {
						seen[id] = true
						ids = append(ids, id)
					}
				}
			}
		}
		more = !done
	}
	// Rounds where the query's words are one phrase rank first: when the
	// window may have left some out, the newest k of them are candidates
	// too, however old. They are read before the window's: when limit of
	// them are one phrase, no other round of the window ranks among the
	// best (those of the window where the words are one phrase are among
	// the newest k that are), and the window need not be read.
	var wholes []candidate
	if sc.whole != nil && more {
		if wholes, err = s.wholes(q, sc, filters, filterTerms, k); err != nil {
			return nil, err
		}
		n := 0
		for _, c := range wholes {
			if c.tier == tierPhrase {
				n++
			}
		}
		if n >= limit {
			ids, window = nil, false
		}
	}
	if window {
		if ids, _, _, err = s.candidates(inText(match), s.hi, k); err != nil {
			return nil, s.searchError(q, err)
		}
	}
	if ids != nil {
		if found, err = s.load(ids, sc); err != nil {
			return nil, err
		}
	}
	seen := map[int64]bool{}
	for _, c := range found {
		seen[c.id] = true
	}
	for _, c := range wholes {
		if !seen[c.id] {
			found = append(found, c)
		}
	}
	if len(found) == 0 {
		return nil, unknownFilter(ctx, tx, q)
	}
	if err := est.wait(); err != nil {
		return nil, s.searchError(q, err)
	}
	for i := range found {
		found[i].score = sc.bm25(&found[i])
	}
	return s.hits(best(found, limit), sc)
}

// wholes returns the newest k rounds where the query's words are one
// phrase (sc.whole), with the rounds its source finds that have every word
// (verified), scored.
func (s *searcher) wholes(q Query, sc *scorer, filters string, filterTerms []string, k int) ([]candidate, error) {
	wm, ok, err := s.phraseMatch(*sc.whole)
	if err != nil || !ok {
		return nil, err
	}
	src, ok, err := s.phraseSource(q, []phrase{*sc.whole}, []string{wm}, filterTerms)
	if err != nil {
		return nil, err
	}
	if ok {
		return s.verified(src, s.within(wm), k, sc)
	}
	ids, _, _, err := s.candidates(inText(s.within(wm)+filters), s.hi, k)
	if err != nil {
		return nil, err
	}
	return s.load(ids, sc)
}

// searcher is one search's transaction and statements.
type searcher struct {
	ctx   context.Context
	tx    *sql.Tx
	x     *DB
	path  string
	terms *sql.Stmt // the first word of text_terms at or after ?
	// The rowids of the rounds the time bounds may select, [lo, hi),
	// and the bounds (nil: none).
	lo, hi       int64
	since, until *time.Time
	project      string // a project filter the match does not have
	projectsTerm string // the match's term of a project filter of several projects
	in           Texts  // the texts searched
	// cols is the column filter of the texts searched, or "" where a
	// match needs none (within).
	cols string
	// loaded are the rounds read and scored (load), by rowid: a round
	// the window and the rounds of the whole phrase both have is read
	// once.
	loaded map[int64]candidate
	// oldestRead are the oldest rounds of the matches read (oldest), by
	// table, match, bounds and k.
	oldestRead map[string][]int64
	// oldestFirst says the matches are read oldest first (rowids): but
	// for a query of one word in every text (oneWord), and one of one
	// phrase of words (whose positions are compared in every round with
	// its words, either way), unless it has a filter (a token most rounds
	// have) or narrows the texts searched (a word may be in few of its
	// texts).
	oldestFirst bool
}

// within returns the text_fts match of m in the texts searched.
func (s *searcher) within(m string) string {
	if s.cols == "" {
		return "(" + m + ")"
	}
	return s.cols + " : (" + m + ")"
}

// filterLike reports whether a token of the phrases could be one of
// text_fts's filters column (filterToken: 'a', 'p' or 'e' and hex digits,
// which FTS5 reads in lower case), or fold to one as FTS5 folds letters
// beyond ASCII. A query none of whose tokens could needs no column filter
// to search every text: the filters column has none of its tokens, and
// FTS5 then reads which rounds have a word without reading in which
// column each of its places is. The tokens of a query of --fts are those
// of its strings and barewords (rawPhrases), a column it names has none
// of them either, and a column filter of its own applies as written.
func filterLike(phrases []phrase) bool {
	for _, p := range phrases {
		for _, t := range p.tokens {
			if !isASCII(t) {
				return true
			}
			if c := lowerASCII(t[0]); c != 'a' && c != 'p' && c != 'e' {
				continue
			}
			hex := true
			for i := 1; i < len(t) && hex; i++ {
				c := lowerASCII(t[i])
				hex = '0' <= c && c <= '9' || 'a' <= c && c <= 'f'
			}
			if hex {
				return true
			}
		}
	}
	return false
}

func (s *searcher) close() {
	if s.terms != nil {
		s.terms.Close()
	}
}

// source is where a search finds candidates: the rounds that match in
// table. A match of one term (a word, a prefix or a pair, or several of
// them ORed, with no filter) is read newest first (rowids): FTS5 reads a
// term's rounds backwards a page at a time, as cheaply as forwards, and it
// skips none either way; reading the oldest first as well would read the
// rounds of a common one twice.
//
// A source of no table is every round, newest first (scanSource).
type source struct {
	table, match string
	oneTerm      bool
}

// inText is the source of a match in text_fts.
func inText(match string) source { return source{table: "text_fts", match: match} }

// candidates returns the rowids of the newest k rounds with rowid below hi
// that src selects, start within the time bounds and are of the project,
// newest first; and where the next ones are (below next), or that there
// are no more (done).
func (s *searcher) candidates(src source, hi int64, k int) (out []int64, next int64, done bool, err error) {
	for {
		ids, err := s.rowids(src, s.lo, hi, k)
		if err != nil {
			return nil, 0, false, err
		}
		n := len(ids)
		if n > 0 {
			hi = ids[n-1]
		}
		if s.since != nil || s.until != nil || s.project != "" {
			// The rowids bound a round's start to within spillMax seconds.
			if ids, err = s.exact(ids); err != nil {
				return nil, 0, false, err
			}
		}
		out = append(out, ids...)
		if len(out) > k {
			out = out[:k]
			return out, out[k-1], false, nil
		}
		if len(out) == k || n < k {
			return out, hi, n < k, nil
		}
	}
}

// oneWord reports whether q is a literal query of one word (or prefix)
// in every text, with neither a filter nor an upper time bound: its
// rounds are those FTS5 reads of the word, read newest first as cheaply
// as oldest first (no round of the word is skipped either way), so
// reading the oldest first (rowids) would read the rounds twice whenever
// there are more than k, which a common word always has. Not a word in
// some texts: it may be in few of them, and FTS5 then reads all its
// rounds to find them, which costs more a round backwards.
func (s *searcher) oneWord(q Query, phrases []phrase, filterTerms []string) bool {
	return !q.Raw && len(phrases) == 1 && len(phrases[0].tokens) == 1 && len(filterTerms) == 0 &&
		s.in == Prompts|Replies|Tools && s.hi == math.MaxInt64 && s.project == ""
}

// rowids returns the rowids of the newest k rounds that src selects, with
// rowid in [lo, hi), newest first.
//
// FTS5 reads a match oldest first far more cheaply than newest first: it
// skips to a rowid through its doclist indexes only forwards, and reads
// back a page at a time. A rare word AND a common one, read newest first,
// is every round with the common word read one by one: 15-25 ms at a
// million rounds. So the
// rounds are read oldest first, up to k+1: when there are no more than k,
// they are all of them, and the newest first would be the same rounds.
// Only a match of more reads the newest k again, newest first, as dense
// matches are found soon either way. A phrase of common words found in
// more than k rounds would be read twice, at the cost of both: oldestFirst
// says when not to, and a source of one term needs neither (source).
func (s *searcher) rowids(src source, lo, hi int64, k int) ([]int64, error) {
	if !s.oldestFirst || src.oneTerm {
		return s.rowidsIn(src.table, src.match, lo, hi, k, "DESC")
	}
	ids, err := s.oldest(src.table, src.match, lo, hi, k)
	if err != nil || len(ids) > k {
		return s.rowidsIn(src.table, src.match, lo, hi, k, "DESC")
	}
	ids = slices.Clone(ids)
	slices.Reverse(ids)
	return ids, nil
}

// oldest returns the rowids of the oldest k+1 rounds that match in table
// with rowid in [lo, hi), oldest first, read once a search.
func (s *searcher) oldest(table, match string, lo, hi int64, k int) ([]int64, error) {
	key := fmt.Sprint(table, "\x00", match, "\x00", lo, hi, k)
	if ids, ok := s.oldestRead[key]; ok {
		return ids, nil
	}
	ids, err := s.rowidsIn(table, match, lo, hi, k+1, "ASC")
	if err != nil {
		return nil, err
	}
	if s.oldestRead == nil {
		s.oldestRead = map[string][]int64{}
	}
	s.oldestRead[key] = ids
	return ids, nil
}

// overflows reports whether more than k rounds match in table within the
// time bounds' rowids.
func (s *searcher) overflows(table, match string, k int) bool {
	ids, err := s.oldest(table, match, s.lo, s.hi, k)
	return err == nil && len(ids) > k // an error is met again reading them
}

// rowidsIn returns the rowids of the first k rounds in order (ASC or DESC)
// that match in table, with rowid in [lo, hi). The limit is written in the
// statement: SQLite plans with a LIMIT's value, so a statement whose
// limit is bound is prepared again when it first runs.
func (s *searcher) rowidsIn(table, match string, lo, hi int64, k int, order string) ([]int64, error) {
	q, args := `SELECT rowid FROM `+table+` WHERE `+table+` MATCH ? AND rowid >= ? AND rowid < ?`, []any{match, lo, hi}
	if table == "" {
		q, args = `SELECT id FROM text_fts_docsize WHERE id >= ? AND id < ?`, []any{lo, hi} // every round
	}
	return column[int64](s.ctx, s.tx, q+` ORDER BY 1 `+order+` LIMIT `+strconv.Itoa(k), args...)
}

// exact returns the rounds of ids that start within the time bounds and
// are of the project, in order.
func (s *searcher) exact(ids []int64) ([]int64, error) {
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	rows, err := s.tx.QueryContext(s.ctx, `SELECT r.rowid, `+startMillis("r.started")+`, coalesce(s.project, '')
		FROM json_each(?) j JOIN rounds r ON r.rowid = j.value LEFT JOIN sessions s ON s.session_id = r.session_id`, list)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	ok := map[int64]bool{}
	for rows.Next() {
		var id int64
		var ms sql.NullInt64
		var project string
		if err := rows.Scan(&id, &ms, &project); err != nil {
			return nil, err
		}
		timed := s.since != nil || s.until != nil
		ok[id] = (!timed || ms.Valid && (s.since == nil || ms.Int64 >= s.since.UnixMilli()) && (s.until == nil || ms.Int64 < s.until.UnixMilli())) &&
			strings.Contains(project, s.project)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return slices.DeleteFunc(ids, func(id int64) bool { return !ok[id] }), nil
}

// searchError is err, or a *QueryError if it is SQLite's complaint about
// a raw query. The query is searched inside parentheses, after a column
// filter; SQLite's complaint is about the query as it was typed.
func (s *searcher) searchError(q Query, err error) error {
	if !q.Raw {
		return err
	}
	if _, err2 := s.rowids(inText(q.Text), math.MinInt64, math.MaxInt64, 1); err2 != nil {
		err = err2
	}
	return queryError(q.Text, err)
}

// balanced returns a *QueryError if the parentheses of a raw query do not
// pair up: the query is searched inside parentheses of its own, which a
// stray one would close early, leaving some of it outside the filters.
func balanced(q string) error {
	depth, quoted := 0, false
	for i := 0; i < len(q); i++ {
		switch c := q[i]; {
		case c == '"':
			quoted = !quoted // "" inside a string is two toggles
		case quoted:
		case c == '(':
			depth++
		case c == ')':
			depth--
		}
		if depth < 0 {
			break
		}
	}
	if depth != 0 {
		return &QueryError{Query: q, Raw: true, Msg: "FTS5 syntax error: the parentheses do not pair up"}
	}
	return nil
}

// quotePhrase writes p as an FTS5 phrase.
func quotePhrase(p phrase) string {
	m := `"` + strings.ReplaceAll(strings.Join(p.tokens, " "), `"`, `""`) + `"`
	if p.prefix {
		m += "*"
	}
	return m
}

// phraseMatch returns the FTS5 query for one phrase of a literal query. A
// phrase that ends in a prefix of one character, or of more than three,
// becomes the phrases it can be, when they are few: ending in the prefixes
// of two characters that start with the one, or in the words that start
// with the longer one. ok is false when there are none, and the phrase
// cannot match.
func (s *searcher) phraseMatch(p phrase) (m string, ok bool, err error) {
	last := p.tokens[len(p.tokens)-1]
	n := utf8.RuneCountInString(last)
	if !p.prefix || n == 2 || n == 3 || !isASCII(last) {
		// Prefixes of two and three have prefix indexes. FTS5 folds
		// other letters than ASCII's in ways this does not know: FTS5
		// finds their words.
		return quotePhrase(p), true, nil
	}
	var alts []phrase
	with := func(w string, prefix bool) {
		alts = append(alts, phrase{tokens: append(slices.Clone(p.tokens[:len(p.tokens)-1]), w), prefix: prefix})
	}
	last = strings.ToLower(last)
	if n == 1 {
		seconds, err := s.seconds(last)
		if err != nil {
			return "", false, err
		}
		with(last, false)
		for _, c := range seconds {
			with(last+string(c), true)
		}
	} else {
		words, all, err := s.words(last)
		if err != nil || !all {
			return quotePhrase(p), true, err
		}
		if len(words) == 0 {
			return "", false, nil
		}
		for _, w := range words {
			with(w, false)
		}
	}
	var qs []string
	for _, a := range alts {
		qs = append(qs, quotePhrase(a))
	}
	return "(" + strings.Join(qs, " OR ") + ")", true, nil
}

// seconds returns the characters that may follow c in a word: ASCII's
// letters and digits, and the others that do in a word of text_terms.
func (s *searcher) seconds(c string) ([]rune, error) {
	var out []rune
	for r := '0'; r <= 'z'; r++ {
		if '0' <= r && r <= '9' || 'a' <= r && r <= 'z' {
			out = append(out, r)
		}
	}
	// Beyond ASCII, one word of text_terms at a time: the first at or
	// after c followed by the next possible character.
	for next := rune(utf8.RuneSelf); next <= unicode.MaxRune; {
		w, ok, err := s.term(c + string(next))
		if err != nil || !ok || !strings.HasPrefix(w, c) {
			return out, err
		}
		r, _ := utf8.DecodeRuneInString(w[len(c):])
		out = append(out, r)
		if next = r + 1; next == 0xD800 {
			next = 0xE000 // no surrogates in UTF-8
		}
	}
	return out, nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// term returns the first word of text_terms at or after from.
func (s *searcher) term(from string) (string, bool, error) {
	if s.terms == nil {
		var err error
		if s.terms, err = s.tx.PrepareContext(s.ctx, `SELECT term FROM text_terms WHERE term >= ? LIMIT 1`); err != nil {
			return "", false, err
		}
	}
	var w string
	err := s.terms.QueryRowContext(s.ctx, from).Scan(&w)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	return w, err == nil, err
}

// words returns the words of text_terms that start with prefix, and
// whether that is all of them (there are at most expandWords).
func (s *searcher) words(prefix string) ([]string, bool, error) {
	var out []string
	for from := prefix; ; {
		w, ok, err := s.term(from)
		if err != nil {
			return nil, false, err
		}
		if !ok || !strings.HasPrefix(w, prefix) {
			return out, true, nil
		}
		if len(out) == expandWords {
			return nil, false, nil
		}
		out = append(out, w)
		// The next word: no word has a byte below '0' (tokens are
		// letters and digits).
		from = w + "\x01"
	}
}

// filterToken is the token of text_fts's filters column for a value of a
// kind: 'a' agent, 'p' project, 'e' engagement (round_filters in
// schema.sql).
func filterToken(kind byte, v string) string {
	return `"` + string(kind) + hex.EncodeToString([]byte(v)) + `"`
}

// filterMatch returns the FTS5 queries that select the rounds q's agent,
// project and engagement filters select, each a token or an OR of them, to
// follow the text's with AND; ok is false when a filter selects nothing.
func (s *searcher) filterMatch(q Query) (m []string, ok bool, err error) {
	if q.Agent != "" {
		m = append(m, filterToken('a', q.Agent))
	}
	if q.Project != "" {
		// The projects that contain the text, each a token.
		projects, err := column[string](s.ctx, s.tx, `SELECT DISTINCT project FROM sessions WHERE instr(project, ?) > 0 ORDER BY 1`, q.Project)
		if err != nil || len(projects) == 0 {
			return nil, false, err
		}
		if len(projects) > filterProjects {
			s.project = q.Project
			projects = nil
		}
		var toks []string
		for _, p := range projects {
			toks = append(toks, filterToken('p', p))
		}
		if toks != nil {
			t := "(" + strings.Join(toks, " OR ") + ")"
			if len(toks) > 1 {
				s.projectsTerm = t
			}
			m = append(m, t)
		}
	}
	if q.Engagement != "" {
		m = append(m, filterToken('e', q.Engagement))
	}
	return m, true, nil
}

// filterAnd returns the text_fts match of the filter terms, each ANDed to
// what comes before it.
func filterAnd(terms []string) string {
	m := ""
	for _, t := range terms {
		m += " AND {filters} : " + t
	}
	return m
}

// hasOR reports whether an FTS5 query has the operator OR.
func hasOR(q string) bool {
	quoted := false
	for i := 0; i < len(q); i++ {
		switch c := q[i]; {
		case c == '"':
			quoted = !quoted
		case !quoted && c == 'O' && strings.HasPrefix(q[i:], "OR") &&
			(i == 0 || !isBareword(q[i-1])) && (i+2 == len(q) || !isBareword(q[i+2])):
			return true
		}
	}
	return false
}

// isBareword reports whether c can be part of an FTS5 bareword.
func isBareword(c byte) bool { return c >= utf8.RuneSelf || isTokenByte(c) || c == '_' || c == 0x1a }

// scorer ranks rounds as FTS5's bm25 does, from estimates where FTS5
// would read every match: how often each phrase is found is estimated
// among the newest idfRounds rounds (estimates). Before bm25, a literal
// query of several phrases ranks the rounds where they are one phrase
// (whole) first, then those where they are near one another, then the
// rest; and, of each, the rounds where the query is found in a prompt or
// a reply before those where it is found only in the tools' text.
type scorer struct {
	phrases []phrase
	whole   *phrase  // the literal query's phrases as one, when it has several
	marks   []phrase // whole (if any), then phrases: what a text is searched for
	match   *matcher // finds marks, for the goroutine that reads candidates
	avgdl   float64
	est     *estimates // each phrase's idf, once made (wait)
	all     bool       // every phrase is in every match (a literal query)
	in      Texts      // the texts searched
}

// nearTokens is how many tokens may lie between the phrases of a query for
// a round to rank as one where they are near (FTS5's NEAR's default).
const nearTokens = 10

func (s *searcher) scorer(q Query, phrases []phrase, parts []string, est *estimates) (*scorer, error) {
	sc := &scorer{phrases: phrases, all: !q.Raw, avgdl: 1, in: s.in, est: est}
	if !q.Raw && len(phrases) >= 2 {
		w := phrase{}
		for i, p := range phrases {
			if p.prefix && i < len(phrases)-1 {
				w.tokens = nil // a prefix can only end a phrase
				break
			}
			w.tokens = append(w.tokens, p.tokens...)
			w.prefix = p.prefix
		}
		if w.tokens != nil {
			sc.whole = &w
			sc.marks = append(sc.marks, w)
		}
	}
	sc.marks = append(sc.marks, phrases...)
	sc.match = newMatcher(sc.marks)
	n, cols, err := averages(s.ctx, s.tx)
	if err != nil {
		return nil, err
	}
	var toks uint64
	for col, t := range cols {
		if sc.in.has(col) {
			toks += t
		}
	}
	if n > 0 && toks > 0 {
		sc.avgdl = float64(toks) / float64(n)
	}
	return sc, sc.est.give(parts)
}

// The tiers of a literal query of several phrases, best first.
const (
	tierPhrase   = iota // the phrases are one phrase: the words as typed, in order
	tierNear            // they are within nearTokens of one another, in one text
	tierAnywhere        // elsewhere in the round
)

// score scores a candidate whose texts are read (those not read are nil;
// partly read, not whole), of sizes tokens each as FTS5 counts them (0:
// unknown), with m (sc.match, or a matcher of another goroutine's): what
// its bm25 is of (tf and norm), its tier, whether the query is found only
// in the tools' text, the text and place to cut its snippet from, and
// whether every phrase is found in what was read. Then it lets go of
// the texts longer than keptText.
func (sc *scorer) score(m *matcher, c *candidate, sizes [nCols]int64) {
	sc.rank(m, c, sizes)
	if !c.found {
		c.folds = c.uncertain()
	}
	for col, t := range c.texts {
		if t != nil && len(*t) > keptText {
			c.texts[col] = nil
		}
	}
}

// rank is score's ranking of c.
func (sc *scorer) rank(m *matcher, c *candidate, sizes [nCols]int64) {
	np := len(sc.phrases)
	off := len(sc.marks) - np // whole, if any, comes first
	tf := make([]int, np)
	var occ [nCols][][]occurrence
	var dl int64
	c.complete = true
	conv := make([]bool, np) // each phrase in a prompt or a reply
	convKnown := true        // the prompt and the reply searched were read whole
	readAny := false
	for col := 0; col < nCols; col++ {
		if !sc.in.has(col) {
			continue
		}
		dl += sizes[col]
		t := c.texts[col]
		if t == nil || !c.whole[col] {
			c.complete = false
			if col != colTools {
				convKnown = false
			}
		}
		if t == nil {
			continue
		}
		readAny = true
		var ntok int64
		occ[col], ntok = m.positions(*t)
		if sizes[col] <= 0 {
			dl += ntok
		}
		for i := 0; i < np; i++ {
			tf[i] += len(occ[col][off+i])
			if col != colTools && len(occ[col][off+i]) > 0 {
				conv[i] = true
			}
		}
	}
	if !readAny {
		for i := range tf {
			tf[i] = 1
		}
	}
	c.norm = bm25K1 * (1 - bm25B + bm25B*float64(dl)/sc.avgdl)
	c.found = readAny
	for i, f := range tf {
		c.found = c.found && f > 0
		if f == 0 && sc.all {
			tf[i] = 1 // a match FTS5 folds letters to find, or in what was not read
		}
	}
	c.tf = tf

	// The tier, and the text that has it.
	c.tier, c.col, c.at = tierPhrase, -1, -1
	better := func(tier, col, at int) {
		if c.col < 0 || tier < c.tier || tier == c.tier && col != colTools && c.col == colTools {
			c.tier, c.col, c.at = tier, col, at
		}
	}
	for col := 0; col < nCols; col++ {
		o := occ[col]
		if o == nil {
			continue
		}
		switch {
		case sc.whole != nil && len(o[0]) > 0:
			better(tierPhrase, col, o[0][0].at)
		case sc.whole != nil:
			if at, ok := near(o[off:], sc.phrases); ok {
				better(tierNear, col, at)
			} else if allFound(o[off:]) {
				better(tierAnywhere, col, -1)
			}
		case allFound(o[off:]):
			better(tierPhrase, col, -1)
		}
	}
	// Found only in the tools' text: where the tier is, or (no text has
	// every phrase) where the phrases are, as far as what was read tells.
	tiered := c.col >= 0
	if !tiered {
		c.tier = tierAnywhere
		if sc.whole == nil {
			c.tier = tierPhrase
		}
		for col := 0; col < nCols && c.col < 0; col++ {
			if anyFound(occ[col]) {
				c.col = col
			}
		}
		for col := 0; col < nCols && c.col < 0; col++ {
			if sc.in.has(col) && !c.whole[col] {
				c.col = col // the match may be in what was not read
			}
		}
		if c.col < 0 {
			c.col = sc.in.first()
		}
	}
	c.tool = false
	if sc.in.has(colTools) && (sc.in.has(colPrompt) || sc.in.has(colReply)) && convKnown {
		if tiered {
			c.tool = c.col == colTools
		} else {
			inConv := sc.all // literal: every phrase; raw: some phrase
			for _, f := range conv {
				if sc.all {
					inConv = inConv && f
				} else {
					inConv = inConv || f
				}
			}
			c.tool = !inConv
		}
	}
}

// bm25 returns c's score (scored), once the estimates are made.
func (sc *scorer) bm25(c *candidate) float64 {
	score := 0.0
	for i, f := range c.tf {
		score += sc.est.idf[i] * float64(f) * (bm25K1 + 1) / (float64(f) + c.norm)
	}
	return score
}

// occurrence is where a phrase matches a text: its first token, and the
// byte where that starts.
type occurrence struct{ tok, at int }

// allFound reports whether every phrase has an occurrence.
func allFound(o [][]occurrence) bool {
	for _, p := range o {
		if len(p) == 0 {
			return false
		}
	}
	return true
}

// anyFound reports whether a phrase has an occurrence.
func anyFound(o [][]occurrence) bool {
	for _, p := range o {
		if len(p) > 0 {
			return true
		}
	}
	return false
}

// near reports whether an occurrence of each phrase lies within the
// phrases' tokens and nearTokens more, in any order, and where the first
// of the first such group starts.
func near(o [][]occurrence, phrases []phrase) (int, bool) {
	type ev struct{ tok, end, at, p int }
	var evs []ev
	span := nearTokens
	for i, p := range o {
		if len(p) == 0 {
			return 0, false
		}
		span += len(phrases[i].tokens)
		for _, x := range p {
			evs = append(evs, ev{x.tok, x.tok + len(phrases[i].tokens), x.at, i})
		}
	}
	slices.SortFunc(evs, func(a, b ev) int { return cmp.Compare(a.tok, b.tok) })
	count := make([]int, len(o))
	have := 0
	lo := 0
	for _, e := range evs {
		if count[e.p] == 0 {
			have++
		}
		count[e.p]++
		for have == len(o) {
			// The window evs[lo] .. e has every phrase: shrink it.
			l := evs[lo]
			if count[l.p] > 1 {
				count[l.p]--
				lo++
				continue
			}
			end := e.end
			for _, x := range evs[lo:] {
				if x.tok > e.tok {
					break
				}
				end = max(end, x.end)
			}
			if end-l.tok <= span {
				return l.at, true
			}
			count[l.p]--
			have--
			lo++
		}
	}
	return 0, false
}

// A matcher finds where phrases match texts, as the snippet marks them:
// each token of a text is compared once with each distinct word of the
// phrases, and a phrase matches where the tokens up to one are its words.
type matcher struct {
	words   []matchWord
	ids     [][]int // each phrase's tokens, as indexes of words
	longest int     // the tokens of the longest phrase
	width   int     // the uint64s of a set of words
	// firsts are the first bytes (in lower case) of the words, when all
	// are ASCII: a token of ASCII that starts with none of them is none
	// of them, and is not compared with each. A word beyond ASCII may
	// fold to a token of ASCII (the Kelvin sign), so with one (wide),
	// every token is compared.
	firsts [128]bool
	wide   bool
	// The words each of the last longest tokens of the text that may be
	// a word is, where it starts, and which token of the text it is
	// (tokens): rings, kept from text to text. A slot of another token
	// than the one a phrase looks for (one skipped, or of an earlier text)
	// holds none of its words.
	sets   []uint64
	starts []int
	tokens []int
}

// matchWord is a word of the phrases: the last of a phrase that ends in a
// prefix is one apart.
type matchWord struct {
	w      string
	prefix bool
	ascii  bool
	first  byte // its first byte in lower case, when ascii
}

func newMatcher(phrases []phrase) *matcher {
	m := &matcher{longest: 1}
	for _, p := range phrases {
		var ids []int
		for k, t := range p.tokens {
			w := matchWord{w: t, prefix: p.prefix && k == len(p.tokens)-1, ascii: isASCII(t)}
			if w.ascii {
				w.first = lowerASCII(t[0])
			}
			i := slices.Index(m.words, w)
			if i < 0 {
				i = len(m.words)
				m.words = append(m.words, w)
			}
			ids = append(ids, i)
		}
		m.ids = append(m.ids, ids)
		m.longest = max(m.longest, len(ids))
	}
	for _, w := range m.words {
		if w.ascii {
			m.firsts[w.first&0x7f] = true
		} else {
			m.wide = true
		}
	}
	m.width = (len(m.words) + 63) / 64
	m.sets = make([]uint64, m.longest*m.width)
	m.starts = make([]int, m.longest)
	m.tokens = make([]int, m.longest)
	return m
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// positions returns where each phrase matches text (the tokens of each
// match, in order) and how many tokens text has.
func (m *matcher) positions(text string) ([][]occurrence, int64) {
	out := make([][]occurrence, len(m.ids))
	for s := range m.tokens {
		m.tokens[s] = -1 // of no token of this text
	}
	n, slot := 0, 0 // slot is n % m.longest
	for i := 0; i < len(text); {
		var start, end, next int
		ascii := false
		if c := text[i]; c < utf8.RuneSelf {
			if !isTokenByte(c) {
				i++
				continue
			}
			// A token of ASCII letters and digits, as nextToken cuts it
			// unless a letter beyond ASCII goes on with it.
			j := i + 1
			for j < len(text) && isTokenByte(text[j]) {
				j++
			}
			start, end, next, ascii = i, j, j, true
			if j < len(text) && text[j] >= utf8.RuneSelf {
				start, end, next = nextToken(text, i)
				ascii = isASCII(text[start:end])
			}
		} else {
			if start, end, next = nextToken(text, i); start == len(text) {
				break
			}
			ascii = isASCII(text[start:end])
		}
		i = next
		at := slot
		n++
		if slot++; slot == m.longest {
			slot = 0
		}
		tok := text[start:end]
		c0 := lowerASCII(tok[0])
		if ascii && !m.wide && !m.firsts[c0&0x7f] {
			continue // no word starts as it does, and no phrase ends at it
		}
		set := m.sets[at*m.width : (at+1)*m.width]
		clear(set)
		m.starts[at] = start
		m.tokens[at] = n - 1
		some := false
		for wi, w := range m.words {
			if ascii && w.ascii && (w.first != c0 || len(tok) < len(w.w) || !w.prefix && len(tok) != len(w.w)) {
				continue // as tokenMatches would say, but sooner
			}
			if tokenMatches(tok, w.w, w.prefix) {
				set[wi/64] |= 1 << (wi % 64)
				some = true
			}
		}
		if !some {
			continue // no phrase ends at this token
		}
		for pi, ids := range m.ids {
			l := len(ids)
			if n < l {
				continue
			}
			ok := true
			for k := l - 1; k >= 0 && ok; k-- {
				t := n - l + k
				s := t % m.longest
				ok = m.tokens[s] == t && m.sets[s*m.width+ids[k]/64]&(1<<(ids[k]%64)) != 0
			}
			if ok {
				out[pi] = append(out[pi], occurrence{n - l, m.starts[(n-l)%m.longest]})
			}
		}
	}
	return out, int64(n)
}

// candidate is a round being ranked.
type candidate struct {
	id      int64
	session string
	round   int
	// texts are its prompt, reply and tools' text as read (nil: not
	// searched, too long to read, or let go of once scored: longer than
	// keptText); whole says a text was read whole, not only its start.
	texts    [nCols]*string
	whole    [nCols]bool
	complete bool // every text searched was read whole
	// folds says a text read has a letter FTS5 may fold (uncertain),
	// where not every phrase was found in them (found).
	folds bool
	// How often each phrase is found in the texts read (at least once
	// where every phrase must be), and bm25's length normalization of the
	// round: what its score (bm25) is of.
	tf    []int
	norm  float64
	score float64
	found bool // every phrase is in the texts read (scorer.score)
	tier  int  // tierPhrase, tierNear or tierAnywhere
	tool  bool // found only in the tools' text
	col   int  // the text the snippet is cut from
	at    int  // where in it, if known (else -1)
}

// toolsScan is how much of a round's tools' text (in characters) a search
// reads to score it: a round's tool calls and their output can be
// megabytes, and the rounds that match are read by the hundred. Over rounds
// of real sessions (tools' text of 19-43 KB a round on average), reading
// 65,536 characters made a search of a word 117 ms and one of three 99 ms,
// 16,384 made them 79 and 89 (8,192: 77 and 80). 16,384 characters are
// a few hundred lines of a round's output, past which how often it has a
// word counts for little in its rank.
const toolsScan = 1 << 14

// toolsRead is the SQL of what a search reads of a round's tools' text
// col: its first toolsScan characters, and a short one whole without
// SQLite counting them (a text's octet_length is in its record's header).
func toolsRead(col string) string {
	return fmt.Sprintf("CASE WHEN octet_length(%[1]s) <= %[2]d THEN %[1]s ELSE substr(%[1]s, 1, %[2]d) END", col, toolsScan)
}

// keptText is the longest text a candidate keeps once scored, for its
// snippet: a hit's longer text is read again (hits). Over rounds of real
// sessions, whose tools' text is tens of KB, the candidates' texts would
// hold the heap at tens of MB, every page of it new to the process.
const keptText = 4 << 10

// load reads and scores the rounds ids, in no order.
//
// A round whose texts are longer than keptText is scored on another
// goroutine (scoring) while the next is read: over rounds of real
// sessions, reading the candidates' texts costs about what finding the
// query in them does.
func (s *searcher) load(ids []int64, sc *scorer) ([]candidate, error) {
	var out []candidate
	var unread []int64
	for _, id := range ids {
		if c, ok := s.loaded[id]; ok {
			out = append(out, c)
		} else {
			unread = append(unread, id)
		}
	}
	if len(unread) == 0 {
		return out, nil
	}
	if s.loaded == nil {
		s.loaded = map[int64]candidate{}
	}
	list, err := json.Marshal(unread)
	if err != nil {
		return nil, err
	}
	// A text's octet_length is in its record's header: SQLite reads
	// neither it nor the text for it.
	rows, err := s.tx.QueryContext(s.ctx, `SELECT r.rowid, r.session_id, r.round,
			CASE WHEN ?1 AND octet_length(r.prompt) <= ?4 THEN r.prompt END,
			CASE WHEN ?2 AND octet_length(r.reply) <= ?4 THEN r.reply END,
			CASE WHEN ?3 THEN `+toolsRead("r.tools")+` END,
			octet_length(r.tools), d.sz
		FROM json_each(?5) j JOIN rounds r ON r.rowid = j.value LEFT JOIN text_fts_docsize d ON d.id = r.rowid`,
		sc.in.has(colPrompt), sc.in.has(colReply), sc.in.has(colTools), scoreBytes, list)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	p := scoring{sc: sc}
	defer p.wait()
	var cs []*candidate
	for rows.Next() {
		c := &candidate{}
		var texts [nCols]sql.NullString
		var toolsBytes sql.NullInt64
		var sz []byte
		if err := rows.Scan(&c.id, &c.session, &c.round, &texts[colPrompt], &texts[colReply], &texts[colTools], &toolsBytes, &sz); err != nil {
			return nil, err
		}
		size := 0
		for col, t := range texts {
			if t.Valid {
				c.texts[col] = &t.String
				c.whole[col] = col != colTools || int64(len(t.String)) == toolsBytes.Int64
				size += len(t.String)
			}
		}
		// The texts' tokens, as FTS5 counts them.
		var sizes [nCols]int64
		for col, k := 0, 0; col < nCols; col++ {
			v, m := varint(sz[k:])
			sizes[col], k = int64(v), k+m
		}
		if size <= keptText {
			sc.score(sc.match, c, sizes)
		} else {
			p.score(c, sizes)
		}
		cs = append(cs, c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	p.wait()
	for _, c := range cs {
		s.loaded[c.id] = *c
		out = append(out, *c)
	}
	return out, nil
}

// scoring scores candidates on goroutines of its own (scoreWorkers, each
// with a matcher), started at the first.
type scoring struct {
	sc   *scorer
	jobs chan scoreJob
	wg   sync.WaitGroup
}

type scoreJob struct {
	c     *candidate
	sizes [nCols]int64
}

// scoreWorkers is how many goroutines score candidates while one reads
// them: the processors but the reader's, one at least and four at most.
var scoreWorkers = min(max(runtime.GOMAXPROCS(0)-1, 1), 4)

// score has c scored (scorer.score); it is, once wait returns.
func (p *scoring) score(c *candidate, sizes [nCols]int64) {
	if p.jobs == nil {
		p.jobs = make(chan scoreJob, 2*scoreWorkers)
		for range scoreWorkers {
			m := newMatcher(p.sc.marks)
			p.wg.Go(func() {
				for j := range p.jobs {
					p.sc.score(m, j.c, j.sizes)
				}
			})
		}
	}
	p.jobs <- scoreJob{c, sizes}
}

// wait waits for every candidate given to be scored, and for the
// goroutines to end.
func (p *scoring) wait() {
	if p.jobs != nil {
		close(p.jobs)
		p.wg.Wait()
		p.jobs = nil
	}
}

// best returns the best limit candidates, best first.
func best(cs []candidate, limit int) []candidate {
	slices.SortFunc(cs, func(a, b candidate) int {
		if a.tier != b.tier {
			return cmp.Compare(a.tier, b.tier)
		}
		if a.tool != b.tool {
			if b.tool {
				return -1
			}
			return 1
		}
		if a.score != b.score {
			return cmp.Compare(b.score, a.score)
		}
		return cmp.Or(strings.Compare(a.session, b.session), cmp.Compare(a.round, b.round))
	})
	return cs[:min(len(cs), limit)]
}

// hits returns the hits of the ranked rounds, in order, with what search
// shows of them.
func (s *searcher) hits(ranked []candidate, sc *scorer) ([]Hit, error) {
	ids := make([]int64, len(ranked))
	for i, c := range ranked {
		ids[i] = c.id
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	rows, err := s.tx.QueryContext(s.ctx, `SELECT r.rowid, r.session_id, s.agent_id, s.title, s.project, r.round, r.started,
			r.engagement_id, s.doc
		FROM json_each(?) j JOIN rounds r ON r.rowid = j.value JOIN sessions s ON s.session_id = r.session_id`, list)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byID := map[int64]Hit{}
	for rows.Next() {
		var h Hit
		var id int64
		var tag sql.NullString
		if err := rows.Scan(&id, &h.SessionID, &h.AgentID, &h.Title, &h.Project, &h.Round, &h.Started, &tag, &h.Doc); err != nil {
			return nil, err
		}
		if tag.Valid {
			h.EngagementID = &tag.String
		}
		byID[id] = h
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	var out []Hit
	for _, c := range ranked {
		h, ok := byID[c.id]
		if !ok {
			continue // a round without its session
		}
		text := c.texts[c.col]
		if text == nil || !c.whole[c.col] && c.at < 0 {
			// Read again: whole, or where the match was found, as load
			// read it (a round's tools' text can be megabytes).
			col := columnNames[c.col]
			if c.col == colTools && c.at >= 0 {
				col = toolsRead(col)
			}
			var t string
			if err := s.tx.QueryRowContext(s.ctx, `SELECT `+col+` FROM rounds WHERE rowid = ?`, c.id).Scan(&t); err != nil {
				return nil, fmt.Errorf("%s: round %d of %s: %w", s.path, h.Round, h.SessionID, err)
			}
			text = &t
		}
		h.Snippet = snippet(*text, sc.marks, c.at)
		h.In = textNames[c.col]
		h.Rank = -c.score
		out = append(out, h)
	}
	return out, nil
}

// varint decodes an SQLite varint (as FTS5 writes its records) at the start
// of b, and returns it with its length; 0, 0 if b has none.
func varint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < len(b) && i < 9; i++ {
		if i == 8 {
			return v<<8 | uint64(b[i]), 9
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}
