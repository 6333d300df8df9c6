package index

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	_ "github.com/scribe-archive/scribe/internal/testenv" // understands -update (go test ./... -update)
)

// vocabulary for synthetic rounds: a few hundred common words (drawn often)
// and many rare ones (drawn seldom), roughly as in real sessions.
func vocabulary(rng *rand.Rand) (common, rare []string) {
	common = append(common, strings.Fields(`the a to of and in is it that for on with this be as are was file code
		test run error function return value go type we can if not use need will add fix change make check build
		index search session round append export store document markdown json line commit branch merge deploy
		config server client request response data user agent model tool result output input path directory`)...)
	for i := 0; i < 50000; i++ {
		b := make([]byte, 5+rng.Intn(6))
		for j := range b {
			b[j] = byte('a' + rng.Intn(26))
		}
		rare = append(rare, string(b))
	}
	return common, rare
}

// millionRounds builds (once; kept in $SCRIBE_BENCH_DIR, or a temporary
// directory) an index of 1,000,000 rounds: 2,000 sessions of 500 rounds,
// each round about 60 words.
func millionRounds(b *testing.B) (*DB, []string) {
	dir := os.Getenv("SCRIBE_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	p := filepath.Join(dir, "million.db")
	rng := rand.New(rand.NewSource(1))
	common, rare := vocabulary(rng)
	if _, err := os.Stat(p); err != nil {
		start := time.Now()
		db, err := Open(p + ".tmp")
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		for s := 0; s < 2000; s++ {
			sess := Session{SessionID: fmt.Sprintf("%08d-0000-4000-8000-000000000000", s), AgentID: []string{"claude", "historian", "architect"}[s%3],
				Title: "session " + fmt.Sprint(s), Project: fmt.Sprintf("/home/me/src/project-%02d", s%40),
				Started: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(s) * 3 * time.Hour).Format(time.RFC3339), Doc: "claude/x.md"}
			rows := make([]Row, 500)
			for r := range rows {
				var words []string
				for w := 0; w < 60; w++ {
					if rng.Intn(5) == 0 {
						words = append(words, rare[rng.Intn(len(rare))])
					} else {
						words = append(words, common[rng.Intn(len(common))])
					}
				}
				body := strings.Join(words, " ")
				rows[r] = Row{SessionID: sess.SessionID, Round: r + 1, Started: sess.Started, UserPreview: body[:min(120, len(body))],
					AgentPreview: body[len(body)/2:][:min(120, len(body)/2)], Body: body, RoundFile: "x"}
				if r%50 == 0 {
					eng := "console-work"
					rows[r].EngagementID = &eng
				}
			}
			if err := db.Put(ctx, sess, rows); err != nil {
				b.Fatal(err)
			}
		}
		db.Close()
		if err := os.Rename(p+".tmp", p); err != nil {
			b.Fatal(err)
		}
		fi, _ := os.Stat(p)
		b.Logf("built 1,000,000 rounds in %s: %d MB", time.Since(start).Round(time.Second), fi.Size()>>20)
	}
	db, err := Open(p)
	if err != nil {
		b.Fatal(err)
	}
	queries := []string{
		rare[10], rare[2000] + " OR " + rare[3000], `"` + rare[5] + " " + rare[6] + `"`, rare[7] + "*",
		"deploy AND " + rare[42], "error NEAR(" + rare[100] + " file, 5)",
	}
	return db, queries
}

// searchLatency runs queries once to warm the index, then b.N times, and
// reports the median, 95th percentile and maximum latency.
func searchLatency(b *testing.B, db *DB, qs []Query) {
	ctx := context.Background()
	for _, q := range qs { // warm
		if _, err := db.Search(ctx, q); err != nil {
			b.Fatalf("%+v: %v", q, err)
		}
	}
	var lat []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, q := range qs {
			start := time.Now()
			if _, err := db.Search(ctx, q); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(start))
		}
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
}

