package index

import (
	"context"
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// fts5Rounds returns the rounds ("session/round") FTS5 finds for a match
// of text_fts, sorted: what a search by pairs must find.
func fts5Rounds(t *testing.T, db *DB, match string) []string {
	t.Helper()
	rows, err := db.db.Query(`SELECT r.session_id, r.round FROM text_fts JOIN rounds r ON r.rowid = text_fts.rowid WHERE text_fts MATCH ?`, match)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s/%d", s, n))
	}
	return out
}

// TestSearchPhrasesByPairs: a phrase searched by its pairs finds the rounds
// FTS5 finds for it: whatever the case, diacritics FTS5 folds, combining
// marks, punctuation between the words, a phrase's pairs found apart, a
// prefix at its end, a body too long to pair, filters, and words common
// enough to be searched with the pairs.
func TestSearchPhrasesByPairs(t *testing.T) {
	c := newCorpus(t)
	rng := rand.New(rand.NewSource(3))
	specials := []string{
		"Go Test Data", "go-test.data", "GO_TEST_DATA", "go test, data", "go test xx test data", "the café au lait",
		"the CAFÉ AU LAIT", "the cafe\u0301 au lait", "go te\u0301st data", "naïve go test datum", "go test data " + strings.Repeat("x", 10),
		strings.Repeat("filler ", pairBytes/7+1) + "go test data", "go\ttest\ndata", "gotest data", "go testdata", "ünïcödé go test",
	}
	common := strings.Fields("go test data the file error run")
	for s := 0; s < 6; s++ {
		sess := Session{SessionID: fmt.Sprintf("s%d", s), AgentID: []string{"claude", "codex"}[s%2], Project: fmt.Sprintf("/p%d", s%3), Doc: "x"}
		var rows []Row
		for r := 1; r <= 400; r++ {
			var body string
			if rng.Intn(6) == 0 {
				body = specials[rng.Intn(len(specials))]
			} else {
				var words []string
				for w := 0; w < 3+rng.Intn(6); w++ {
					words = append(words, common[rng.Intn(len(common))])
				}
				body = strings.Join(words, " ")
			}
			row := Row{SessionID: sess.SessionID, Round: r, Started: stamp(s*500 + r), Reply: body, RoundFile: "r"}
			if r%5 == 0 {
				eng := "e1"
				row.EngagementID = &eng
			}
			rows = append(rows, row)
		}
		c.put(t, sess, rows)
	}
	for _, tc := range []struct {
		q     Query
		match string // text_fts's, for the same rounds
	}{
		{Query{Text: "go-test-data"}, `{prompt reply tools}: "go test data"`},
		{Query{Text: "GO.TEST"}, `{prompt reply tools}: "go test"`},
		{Query{Text: "cafe-au-lait"}, `{prompt reply tools}: "cafe au lait"`},
		{Query{Text: "café.au"}, `{prompt reply tools}: "café au"`},
		{Query{Text: "test-data go-test"}, `{prompt reply tools}: "test data" AND {prompt reply tools}: "go test"`},
		{Query{Text: "go-test-dat*"}, `{prompt reply tools}: "go test dat"*`},
		{Query{Text: "go-te*"}, `{prompt reply tools}: "go te"*`},
		{Query{Text: "the go-test"}, `{prompt reply tools}: the AND {prompt reply tools}: "go test"`},
		{Query{Text: "go-test-data", Agent: "codex"}, `{prompt reply tools}: "go test data" AND {filters}: ` + filterToken('a', "codex")},
		{Query{Text: "go-test", Engagement: "e1", Project: "p1"}, `{prompt reply tools}: "go test" AND {filters}: ` + filterToken('e', "e1") + ` AND {filters}: ` + filterToken('p', "/p1")},
		{Query{Text: "file-error-run-go"}, `{prompt reply tools}: "file error run go"`},
	} {
		tc.q.Limit = 2000
		hits, err := c.db.Search(context.Background(), tc.q)
		if err != nil {
			t.Errorf("%+v: %v", tc.q, err)
			continue
		}
		want := fts5Rounds(t, c.db, tc.match)
		sort.Strings(want)
		if got := found(hits); !reflect.DeepEqual(got, want) {
			t.Errorf("%+v: %d hits, want %d:\n got %v\nwant %v", tc.q, len(got), len(want), got, want)
		}
	}
}

func TestPairText(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{"", ""},
		{"one", ""},
		{"Go test-data, x_y", "Go_test test_data data_x x_y "},
		{"cafe\u0301 au", unpairedToken},
		{strings.Repeat("a ", pairBytes), unpairedToken},
	} {
		if got := pairText(c.body); got != c.want {
			t.Errorf("pairText(%.20q) = %.40q, want %q", c.body, got, c.want)
		}
	}
}
