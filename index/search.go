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
	"slices"
	"strings"
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
	idfSample   = 8192    // newest rounds in which a word's frequency is estimated
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
	s := &searcher{ctx: ctx, tx: tx, path: x.path}
	defer s.close()

	// Each phrase as a match of its own (empty: it cannot match): a
	// literal query is all of them, in the body column; then the
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
		text, possible = q.Text, true
	}
	filterTerms, ok, err := s.filterMatch(q)
	if err != nil {
		return nil, err
	}
	if !possible || !ok {
		return nil, unknownFilter(ctx, tx, q)
	}
	filters := ""
	for _, t := range filterTerms {
		filters += " AND {filters} : " + t
	}
	body := "{body} : (" + text + ")"
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
	table, source, ok, err := s.phraseSource(q, phrases, parts, filterTerms)
	if err != nil {
		return nil, err
	}
	if ok {
		sc, err := s.scorer(q, phrases, parts)
		if err != nil {
			return nil, s.searchError(q, err)
		}
		found, err := s.verified(table, source, body, k, sc)
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, unknownFilter(ctx, tx, q)
		}
		return s.hits(best(found, limit), phrases)
	}
	ids, _, _, err := s.candidates("text_fts", match, s.hi, k)
	if err != nil {
		return nil, s.searchError(q, err)
	}
	if len(ids) == 0 {
		return nil, unknownFilter(ctx, tx, q)
	}
	sc, err := s.scorer(q, phrases, parts)
	if err != nil {
		return nil, s.searchError(q, err)
	}
	// An OR of --fts may have a rare phrase whose rounds are all older
	// than the window: every round with a rare phrase of the query is a
	// candidate too, up to k of each.
	if q.Raw && len(ids) == k && hasOR(q.Text) {
		seen := map[int64]bool{}
		for _, id := range ids {
			seen[id] = true
		}
		for i, m := range parts {
			if m == "" || sc.hits[i] > float64(k) {
				continue
			}
			more, _, _, err := s.candidates("text_fts", "{body} : ("+q.Text+") AND {body} : ("+m+")"+filters, s.hi, k)
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
	found, err := s.load(ids, sc)
	if err != nil {
		return nil, err
	}
	return s.hits(best(found, limit), phrases)
}

// searcher is one search's transaction and statements.
type searcher struct {
	ctx   context.Context
	tx    *sql.Tx
	path  string
	terms *sql.Stmt // the first word of text_terms at or after ?
	// The rowids of the rounds the time bounds may select, [lo, hi),
	// and the bounds (nil: none).
	lo, hi       int64
	since, until *time.Time
	project      string // a project filter the match does not have
}

func (s *searcher) close() {
	if s.terms != nil {
		s.terms.Close()
	}
}

// candidates returns the rowids of the newest k rounds with rowid below hi
// that match in table (text_fts or pairs_fts), start within the time
// bounds and are of the project, newest first; and where the next ones are
// (below next), or that there are no more (done).
func (s *searcher) candidates(table, match string, hi int64, k int) (out []int64, next int64, done bool, err error) {
	for {
		ids, err := s.rowids(table, match, s.lo, hi, k)
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

// rowids returns the rowids of the newest k rounds that match in table,
// with rowid in [lo, hi), newest first.
func (s *searcher) rowids(table, match string, lo, hi int64, k int) ([]int64, error) {
	rows, err := s.tx.QueryContext(s.ctx, `SELECT rowid FROM `+table+` WHERE `+table+` MATCH ? AND rowid >= ? AND rowid < ?
		ORDER BY rowid DESC LIMIT ?`, match, lo, hi, k)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
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
	if _, err2 := s.rowids("text_fts", q.Text, math.MinInt64, math.MaxInt64, 1); err2 != nil {
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
		projects, err := column(s.ctx, s.tx, `SELECT DISTINCT project FROM sessions WHERE instr(project, ?) > 0 ORDER BY 1`, q.Project)
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
			m = append(m, "("+strings.Join(toks, " OR ")+")")
		}
	}
	if q.Engagement != "" {
		m = append(m, filterToken('e', q.Engagement))
	}
	return m, true, nil
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
// would read every match: how often each phrase is found is counted among
// the newest idfSample rounds.
type scorer struct {
	phrases []phrase
	idf     []float64
	hits    []float64 // in how many rounds each phrase is, estimated (with two phrases or more)
	avgdl   float64
	all     bool // every phrase is in every match (a literal query)
}

func (s *searcher) scorer(q Query, phrases []phrase, parts []string) (*scorer, error) {
	sc := &scorer{phrases: phrases, all: !q.Raw, avgdl: 1}
	sc.idf = make([]float64, len(phrases))
	sc.hits = make([]float64, len(phrases))
	for i := range sc.idf {
		sc.idf[i] = 1
	}
	// The table's rounds and the tokens of their bodies: FTS5's
	// "averages" record, varints.
	var avg []byte
	err := s.tx.QueryRowContext(s.ctx, `SELECT block FROM text_fts_data WHERE id = 1`).Scan(&avg)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	n, k := varint(avg)
	toks, _ := varint(avg[k:])
	if n > 0 && toks > 0 {
		sc.avgdl = float64(toks) / float64(n)
	}
	if len(phrases) < 2 || n == 0 {
		return sc, nil // one phrase: the order does not depend on its idf
	}
	since := int64(math.MinInt64)
	sample := float64(n)
	err = s.tx.QueryRowContext(s.ctx, `SELECT id FROM text_fts_docsize ORDER BY id DESC LIMIT 1 OFFSET ?`, idfSample-1).Scan(&since)
	switch {
	case err == nil:
		sample = idfSample
	case !errors.Is(err, sql.ErrNoRows):
		return nil, err
	}
	for i, m := range parts {
		var c int64
		if m != "" {
			if err := s.tx.QueryRowContext(s.ctx, `SELECT count(*) FROM text_fts WHERE text_fts MATCH ? AND rowid >= ?`,
				"{body} : ("+m+")", since).Scan(&c); err != nil {
				return nil, err
			}
		}
		hits := float64(c) * float64(n) / sample
		sc.hits[i] = hits
		sc.idf[i] = math.Log((float64(n) - hits + 0.5) / (hits + 0.5))
		if sc.idf[i] <= 0 {
			sc.idf[i] = 1e-6 // as FTS5's
		}
	}
	return sc, nil
}

// score is bm25 of a round whose body (nil: too long to read) has dl
// tokens; found says every phrase is in the body, as countMatches finds
// them.
func (sc *scorer) score(body *string, dl int64) (score float64, found bool) {
	var tf []int
	if body != nil {
		var n int64
		tf, n = countMatches(*body, sc.phrases)
		if dl <= 0 {
			dl = n
		}
	} else {
		tf = make([]int, len(sc.phrases))
		for i := range tf {
			tf[i] = 1
		}
	}
	norm := bm25K1 * (1 - bm25B + bm25B*float64(dl)/sc.avgdl)
	found = body != nil
	for i, f := range tf {
		found = found && f > 0
		if f == 0 && sc.all {
			f = 1 // a match FTS5 folds letters to find
		}
		score += sc.idf[i] * float64(f) * (bm25K1 + 1) / (float64(f) + norm)
	}
	return score, found
}

// countMatches returns how often each phrase matches body, as the snippet
// marks them, and how many tokens body has.
func countMatches(body string, phrases []phrase) ([]int, int64) {
	type span struct{ start, end int }
	var toks []span
	for i := 0; ; {
		start, end := nextToken(body, i)
		if start == len(body) {
			break
		}
		toks = append(toks, span{start, end})
		i = end
	}
	tf := make([]int, len(phrases))
	for i := range toks {
		for pi, p := range phrases {
			if i+len(p.tokens) > len(toks) {
				continue
			}
			ok := true
			for k, want := range p.tokens {
				t := toks[i+k]
				if !tokenMatches(body[t.start:t.end], want, p.prefix && k == len(p.tokens)-1) {
					ok = false
					break
				}
			}
			if ok {
				tf[pi]++
			}
		}
	}
	return tf, int64(len(toks))
}

// candidate is a round being ranked.
type candidate struct {
	id      int64
	session string
	round   int
	body    *string // nil: longer than scoreBytes, not read
	score   float64
	found   bool // every phrase is in body (scorer.score)
}

// load reads and scores the rounds ids, in no order.
func (s *searcher) load(ids []int64, sc *scorer) ([]candidate, error) {
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	rows, err := s.tx.QueryContext(s.ctx, `SELECT r.rowid, r.session_id, r.round,
			CASE WHEN octet_length(r.body) <= ? THEN r.body END, d.sz
		FROM json_each(?) j JOIN rounds r ON r.rowid = j.value LEFT JOIN text_fts_docsize d ON d.id = r.rowid`, scoreBytes, list)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []candidate
	for rows.Next() {
		var c candidate
		var body sql.NullString
		var sz []byte
		if err := rows.Scan(&c.id, &c.session, &c.round, &body, &sz); err != nil {
			return nil, err
		}
		if body.Valid {
			c.body = &body.String
		}
		dl, _ := varint(sz) // the body's tokens, as FTS5 counts them
		c.score, c.found = sc.score(c.body, int64(dl))
		out = append(out, c)
	}
	return out, rows.Err()
}

// best returns the best limit candidates, best first.
func best(cs []candidate, limit int) []candidate {
	slices.SortFunc(cs, func(a, b candidate) int {
		if a.score != b.score {
			return cmp.Compare(b.score, a.score)
		}
		return cmp.Or(strings.Compare(a.session, b.session), cmp.Compare(a.round, b.round))
	})
	return cs[:min(len(cs), limit)]
}

// hits returns the hits of the ranked rounds, in order, with what search
// shows of them.
func (s *searcher) hits(ranked []candidate, phrases []phrase) ([]Hit, error) {
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
		body := c.body
		if body == nil {
			var b string
			if err := s.tx.QueryRowContext(s.ctx, `SELECT body FROM rounds WHERE rowid = ?`, c.id).Scan(&b); err != nil {
				return nil, fmt.Errorf("%s: round %d of %s: %w", s.path, h.Round, h.SessionID, err)
			}
			body = &b
		}
		h.Snippet = snippet(*body, phrases)
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
