package index

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

// testIndex is an index of rounds with the given bodies and start stamps:
// round i+1 of session "s" (agent claude, project /home/dev/src/app).
func testIndex(t *testing.T, bodies []string, started []string) *DB {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var rows []Row
	for i, b := range bodies {
		r := Row{SessionID: "s", Round: i + 1, Reply: b, RoundFile: "r"}
		if i < len(started) {
			r.Started = started[i]
		}
		rows = append(rows, r)
	}
	if err := db.Put(context.Background(), Session{SessionID: "s", AgentID: "claude", Project: "/home/dev/src/app", Doc: "claude/s.md"}, rows); err != nil {
		t.Fatal(err)
	}
	return db
}

// rounds returns the rounds of hits, sorted.
func rounds(hits []Hit) []int {
	out := []int{}
	for _, h := range hits {
		out = append(out, h.Round)
	}
	sort.Ints(out)
	return out
}

func marked(s string) string {
	return strings.NewReplacer(HighlightStart, "«", HighlightEnd, "»").Replace(s)
}

// TestParseQuery: what a literal query becomes in FTS5 syntax.
func TestParseQuery(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"hello.py", `"hello py"`},
		{"foo-bar baz", `"foo bar" AND "baz"`},
		{"foo AND", `"foo" AND "AND"`},
		{`say "hi"`, `"say" AND "hi"`},
		{"src/index.go:42", `"src index go 42"`},
		{"hel* hello.p*", `"hel"* AND "hello p"*`},
		{"a * - b", `"a" AND "b"`},
		{"NEAR(a b, 5)", `"NEAR a" AND "b" AND "5"`},
		{"naïve Café", `"naïve" AND "Café"`},
	} {
		got, _, err := parseQuery(Query{Text: c.text})
		if err != nil || got != c.want {
			t.Errorf("%q: %s (%v), want %s", c.text, got, err, c.want)
		}
	}
	for _, text := range []string{"", "  ", "*", "-- ... //"} {
		_, _, err := parseQuery(Query{Text: text})
		var qe *QueryError
		if !errors.As(err, &qe) || qe.Raw {
			t.Errorf("%q: %v, want a literal *QueryError", text, err)
		}
	}
	got, _, err := parseQuery(Query{Text: "foo-bar OR x", Raw: true})
	if err != nil || got != "foo-bar OR x" {
		t.Errorf("raw: %s (%v), want the text as it is", got, err)
	}
}

// TestSearchLiteral: file names, hyphenated words, paths, code and FTS5's
// own operators are searched as they are typed
// (https://github.com/scribe-archive/scribe/issues/13).
func TestSearchLiteral(t *testing.T) {
	db := testIndex(t, []string{
		"create hello.py please",
		"rename foo-bar to foo_bar",
		"open src/index/index.go:42 and read it",
		"x := m[\"key\"]; return x*2",
		"one AND two, or NOT three",
		"hello world",
	}, nil)
	ctx := context.Background()
	for _, c := range []struct {
		text string
		want []int
	}{
		{"hello.py", []int{1}},
		{"HELLO.PY", []int{1}},
		{"foo-bar", []int{2}},
		{"index.go:42", []int{3}},
		{`m["key"]`, []int{4}},
		{"AND two", []int{5}},
		{"NOT", []int{5}},
		{"hel*", []int{1, 6}},
		{"hello.p*", []int{1}},
		{"nowhere", []int{}},
	} {
		hits, err := db.Search(ctx, Query{Text: c.text})
		if err != nil || !reflect.DeepEqual(rounds(hits), c.want) {
			t.Errorf("%q: rounds %v (%v), want %v", c.text, rounds(hits), err, c.want)
		}
	}
	for _, q := range []Query{{Text: ""}, {Text: "*"}, {Text: "--"}, {Text: " ", Raw: true}} {
		_, err := db.Search(ctx, q)
		var qe *QueryError
		if !errors.As(err, &qe) || qe.Raw || !strings.HasPrefix(qe.Msg, "the query") {
			t.Errorf("%+v: %v, want a *QueryError that says the query has nothing to search for", q, err)
		}
	}

	// FTS5 syntax on request, and messages that name the problem.
	hits, err := db.Search(ctx, Query{Text: `"hello world" OR foo NOT bar`, Raw: true})
	if err != nil || !reflect.DeepEqual(rounds(hits), []int{6}) {
		t.Errorf("raw: rounds %v (%v), want [6]", rounds(hits), err)
	}
	for text, want := range map[string]string{
		"foo AND":   `FTS5 syntax error near "AND" at the end of the query`,
		"AND foo":   `FTS5 syntax error near "AND"`,
		"*":         `FTS5 syntax error: "*" can only end a word`,
		"foo-bar":   `FTS5 read "bar" as a column name`,
		`"unclosed`: `FTS5 syntax error: a double quote is not closed`,
	} {
		_, err := db.Search(ctx, Query{Text: text, Raw: true})
		var qe *QueryError
		if !errors.As(err, &qe) || !qe.Raw || !strings.HasPrefix(qe.Msg, want) {
			t.Errorf("raw %q: %v, want a *QueryError: %s", text, err, want)
		}
	}
}

