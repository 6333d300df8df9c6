package index

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/scribe-archive/scribe/internal/testkit/testenv" // understands -update (go test ./... -update)
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

// millionCorpus names the synthetic corpus millionRounds generates. Change
// it whenever the generator changes: it is part of the cached file's name,
// with the schema version, so that a cache is never reused for another
// corpus or schema.
const millionCorpus = "g3"

// millionWords are the words the million-round corpus was drawn from.
type millionWords struct {
	common, rare []string
}

// millionRounds builds (once; kept in $SCRIBE_BENCH_DIR, or a temporary
// directory) an index of 1,000,000 rounds: 2,000 sessions of 500 rounds,
// three hours apart, their rounds 20 seconds apart, each round 20 to 100
// words (60 on average; its first 12 the prompt, the rest the reply), four
// in five of them common. A common word is in about half the rounds, a
// rare one in about 240. Half the rounds have tools' text too, 10 to 150
// words (80 on average) of a vocabulary of command output (toolWords), one
// in five of them rare; one in 100 holds "No such file or directory", one
// in 300 "Exit code 3", one in 20,000 "Segmentation fault (core dumped)".
// Sessions are of three agents and 40 projects; every 50th round is tagged
// console-work.
func millionRounds(b *testing.B) (*DB, millionWords) {
	dir := os.Getenv("SCRIBE_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	p := filepath.Join(dir, fmt.Sprintf("million-%s-v%d.db", millionCorpus, Version))
	rng := rand.New(rand.NewSource(1))
	common, rare := vocabulary(rng)
	if _, err := os.Stat(p); err != nil {
		start := time.Now()
		os.Remove(p + ".tmp")
		db, err := Open(p + ".tmp")
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		trng := rand.New(rand.NewSource(2)) // the tools' text: the rest is drawn as before it was
		for s := 0; s < 2000; s++ {
			started := t0.Add(time.Duration(s) * 3 * time.Hour)
			sess := Session{SessionID: fmt.Sprintf("%08d-0000-4000-8000-000000000000", s), AgentID: []string{"claude", "historian", "architect"}[s%3],
				Title: "session " + fmt.Sprint(s), Project: fmt.Sprintf("/home/me/src/project-%02d", s%40),
				Started: started.Format(stampLayout), Doc: "claude/x.md"}
			rows := make([]Row, 500)
			for r := range rows {
				var words []string
				for w := 20 + rng.Intn(81); w > 0; w-- {
					if rng.Intn(5) == 0 {
						words = append(words, rare[rng.Intn(len(rare))])
					} else {
						words = append(words, common[rng.Intn(len(common))])
					}
				}
				body := strings.Join(words, " ")
				at := started.Add(time.Duration(r)*20*time.Second + time.Duration(rng.Intn(1000))*time.Millisecond)
				rows[r] = Row{SessionID: sess.SessionID, Round: r + 1, Started: at.Format(stampLayout), UserPreview: body[:min(120, len(body))],
					AgentPreview: body[len(body)/2:][:min(120, len(body)/2)], Prompt: strings.Join(words[:12], " "), Reply: strings.Join(words[12:], " "),
					Tools: toolText(trng, rare), RoundFile: "x"}
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
	return db, millionWords{common, rare}
}

// toolWords are what the tools' text of the million-round corpus is
// mostly made of: command output.
var toolWords = strings.Fields(`total drwxr-xr-x rw-r--r-- root staff 4096 Nov 22 09:26 src main.go go.mod README.md
	ok PASS FAIL --- RUN test tests passed failed error warning line col at in package build npm install added
	packages audited found vulnerabilities exit status code file not found permission denied directory created
	updated deleted modified 1 2 3 0 100 true false null undefined cannot open read write`)

// toolText returns the tools' text of a round of the million-round corpus
// (millionRounds): none for half of them.
func toolText(rng *rand.Rand, rare []string) string {
	if rng.Intn(2) == 0 {
		return ""
	}
	var words []string
	for w := 10 + rng.Intn(141); w > 0; w-- {
		if rng.Intn(5) == 0 {
			words = append(words, rare[rng.Intn(len(rare))])
		} else {
			words = append(words, toolWords[rng.Intn(len(toolWords))])
		}
	}
	if rng.Intn(100) == 0 {
		words = append(words, "cat: x.txt: No such file or directory")
	}
	if rng.Intn(300) == 0 {
		words = append(words, "Exit code 3")
	}
	if rng.Intn(20000) == 0 {
		words = append(words, "Segmentation fault (core dumped)")
	}
	return strings.Join(words, " ")
}

// searchLatency runs each query once to warm the index, then b.N times,
// and reports the median, 95th percentile and maximum latency, and (on
// Linux) the 95th percentile and maximum of the CPU time each query took
// on its thread (p95-cpu-ms: the latency on a core of its own, where
// other processes share the cores).
func searchLatency(b *testing.B, db *DB, qs []Query) {
	ctx := context.Background()
	for _, q := range qs { // warm
		if _, err := db.Search(ctx, q); err != nil {
			b.Fatalf("%+v: %v", q, err)
		}
	}
	runtime.LockOSThread() // the search runs on this goroutine: threadCPU is its
	defer runtime.UnlockOSThread()
	var lat, cpu []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, q := range qs {
			start, c0 := time.Now(), threadCPU()
			if _, err := db.Search(ctx, q); err != nil {
				b.Fatal(err)
			}
			lat, cpu = append(lat, time.Since(start)), append(cpu, threadCPU()-c0)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	slices.Sort(cpu)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
	b.ReportMetric(ms(lat[len(lat)*95/100]), "p95-ms")
	b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
	if cpu[len(cpu)-1] > 0 {
		b.ReportMetric(ms(cpu[len(cpu)*95/100]), "p95-cpu-ms")
		b.ReportMetric(ms(cpu[len(cpu)-1]), "max-cpu-ms")
	}
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

// BenchmarkSearchMillion measures search latency at a million rounds
// (millionRounds), warm, by the shape of the query: a sub-benchmark per
// shape, each reporting the median, 95th percentile and maximum over its
// queries. Rare words are in about 240 rounds, common ones in about
// 500,000; a common prefix matches up to nine rounds in ten, a phrase of
// two common words about 7,700, one of three (phrase-sparse) about 90
// (with a filter, a few; phrase-and-word adds a common or rare word or a
// prefix): in
// this corpus words are drawn at random, so common words are found
// together far more often than side by side, which real text seldom
// does. The filters select a third of the rounds (an agent), a fortieth
// (a project), a fiftieth (an engagement), and from 70% down to 0.4% (a
// time). The tools shapes search the tools' text (half the rounds have
// some): rare words, its common words and phrases, alone or with --in.
//
// Build the index once (about 10 minutes) and keep it:
//
//	SCRIBE_BENCH_DIR=/tmp/scribe-bench go test ./index -run '^$' -bench SearchMillion -benchtime 5x -count 3
func BenchmarkSearchMillion(b *testing.B) {
	db, w := millionRounds(b)
	defer db.Close()
	r := w.rare
	day := func(d int) time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, d) }
	last := day(250) // the last round is of 2026-09-07
	text := func(ts ...string) []Query {
		var qs []Query
		for _, t := range ts {
			qs = append(qs, Query{Text: t})
		}
		return qs
	}
	raw := func(ts ...string) []Query {
		qs := text(ts...)
		for i := range qs {
			qs[i].Raw = true
		}
		return qs
	}
	for _, shape := range []struct {
		name string
		qs   []Query
	}{
		{"rare", text(r[10], r[11], r[12], r[13])},
		{"rare-fts", raw(r[2000]+" OR "+r[3000], `"`+r[5]+" "+r[6]+`"`, r[7]+"*", "deploy AND "+r[42], "error NEAR("+r[100]+" file, 5)")},
		{"rare-filtered", []Query{
			{Text: r[10], Agent: "historian", Since: day(59)},
			{Text: r[11], Engagement: "console-work"},
			{Text: r[12], Project: "project-0"},
			{Text: r[13], Since: day(100), Until: day(130)},
		}},
		{"common", text("the", "error", "data", "function")},
		{"common-and", text("the error", "file test", "go data config")},
		{"common-fts", raw("error OR data", "NEAR(error file, 5)", "test NOT data")},
		{"common-filtered", []Query{
			{Text: "the", Agent: "historian", Since: day(59)},
			{Text: "error", Project: "project-07"},
			{Text: "data", Engagement: "console-work"},
			{Text: "function", Since: day(120), Until: day(121)},
			{Text: "test", Until: day(10)},
			{Text: "config", Since: last.AddDate(0, 0, -7)},
			{Text: "the", Agent: "claude", Project: "project-0", Since: day(30), Until: day(200)},
		}},
		{"prefix", text("te*", "co*", "re*", "fun*")},
		{"prefix-short", text("d*", "t*")},
		{"prefix-long", text("deplo*", "functio*", "direct*", "config*")},
		{"prefix-filtered", []Query{
			{Text: "co*", Agent: "architect"},
			{Text: "re*", Project: "project-13"},
			{Text: "te*", Since: day(200), Until: day(201)},
			{Text: "fun*", Engagement: "console-work"},
		}},
		{"phrase", append(text("the-file", "run.test", "error/function"), raw(`"index search"`)...)},
		{"phrase-sparse", text("go-test-data", "the.file.error", "src/index/search.go")},
		{"phrase-sparse-filtered", []Query{
			{Text: "go-test-data", Agent: "historian"},
			{Text: "the.file.error", Since: day(100)},
			{Text: "run-test-data", Engagement: "console-work"},
			{Text: "data-error-file", Project: "project-1"},
		}},
		{"phrase-and-word", append(text("error go-test-data", "the-file-error data", "file the-test", r[20]+" the-file"),
			Query{Text: "deploy*  go-test-data"})},
		{"tools-rare", []Query{{Text: r[30], In: Tools}, {Text: r[31]}, {Text: r[32], In: Prompts | Replies}, {Text: r[33] + " exit"}}},
		{"tools-common", []Query{{Text: "total", In: Tools}, {Text: "permission denied"}, {Text: "error", In: Tools}, {Text: "denied", In: Prompts}}},
		{"tools-phrase", append(text("No such file or directory", "Exit code 3", "segmentation fault core dumped", "no such file"),
			Query{Text: "exit code", In: Tools}, Query{Text: "file not found", In: Tools})},
		{"phrase-filtered", []Query{
			{Text: "the-file", Agent: "claude", Since: day(59)},
			{Text: "run.test", Engagement: "console-work"},
			{Text: "error/function", Project: "project-21"},
			{Text: "index.search", Since: day(40), Until: day(41)},
		}},
	} {
		b.Run(shape.name, func(b *testing.B) { searchLatency(b, db, shape.qs) })
	}
}

// BenchmarkPutOneRound measures the cost of indexing one appended round
// into an index of a million rounds. It removes what it added.
func BenchmarkPutOneRound(b *testing.B) {
	db, _ := millionRounds(b)
	defer db.Close()
	ctx := context.Background()
	sess := Session{SessionID: "99999999-0000-4000-8000-000000000000", AgentID: "claude", Doc: "claude/y.md"}
	defer func() {
		for _, q := range []string{`DELETE FROM rounds WHERE session_id = ?`, `DELETE FROM sessions WHERE session_id = ?`} {
			if _, err := db.db.Exec(q, sess.SessionID); err != nil {
				b.Error(err)
			}
		}
	}()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		body := fmt.Sprintf("round %d of an appended session: we decided to keep the index incremental", i)
		sess.Seen = int64(i)
		if err := db.Put(ctx, sess, []Row{{SessionID: sess.SessionID, Round: i + 1, Started: time.Now().UTC().Format(stampLayout),
			Reply: body, UserPreview: body, RoundFile: "y"}}); err != nil {
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
	row := Row{SessionID: "large", Round: 1, Started: "2026-11-22T09:26:16.967Z", Reply: body.String(), RoundFile: "x"}
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

// BenchmarkPutTimes measures what the start times of a session's rounds
// cost the index (issue 34): rounds that each start at a time of their
// own (distinct, 10 seconds apart), all at the same time (equal), or at
// none (missing). put indexes a session of 10,000 rounds in one Put into
// an empty index; append is one Put of one more round to a session of 10
// or 10,000, each iteration a round more.
func BenchmarkPutTimes(b *testing.B) {
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	sess := Session{SessionID: "s", AgentID: "claude", Doc: "claude/s.md"}
	rows := func(times string, from, to int) []Row {
		var out []Row
		for r := from; r < to; r++ {
			at := ""
			switch times {
			case "distinct":
				at = t0.Add(time.Duration(r) * 10 * time.Second).Format(stampLayout)
			case "equal":
				at = t0.Format(stampLayout)
			}
			body := fmt.Sprintf("question %d about the index answer %d", r, r)
			out = append(out, Row{SessionID: "s", Round: r + 1, Started: at, Reply: body, UserPreview: body, RoundFile: "x"})
		}
		return out
	}
	open := func(b *testing.B) *DB {
		db, err := Open(filepath.Join(b.TempDir(), "sessions.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		return db
	}
	for _, times := range []string{"distinct", "equal", "missing"} {
		b.Run("put/times="+times+"/rounds=10000", func(b *testing.B) {
			rs := rows(times, 0, 10000)
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				db := open(b)
				b.StartTimer()
				if err := db.Put(ctx, sess, rs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	for _, n := range []int{10, 10000} {
		for _, times := range []string{"distinct", "equal", "missing"} {
			b.Run(fmt.Sprintf("append/times=%s/rounds=%d", times, n), func(b *testing.B) {
				db := open(b)
				if err := db.Put(ctx, sess, rows(times, 0, n)); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := db.Put(ctx, sess, rows(times, n+i, n+i+1)); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkPutScripts measures what a script written without spaces costs
// the index (issue 30): 4,000 rounds of about 1 KB each, of English (the
// million-round corpus's words) or of Chinese (words of one to four Han
// letters of 3,000, drawn as a Zipf law draws them, about ten to a
// sentence, no space between them), put in one Put into an empty index.
// Each run of Han letters is indexed as its pairs of letters (scribe_cjk):
// text-MB/s is the text put per second, index/text the size of the index
// (the database and its log, closed) over the text's bytes.
func BenchmarkPutScripts(b *testing.B) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(1))
	common, rare := vocabulary(rng)
	zipf := rand.NewZipf(rng, 1.1, 10, 2999)
	texts := map[string]func() string{
		"english": func() string {
			var sb strings.Builder
			for sb.Len() < 1000 {
				if rng.Intn(5) == 0 {
					sb.WriteString(rare[rng.Intn(len(rare))])
				} else {
					sb.WriteString(common[rng.Intn(len(common))])
				}
				sb.WriteByte(' ')
			}
			return sb.String()
		},
		"chinese": func() string {
			var sb strings.Builder
			for sb.Len() < 1000 {
				for w := 5 + rng.Intn(11); w > 0; w-- {
					for l := 1 + rng.Intn(4); l > 0; l-- {
						sb.WriteRune(rune(0x4E00 + zipf.Uint64()))
					}
				}
				sb.WriteString("，")
			}
			return sb.String()
		},
	}
	for _, script := range []string{"english", "chinese"} {
		b.Run(script, func(b *testing.B) {
			var rows []Row
			var size int64
			for r := 0; r < 4000; r++ {
				t := texts[script]()
				rows = append(rows, Row{SessionID: "s", Round: r + 1, Started: fmt.Sprintf("2026-01-01T00:00:%02d.%03dZ", r/1000, r%1000),
					Prompt: t[:len(t)/4], Reply: t[len(t)/4:], RoundFile: "x"})
				size += int64(len(t))
			}
			b.SetBytes(size)
			var dbBytes int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				p := filepath.Join(b.TempDir(), "sessions.db")
				db, err := Open(p)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if err := db.Put(ctx, Session{SessionID: "s", AgentID: "claude", Doc: "claude/s.md"}, rows); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				db.Close()
				dbBytes = 0
				for _, f := range []string{p, p + "-wal"} {
					if fi, err := os.Stat(f); err == nil {
						dbBytes += fi.Size()
					}
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(dbBytes)/float64(size), "index/text")
		})
	}
}
