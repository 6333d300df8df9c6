package index

import (
	"cmp"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// corpus is an index and what it holds, to compute by brute force what a
// search must find.
type corpus struct {
	db       *DB
	sessions map[string]Session
	rounds   []Row
}

func newCorpus(t *testing.T) *corpus {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &corpus{db: db, sessions: map[string]Session{}}
}

// put indexes a session's rounds, replacing what the corpus knew of them.
func (c *corpus) put(t *testing.T, s Session, rows []Row) {
	t.Helper()
	if err := c.db.Put(context.Background(), s, rows); err != nil {
		t.Fatal(err)
	}
	c.sessions[s.SessionID] = s
	for _, r := range rows {
		i := slices.IndexFunc(c.rounds, func(o Row) bool { return o.SessionID == r.SessionID && o.Round == r.Round })
		if i < 0 {
			c.rounds = append(c.rounds, r)
		} else {
			c.rounds[i] = r
		}
	}
}

// want returns the rounds ("session/round") a search must find: those with
// every word (a token equal to it, or starting with it for a prefix) that
// its filters select.
func (c *corpus) want(q Query) []string {
	out := []string{}
	for _, r := range c.rounds {
		s := c.sessions[r.SessionID]
		switch {
		case q.Agent != "" && s.AgentID != q.Agent,
			q.Project != "" && !strings.Contains(s.Project, q.Project),
			q.Engagement != "" && (r.EngagementID == nil || *r.EngagementID != q.Engagement):
			continue
		}
		if !q.Since.IsZero() || !q.Until.IsZero() {
			at, err := time.Parse(time.RFC3339Nano, r.Started)
			if err != nil || !q.Since.IsZero() && at.Before(q.Since) || !q.Until.IsZero() && !at.Before(q.Until) {
				continue
			}
		}
		toks := strings.Fields(strings.ToLower(r.Reply))
		all := true
		for _, w := range strings.Fields(strings.ToLower(q.Text)) {
			prefix := strings.HasSuffix(w, "*")
			w = strings.TrimSuffix(w, "*")
			if !slices.ContainsFunc(toks, func(t string) bool { return t == w || prefix && strings.HasPrefix(t, w) }) {
				all = false
			}
		}
		if all {
			out = append(out, fmt.Sprintf("%s/%d", r.SessionID, r.Round))
		}
	}
	sort.Strings(out)
	return out
}

// numbered returns the n rounds of session id: round r is the i-th of all
// (i = first+r), started at minute i and saying text(i).
func numbered(id string, first, n int, text func(i int) string) []Row {
	var rows []Row
	for r := 1; r <= n; r++ {
		i := first + r
		rows = append(rows, Row{SessionID: id, Round: r, Started: stamp(i), Reply: text(i), RoundFile: "r"})
	}
	return rows
}

// checkHits checks that q finds the rounds want says; where more match
// than its limit, that it finds limit of them and no other.
func (c *corpus) checkHits(t *testing.T, q Query) {
	t.Helper()
	want := c.want(q)
	hits, err := c.db.Search(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	got := found(hits)
	if limit := cmp.Or(q.Limit, 20); len(want) > limit {
		if len(got) != limit {
			t.Errorf("%+v: %d hits, want %d", q, len(got), limit)
		}
		for _, g := range got {
			if !slices.Contains(want, g) {
				t.Errorf("%+v: %s does not match", q, g)
			}
		}
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%+v: %v, want %v", q, got, want)
	}
}

// found returns the hits as "session/round", sorted.
func found(hits []Hit) []string {
	out := []string{}
	for _, h := range hits {
		out = append(out, fmt.Sprintf("%s/%d", h.SessionID, h.Round))
	}
	sort.Strings(out)
	return out
}

// stamp is a round's start: minute m of 2026-11-22.
func stamp(m int) string {
	return time.Date(2026, 11, 22, 0, m, 0, 0, time.UTC).Format(stampLayout)
}

// randomCorpus indexes 12 sessions (three agents, four projects) of 40
// rounds of common and rare words and the words a long prefix starts;
// every seventh round is tagged.
func randomCorpus(t *testing.T) *corpus {
	c := newCorpus(t)
	rng := rand.New(rand.NewSource(7))
	common := strings.Fields("the error file test deploy data run code")
	var rare []string
	for i := 0; i < 300; i++ {
		rare = append(rare, fmt.Sprintf("rare%03d", i))
	}
	// deployment words: a prefix with a few words, and one with more than
	// expandWords.
	for i := 0; i < 5; i++ {
		rare = append(rare, fmt.Sprintf("deploy%c", 'a'+i))
	}
	for i := 0; i < expandWords+8; i++ {
		rare = append(rare, fmt.Sprintf("manyword%02d", i))
	}
	for s := 0; s < 12; s++ {
		sess := Session{SessionID: fmt.Sprintf("s%02d", s), AgentID: []string{"claude", "codex", "historian"}[s%3],
			Project: []string{"/src/app", "/src/lib", "/work/app-two", ""}[s%4], Doc: fmt.Sprintf("x/s%02d.md", s)}
		var rows []Row
		for r := 1; r <= 40; r++ {
			var words []string
			for w := 0; w < 5+rng.Intn(30); w++ {
				if rng.Intn(3) == 0 {
					words = append(words, rare[rng.Intn(len(rare))])
				} else {
					words = append(words, common[rng.Intn(len(common))])
				}
			}
			row := Row{SessionID: sess.SessionID, Round: r, Started: stamp(s*50 + r), Reply: strings.Join(words, " "), RoundFile: "r"}
			if r%7 == 0 {
				eng := []string{"eng-1", "eng/2"}[s%2]
				row.EngagementID = &eng
			}
			rows = append(rows, row)
		}
		c.put(t, sess, rows)
	}
	return c
}

// TestSearchSameHits: a search that matches no more rounds than are ranked
// finds exactly the rounds that have its words and pass its filters, for
// rare words, phrases of them, short and long prefixes; filters are exact.
func TestSearchSameHits(t *testing.T) {
	c := randomCorpus(t)
	ctx := context.Background()
	at := func(m int) time.Time { return time.Date(2026, 11, 22, 0, m, 0, 0, time.UTC) }
	var qs []Query
	for _, text := range []string{"rare001", "rare002 the", "rare010 error file", "RARE003", "deploy*", "deploya*", "deployb* rare005",
		"manyword*", "manyword1*", "rare0*", "rare1*", "ra*", "r*", "the rare2*", "nowhere", "deploy", "rare00"} {
		qs = append(qs, Query{Text: text, Limit: 1000})
	}
	for _, f := range []Query{
		{Agent: "codex"}, {Project: "app"}, {Project: "/src/"}, {Engagement: "eng/2"}, {Agent: "historian", Engagement: "eng-1"},
		{Since: at(100)}, {Until: at(100)}, {Since: at(170), Until: at(260)}, {Agent: "claude", Project: "lib", Since: at(30)},
		{Since: at(165).Add(time.Millisecond)}, {Until: at(165)},
	} {
		for _, text := range []string{"the", "rare004", "deploy*", "te*", "error data"} {
			f.Text, f.Limit = text, 1000
			qs = append(qs, f)
		}
	}
	for _, q := range qs {
		want := c.want(q)
		if len(want) > max(rankWindow, q.Limit) {
			t.Fatalf("%+v: %d rounds match: more than are ranked", q, len(want))
		}
		hits, err := c.db.Search(ctx, q)
		var fe *FilterError
		if errors.As(err, &fe) && len(want) == 0 {
			continue
		}
		if err != nil {
			t.Errorf("%+v: %v", q, err)
			continue
		}
		if got := found(hits); !reflect.DeepEqual(got, want) {
			t.Errorf("%+v: %d hits, want %d:\n got %v\nwant %v", q, len(got), len(want), got, want)
		}
	}
}

// TestSearchRanking: within what is ranked, a round with the word more
// often ranks above one with it less often, a shorter one above a longer
// one, and a round with more of the rarer word above one with more of the
// common word; and each hit's snippet marks the word. Over short texts,
// and over texts longer than keptText (scored on other goroutines, and
// read again for their snippets).
func TestSearchRanking(t *testing.T) {
	for _, n := range []int{4, keptText/27 + 1} {
		filler := strings.Repeat("lorem ipsum dolor sit amet ", n)
		t.Run(fmt.Sprintf("%d bytes", len(filler)), func(t *testing.T) { testSearchRanking(t, filler) })
	}
}

func testSearchRanking(t *testing.T, filler string) {
	c := newCorpus(t)
	bodies := []string{
		filler + "needle",                      // 1: once
		filler + strings.Repeat("needle ", 10), // 2: ten times
		"needle",                               // 3: once, short
		filler + filler + filler + filler + "needle", // 4: once, long
		filler + "needle common common common",       // 5: the rare word once, the common one three times
		filler + "needle needle needle common",       // 6: the rare word three times, the common one once
	}
	var rows []Row
	for i, b := range bodies {
		rows = append(rows, Row{SessionID: "s", Round: i + 1, Started: stamp(i), Reply: b, RoundFile: "r"})
	}
	for i := 0; i < 100; i++ { // the common word is common
		rows = append(rows, Row{SessionID: "s", Round: 100 + i, Started: stamp(100 + i), Reply: "common words " + filler, RoundFile: "r"})
	}
	c.put(t, Session{SessionID: "s", AgentID: "claude", Doc: "x/s.md"}, rows)
	rank := func(text string) []int {
		hits, err := c.db.Search(context.Background(), Query{Text: text, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		var out []int
		for i, h := range hits {
			out = append(out, h.Round)
			if i > 0 && h.Rank < hits[i-1].Rank {
				t.Errorf("%q: hit %d ranks %v, better than the one before it (%v)", text, i, h.Rank, hits[i-1].Rank)
			}
			if !strings.Contains(h.Snippet, HighlightStart+"needle") {
				t.Errorf("%q: round %d's snippet %q has no needle", text, h.Round, h.Snippet)
			}
		}
		return out
	}
	before := func(order []int, a, b int) bool { return slices.Index(order, a) < slices.Index(order, b) }
	needle := rank("needle")
	for _, c := range []struct{ a, b int }{{2, 1}, {3, 1}, {1, 4}, {6, 5}} {
		if !before(needle, c.a, c.b) {
			t.Errorf("needle: round %d ranks below round %d: %v", c.a, c.b, needle)
		}
	}
	if both := rank("needle common"); !reflect.DeepEqual(both, []int{6, 5}) {
		t.Errorf("needle common: %v, want [6 5]: the rare word counts for more", both)
	}
}

// TestSearchPastToolsScan: a round whose query is in its tools' text only
// past what a search reads of it (toolsScan) is found, by a word and by a
// phrase (whose candidates are checked), with its snippet at the match; a
// round with the phrase's words apart there is not found by the phrase.
// One with the words early in a long tools' text has its snippet there.
func TestSearchPastToolsScan(t *testing.T) {
	c := newCorpus(t)
	filler := strings.Repeat("lorem ipsum dolor sit amet ", toolsScan/27+10)
	var rows []Row
	for i := 1; i <= 3; i++ {
		rows = append(rows, Row{SessionID: "s", Round: i, Started: stamp(i), Prompt: "look", Tools: filler + "zebra stripes", RoundFile: "r"})
	}
	rows = append(rows, Row{SessionID: "s", Round: 4, Started: stamp(4), Prompt: "look", Tools: filler + "stripes zebra", RoundFile: "r"},
		Row{SessionID: "s", Round: 5, Started: stamp(5), Prompt: "look", Tools: "an okapi " + filler + "zebra", RoundFile: "r"})
	c.put(t, Session{SessionID: "s", AgentID: "claude", Doc: "x/s.md"}, rows)
	for _, tc := range []struct {
		q    string
		want []int
	}{{"zebra", []int{1, 2, 3, 4, 5}}, {"stripes", []int{1, 2, 3, 4}}, {"zebra stripes", []int{1, 2, 3, 4}}, {"zebra-stripes", []int{1, 2, 3}}, {"stripes.zebra", []int{4}}, {"okapi lorem", []int{5}}} {
		hits, err := c.db.Search(context.Background(), Query{Text: tc.q})
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		for _, h := range hits {
			got = append(got, h.Round)
			if !strings.Contains(h.Snippet, HighlightStart+strings.Fields(tc.q)[0][:3]) {
				t.Errorf("%q: round %d's snippet %q is not at the match", tc.q, h.Round, h.Snippet)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q: rounds %v, want %v", tc.q, got, tc.want)
		}
	}
}

// TestSearchWindow: a word in more rounds than are ranked is ranked among
// its newest; an OR (--fts) of it with a rare word still finds the rare
// word's rounds, however old.
func TestSearchWindow(t *testing.T) {
	c := newCorpus(t)
	var rows []Row
	n := rankWindow + 100
	for i := 1; i <= n; i++ {
		body := "common word"
		switch i {
		case 1: // the oldest: the word ten times, and a rare word
			body = strings.Repeat("common ", 10) + "zanzibar"
		case n - 10: // within the window
			body = strings.Repeat("common ", 10)
		}
		rows = append(rows, Row{SessionID: "s", Round: i, Started: stamp(i), Reply: body, RoundFile: "r"})
	}
	c.put(t, Session{SessionID: "s", AgentID: "claude", Doc: "x/s.md"}, rows)
	ctx := context.Background()
	hits, err := c.db.Search(ctx, Query{Text: "common", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 5 || hits[0].Round != n-10 {
		t.Errorf("common: %v, want round %d first", found(hits), n-10)
	}
	for _, h := range hits {
		if h.Round <= n-rankWindow {
			t.Errorf("common: round %d is older than the newest %d", h.Round, rankWindow)
		}
	}
	hits, err = c.db.Search(ctx, Query{Text: "common OR zanzibar", Raw: true, Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].Round != 1 {
		t.Errorf("common OR zanzibar: %v, want round 1 first", found(hits))
	}
}

// TestSearchFiltersFollow: the filters follow a session's agent and
// project when they change, and a round's engagement when it is tagged or
// untagged; their tokens are never found by the text.
func TestSearchFiltersFollow(t *testing.T) {
	c := newCorpus(t)
	ctx := context.Background()
	s := Session{SessionID: "s", AgentID: "claude", Project: "/src/app", Doc: "x/s.md"}
	c.put(t, s, []Row{
		{SessionID: "s", Round: 1, Started: stamp(1), Reply: "alpha", RoundFile: "r"},
		{SessionID: "s", Round: 2, Started: stamp(2), Reply: "alpha beta", RoundFile: "r"},
	})
	search := func(q Query) []string {
		t.Helper()
		hits, err := c.db.Search(ctx, q)
		var fe *FilterError
		if err != nil && !errors.As(err, &fe) {
			t.Fatal(err)
		}
		return found(hits)
	}
	check := func(q Query, want ...string) {
		t.Helper()
		if want == nil {
			want = []string{}
		}
		if got := search(q); !reflect.DeepEqual(got, want) {
			t.Errorf("%+v: %v, want %v", q, got, want)
		}
	}
	check(Query{Text: "alpha", Agent: "claude"}, "s/1", "s/2")
	s.AgentID, s.Project = "codex", "/src/lib"
	c.put(t, s, nil)
	check(Query{Text: "alpha", Agent: "claude"})
	check(Query{Text: "alpha", Agent: "codex", Project: "lib"}, "s/1", "s/2")
	check(Query{Text: "alpha", Project: "app"})

	eng := "eng-1"
	if _, err := c.db.SetEngagement(ctx, "s", []int{2}, &eng); err != nil {
		t.Fatal(err)
	}
	check(Query{Text: "alpha", Engagement: "eng-1"}, "s/2")
	if _, err := c.db.SetEngagement(ctx, "s", []int{2}, nil); err != nil {
		t.Fatal(err)
	}
	check(Query{Text: "alpha", Engagement: "eng-1"})

	// The filter tokens are not text.
	for _, text := range []string{"a" + hex.EncodeToString([]byte("codex")), "A" + strings.ToUpper(hex.EncodeToString([]byte("codex"))),
		"à" + hex.EncodeToString([]byte("codex")), "a6*", "p2f*", "p*", "e*"} {
		check(Query{Text: text})
	}
	codex := "a" + hex.EncodeToString([]byte("codex"))
	for _, text := range []string{codex, "a6*", "zzz OR a6*", "NEAR(alpha " + codex + ", 2)", "{filters}: a6*", "^a6*", `"` + codex + `"`, "zzz OR (" + codex + " NOT zzz)"} {
		check(Query{Text: text, Raw: true})
	}
}

// TestFilterLike: a query needs text_fts's column filter where a token
// could be a filter token, or fold to one.
func TestFilterLike(t *testing.T) {
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"deploy", false}, {"the error", false}, {"go-test-data", false}, {"d*", false}, {"x", false},
		{"a", true}, {"e1", true}, {"P2F", true}, {"error a6*", true}, {"ab-cd", true}, {"af0g", false},
		{"café", true}, {"à1", true}, {"错误", true},
	} {
		_, phrases, err := parseQuery(Query{Text: tc.text})
		if err != nil {
			t.Fatal(err)
		}
		if got := filterLike(phrases); got != tc.want {
			t.Errorf("%q: filterLike %v, want %v", tc.text, got, tc.want)
		}
	}
}

// TestRowids: a round's rowid orders it by its start, to the millisecond;
// rounds that start in the same millisecond get their own, an unknown
// start a negative one, and a round whose start changes moves.
func TestRowids(t *testing.T) {
	c := newCorpus(t)
	ctx := context.Background()
	s := Session{SessionID: "s", Doc: "x/s.md"}
	rows := []Row{
		{SessionID: "s", Round: 1, Started: "2026-11-22T09:26:16.967Z", Reply: "word"},
		{SessionID: "s", Round: 2, Started: "2026-11-22T10:26:16.967+01:00", Reply: "word"}, // the same instant
		{SessionID: "s", Round: 3, Started: "2026-11-22T09:26:16.968Z", Reply: "word"},
		{SessionID: "s", Round: 4, Started: "", Reply: "word"},
		{SessionID: "s", Round: 5, Started: "yesterday", Reply: "word"},
		{SessionID: "s", Round: 6, Started: "2026-11-22T09:00:00Z", Reply: "word"},
		{SessionID: "s", Round: 7, Started: "1969-12-31T23:59:59Z", Reply: "word"},
	}
	c.put(t, s, rows)
	order := func() []int {
		q, err := c.db.db.Query(`SELECT round FROM rounds ORDER BY rowid DESC`)
		if err != nil {
			t.Fatal(err)
		}
		defer q.Close()
		var out []int
		for q.Next() {
			var r int
			q.Scan(&r)
			out = append(out, r)
		}
		return out
	}
	if got, want := order(), []int{3, 2, 1, 6, 4, 5, 7}; !reflect.DeepEqual(got, want) {
		t.Errorf("rounds newest first: %v, want %v", got, want)
	}
	// Round 6 moves to the newest; round 1 is rewritten in place.
	rows[5].Started = "2026-11-23T00:00:00Z"
	rows[0].Reply = "word again"
	c.put(t, s, []Row{rows[0], rows[5]})
	if got, want := order(), []int{6, 3, 2, 1, 4, 5, 7}; !reflect.DeepEqual(got, want) {
		t.Errorf("after a start changed: %v, want %v", got, want)
	}
	hits, err := c.db.Search(ctx, Query{Text: "word", Since: time.Date(2026, 11, 22, 9, 26, 16, 967e6, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := found(hits), []string{"s/1", "s/2", "s/3", "s/6"}; !reflect.DeepEqual(got, want) {
		t.Errorf("since 09:26:16.967: %v, want %v", got, want)
	}
	if _, err := c.db.Dump(ctx); err != nil {
		t.Error(err)
	}
}

// TestSearchRawParentheses: a raw query is searched inside parentheses of
// its own, which a stray one must not close.
func TestSearchRawParentheses(t *testing.T) {
	c := newCorpus(t)
	c.put(t, Session{SessionID: "s", AgentID: "claude", Doc: "x/s.md"}, []Row{{SessionID: "s", Round: 1, Reply: "x y"}})
	for _, text := range []string{"x) OR (y", "(x", "x)", `"(" x)`} {
		_, err := c.db.Search(context.Background(), Query{Text: text, Raw: true, Agent: "claude"})
		var qe *QueryError
		if !errors.As(err, &qe) || !qe.Raw {
			t.Errorf("%q: %v, want a raw *QueryError", text, err)
		}
	}
	hits, err := c.db.Search(context.Background(), Query{Text: `"(x" OR (x AND y)`, Raw: true, Agent: "claude"})
	if err != nil || len(hits) != 1 {
		t.Errorf(`"(x" OR (x AND y): %v (%v), want one hit`, found(hits), err)
	}
}

// TestSearchCrowdedSecond: rounds that start in the same second take the
// rowids of the seconds after it when theirs are full; time bounds stay
// exact to the millisecond.
func TestSearchCrowdedSecond(t *testing.T) {
	c := newCorpus(t)
	var rows []Row
	for i := 1; i <= 12; i++ {
		rows = append(rows, Row{SessionID: "s", Round: i, Started: "2026-11-22T10:00:00.500Z", Reply: "word"})
	}
	for i, at := range []string{"2026-11-22T10:00:01.000Z", "2026-11-22T10:00:02.000Z", "2026-11-22T11:00:03.999+01:00"} {
		rows = append(rows, Row{SessionID: "s", Round: 13 + i, Started: at, Reply: "word"})
	}
	c.put(t, Session{SessionID: "s", AgentID: "claude", Doc: "x/s.md"}, rows)
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	for _, q := range []Query{
		{Since: at("2026-11-22T10:00:00.500Z")},
		{Since: at("2026-11-22T10:00:00.501Z")},
		{Until: at("2026-11-22T10:00:01Z")},
		{Until: at("2026-11-22T10:00:00.500Z")},
		{Since: at("2026-11-22T10:00:01Z"), Until: at("2026-11-22T10:00:02Z")},
		{Since: at("2026-11-22T10:00:02Z"), Until: at("2026-11-22T10:00:03.999Z")},
		{Since: at("2026-11-22T10:00:03.999Z")},
	} {
		q.Text, q.Limit = "word", 100
		want := c.want(q)
		hits, err := c.db.Search(context.Background(), q)
		var fe *FilterError
		if err != nil && !errors.As(err, &fe) {
			t.Fatal(err)
		}
		if got := found(hits); !reflect.DeepEqual(got, want) {
			t.Errorf("since %v until %v: %v, want %v", q.Since, q.Until, got, want)
		}
	}
}

func TestHasOR(t *testing.T) {
	for q, want := range map[string]bool{
		"a OR b": true, "(a)OR(b)": true, "a or b": false, "ORB": false, "a \"OR\" b": false, "FOR x": false, "x_OR": false, "OR": true,
	} {
		if got := hasOR(q); got != want {
			t.Errorf("hasOR(%q) = %v, want %v", q, got, want)
		}
	}
}

// TestSearchManyProjects: a project filter that selects more projects than
// the match holds tokens for checks the rounds FTS5 finds.
func TestSearchManyProjects(t *testing.T) {
	c := newCorpus(t)
	n := filterProjects + 6
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("s%03d", i)
		c.put(t, Session{SessionID: id, AgentID: "claude", Project: fmt.Sprintf("/src/proj%03d", i), Doc: "x/" + id + ".md"}, []Row{
			{SessionID: id, Round: 1, Started: stamp(i), Reply: "word"},
			{SessionID: id, Round: 2, Started: stamp(i), Reply: "other"},
		})
	}
	c.put(t, Session{SessionID: "t", AgentID: "claude", Project: "/elsewhere", Doc: "x/t.md"}, []Row{{SessionID: "t", Round: 1, Started: stamp(0), Reply: "word"}})
	for _, q := range []Query{
		{Text: "word", Project: "proj", Limit: 1000},
		{Text: "word", Project: "proj", Limit: 5},
		{Text: "word", Project: "proj0", Limit: 1000},
		{Text: "word", Project: "/", Limit: 1000, Since: time.Date(2026, 11, 22, 0, 30, 0, 0, time.UTC)},
	} {
		c.checkHits(t, q)
	}
}

// TestSearchShortPrefix: a prefix of one character finds what FTS5 finds
// for it, whatever letter follows it in a word, alone or ending a phrase.
func TestSearchShortPrefix(t *testing.T) {
	c := newCorpus(t)
	var rows []Row
	for i, b := range []string{"t", "tea time", "Tête-à-tête", "tж", "tѣ x", "x T9", "other", "hello pie", "hello p", "hello, Père", "hello world", "t\ue000 private", "жук"} {
		rows = append(rows, Row{SessionID: "s", Round: i + 1, Started: stamp(i), Reply: b})
	}
	c.put(t, Session{SessionID: "s", AgentID: "claude", Doc: "x/s.md"}, rows)
	ctx := context.Background()
	for text, raw := range map[string]string{"t*": "t*", "hello.p*": `"hello p"*`, "T*": "t*", "p*": "p*", "hel*": "hel*", "ж*": "ж*"} {
		got, err := c.db.Search(ctx, Query{Text: text, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		want, err := c.db.Search(ctx, Query{Text: raw, Raw: true, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 || !reflect.DeepEqual(found(got), found(want)) {
			t.Errorf("%q: %v, want %v (FTS5's %s)", text, found(got), found(want), raw)
		}
	}
}

// TestSearchOneWordWindow: a search of one word (or prefix) reads its
// newest rounds first; with exactly as many rounds as are ranked, and one
// more, it finds what a search with --until after them all does, which
// reads the oldest first.
func TestSearchOneWordWindow(t *testing.T) {
	ctx := context.Background()
	for _, n := range []int{rankWindow, rankWindow + 1} {
		c := newCorpus(t)
		var rows []Row
		for i := 1; i <= n; i++ {
			body := "word " + strings.Repeat("other ", 1+i%7)
			if i == 1 { // the oldest ranks first where it is ranked
				body = "word word word"
			}
			rows = append(rows, Row{SessionID: "s", Round: i, Started: stamp(i), Reply: body, RoundFile: "r"})
		}
		c.put(t, Session{SessionID: "s", AgentID: "claude", Doc: "x/s.md"}, rows)
		for _, text := range []string{"word", "wor*", "w*"} {
			for _, limit := range []int{5, n} {
				q := Query{Text: text, Limit: limit}
				got, err := c.db.Search(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				q.Until = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
				want, err := c.db.Search(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%d rounds, %q, limit %d: %v, want %v", n, text, limit, found(got), found(want))
				}
				if len(got) != min(limit, n) {
					t.Errorf("%d rounds, %q, limit %d: %d hits", n, text, limit, len(got))
				}
				if first := len(got) > 0 && got[0].Round == 1; first != (n == rankWindow || limit == n) {
					t.Errorf("%d rounds, %q, limit %d: %v: the oldest round ranked first %v, want it only when within the newest %d",
						n, text, limit, found(got), first, max(rankWindow, limit))
				}
			}
		}
	}
}