// TestSnippet: the window around the first match, matches marked, "…"
// where the body is cut; SQLite's snippet() gave the same, at a cost that
// grows with the square of the matches in a round.
func TestSnippet(t *testing.T) {
	long := strings.Repeat("lorem ipsum dolor sit amet ", 40)
	for _, c := range []struct {
		body, query string
		raw         bool
		want        string
	}{
		{"third question\nAnswer number 3.", "third question", false, "«third» «question» Answer number 3."},
		{"  > third question!", "question", false, "> third «question»!"},
		{"run:\n\n```bash\nnpm install\n```\n\tdone", "npm", false, "run: ```bash «npm» install ``` done"},
		{"create hello.py please", "hello.py", false, "create «hello.py» please"},
		{"Hello.PY and hello py", "hello.py", false, "«Hello.PY» and «hello py»"},
		{"helpful hello help", "hel*", false, "«helpful» «hello» «help»"},
		{"the théâtre Théâtre", "théâtre", false, "the «théâtre» «Théâtre»"},
		{"a b c d e f g h i j k l m n o p q r s t u v w x y z", "k", false, "…h i j «k» l m n o p q r s t u v w…"},
		{"a b c d e f g h i j k l m n o p q r s t u v w x y z", "y", false, "…k l m n o p q r s t u v w x «y» z"},
		{"a b c d e f g h i j k l m n o p q r s t u v w x y z", "c", false, "a b «c» d e f g h i j k l m n o p…"},
		{long + "needle in the haystack " + long, "needle", false, "…dolor sit amet «needle» in the haystack lorem ipsum dolor sit amet lorem ipsum dolor sit…"},
		{"nothing matches here", "absent", false, "nothing matches here"},
		{"foo bar baz", `"bar baz" OR foo NOT qux`, true, "«foo» «bar baz»"},
		{"a 5 b c body", `NEAR(a c, 5) OR {reply}: b OR reply : c`, true, "«a» 5 «b» «c» body"},
		{"x " + strings.Repeat("ab", 1000) + " needle", "needle", false, "…«needle»"}, // cut between tokens
		{"x " + strings.Repeat("ab", 1000), "x", false, "«x»…"},
	} {
		_, phrases, err := parseQuery(Query{Text: c.query, Raw: c.raw})
		if err != nil {
			t.Fatal(err)
		}
		if got := marked(snippet(c.body, phrases, -1)); got != c.want {
			t.Errorf("%q in %.40q…:\n got %q\nwant %q", c.query, c.body, got, c.want)
		}
	}
}