// BenchmarkSearchStore measures search latency, warm, on the sessions.db of
// a real store (SCRIBE_BENCH_SESSIONS_DB; e.g. an inscription of
// mkarchive.py --sessions 300) over a fixed set of queries.
func BenchmarkSearchStore(b *testing.B) {
	path := os.Getenv("SCRIBE_BENCH_SESSIONS_DB")
	if path == "" {
		b.Skip("SCRIBE_BENCH_SESSIONS_DB is not set: point it at the sessions.db of an inscribed archive")
	}
	db, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var qs []Query
	for _, q := range []string{"error", "test", "README", "git commit", `"go test"`, "func*", "python OR golang",
		"index AND search", "NEAR(file error, 5)", "permission denied", "hello", "compaction"} {
		qs = append(qs, Query{Text: q, Limit: 20}, Query{Text: q, Limit: 20, Since: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Agent: "claude"})
	}
	searchLatency(b, db, qs)
}

// BenchmarkSearchMillion measures search latency at a million rounds, warm:
// a fixed set of queries (rare words, OR, a phrase, a prefix, AND with a
// common word, NEAR), then the same with filters. It reports the median and
// the 95th percentile.
func BenchmarkSearchMillion(b *testing.B) {
	db, queries := millionRounds(b)
	defer db.Close()
	var qs []Query
	for _, q := range queries {
		qs = append(qs, Query{Text: q, Limit: 20})
		qs = append(qs, Query{Text: q, Limit: 20, Agent: "historian", Since: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)})
		qs = append(qs, Query{Text: q, Limit: 20, Engagement: "console-work"})
	}
	searchLatency(b, db, qs)
}

// BenchmarkPutOneRound measures the cost of indexing one appended round
// into an index of a million rounds.
func BenchmarkPutOneRound(b *testing.B) {
	db, _ := millionRounds(b)
	defer db.Close()
	ctx := context.Background()
	sess := Session{SessionID: "99999999-0000-4000-8000-000000000000", AgentID: "claude", Doc: "claude/y.md"}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		body := fmt.Sprintf("round %d of an appended session: we decided to keep the index incremental", i)
		sess.Seen = int64(i)
		if err := db.Put(ctx, sess, []Row{{SessionID: sess.SessionID, Round: i + 1, Body: body, UserPreview: body, RoundFile: "y"}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearchLargeRound measures a search that finds one very large
// round: 100 MB of common words (SCRIBE_BENCH_LARGE_MB sets the size),
// with one rare word at its very end. A common word has a match in almost
// every token of it, and the rare word's only match is as far from the
// start as it can be.
func BenchmarkSearchLargeRound(b *testing.B) {
	size := 100 << 20
	if s := os.Getenv("SCRIBE_BENCH_LARGE_MB"); s != "" {
		var mb int
		if _, err := fmt.Sscan(s, &mb); err != nil || mb <= 0 {
			b.Fatalf("SCRIBE_BENCH_LARGE_MB=%q: want a positive number of megabytes", s)
		}
		size = mb << 20
	}
	rng := rand.New(rand.NewSource(1))
	common, _ := vocabulary(rng)
	var body strings.Builder
	body.Grow(size + 64)
	for body.Len() < size {
		body.WriteString(common[rng.Intn(len(common))])
		body.WriteByte(' ')
	}
	body.WriteString("zanzibarian")
	db, err := Open(filepath.Join(b.TempDir(), "large.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	start := time.Now()
	sess := Session{SessionID: "large", AgentID: "claude", Doc: "claude/large.md"}
	row := Row{SessionID: "large", Round: 1, Started: "2026-11-22T09:26:16.967Z", Body: body.String(), RoundFile: "x"}
	if err := db.Put(context.Background(), sess, []Row{row}); err != nil {
		b.Fatal(err)
	}
	b.Logf("indexed one round of %d MB in %s", size>>20, time.Since(start).Round(time.Millisecond))
	for _, c := range []struct{ name, text string }{{"common", "the"}, {"rare-at-end", "zanzibarian"}} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				hits, err := db.Search(context.Background(), Query{Text: c.text, Limit: 20})
				if err != nil || len(hits) != 1 {
					b.Fatalf("%q: %d hits (%v), want 1", c.text, len(hits), err)
				}
			}
		})
	}
}