// TestSnippetFarMatch: the first match is found wherever it is in a large
// round, across the chunks the search reads.
func TestSnippetFarMatch(t *testing.T) {
	body := strings.Repeat("the quick brown fox ", 1<<16) + "Zanzibar! " + strings.Repeat("jumps ", 10)
	for _, q := range []string{"zanzibar", "zanz*", "ZANZIBAR jumps"} {
		_, phrases, _ := parseQuery(Query{Text: q})
		if got := marked(snippet(body, phrases, -1)); !strings.Contains(got, "«Zanzibar»! «jumps»") && !strings.Contains(got, "«Zanzibar»! jumps") {
			t.Errorf("%q: %q", q, got)
		}
	}
}

// TestSearchDates: rounds are compared with --since and --until as
// instants, whatever offset their stamps carry.
func TestSearchDates(t *testing.T) {
	db := testIndex(t, []string{"word", "word", "word", "word", "word"}, []string{
		"2026-11-22T09:26:16.967Z",
		"2026-11-22T11:00:00+02:00",     // 09:00Z
		"2026-11-22T09:30:00",           // no offset: UTC
		"2026-11-22T04:45:00.500-05:00", // 09:45:00.500Z
		"",                              // unknown: outside every bound
	})
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	ctx := context.Background()
	for _, c := range []struct {
		since, until string
		want         []int
	}{
		{"2026-11-22T09:26:16.967Z", "", []int{1, 3, 4}},
		{"2026-11-22T09:26:16.968Z", "", []int{3, 4}},
		{"2026-11-22T10:26:16.967+01:00", "", []int{1, 3, 4}},
		{"", "2026-11-22T09:26:16.967Z", []int{2}},
		{"2026-11-22T09:00:00Z", "2026-11-22T09:45:00.5Z", []int{1, 2, 3}},
		{"2026-11-22T00:00:00-12:00", "", []int{}},
	} {
		q := Query{Text: "word"}
		if c.since != "" {
			q.Since = at(c.since)
		}
		if c.until != "" {
			q.Until = at(c.until)
		}
		hits, err := db.Search(ctx, q)
		if err != nil || !reflect.DeepEqual(rounds(hits), c.want) {
			t.Errorf("since %q until %q: rounds %v (%v), want %v", c.since, c.until, rounds(hits), err, c.want)
		}
	}
}

// TestSearchUnknownFilter: a filter that names nothing the index has is
// an error that lists what it has; one that merely finds nothing is not.
func TestSearchUnknownFilter(t *testing.T) {
	db := testIndex(t, []string{"alpha", "beta"}, nil)
	ctx := context.Background()
	eng := "console-work"
	if _, err := db.SetEngagement(ctx, "s", []int{1}, &eng); err != nil {
		t.Fatal(err)
	}
	if err := db.Put(ctx, Session{SessionID: "t", AgentID: "codex", Project: "/home/dev/src/lib", Doc: "codex/t.md"}, nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		q    Query
		want *FilterError
	}{
		{Query{Text: "alpha", Agent: "cladue"}, &FilterError{"agent", "cladue", []string{"claude", "codex"}}},
		{Query{Text: "alpha", Project: "nowhere"}, &FilterError{"project", "nowhere", []string{"/home/dev/src/app", "/home/dev/src/lib"}}},
		{Query{Text: "alpha", Engagement: "console"}, &FilterError{"engagement", "console", []string{"console-work"}}},
		{Query{Text: "alpha", Agent: "codex"}, nil},
		{Query{Text: "beta", Engagement: "console-work"}, nil},
		{Query{Text: "alpha", Project: "src/lib"}, nil},
	} {
		hits, err := db.Search(ctx, c.q)
		var fe *FilterError
		switch {
		case c.want == nil && (err != nil || len(hits) != 0):
			t.Errorf("%+v: %v %v, want no hits and no error", c.q, hits, err)
		case c.want != nil && (!errors.As(err, &fe) || !reflect.DeepEqual(fe, c.want)):
			t.Errorf("%+v: %#v, want %#v", c.q, err, c.want)
		}
	}
	for name, f := range map[string]func(context.Context) ([]string, error){"Agents": db.Agents, "Projects": db.Projects, "Engagements": db.Engagements} {
		if got, err := f(ctx); err != nil || len(got) == 0 {
			t.Errorf("%s: %v %v", name, got, err)
		}
	}
}
