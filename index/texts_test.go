package index

import (
	"context"
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// oneSession indexes rows as the rounds of one session, "s".
func oneSession(t *testing.T, rows []Row) *corpus {
	t.Helper()
	c := newCorpus(t)
	for i := range rows {
		rows[i].SessionID, rows[i].RoundFile = "s", "r"
	}
	c.put(t, Session{SessionID: "s", AgentID: "claude", Doc: "x/s.md"}, rows)
	return c
}

// searchCase is a query and the rounds it must find.
type searchCase struct {
	q    Query
	want []string
}

// searchCases runs each case's query; with ordered, the rounds found must
// be in the order given (else, sorted).
func searchCases(t *testing.T, c *corpus, ordered bool, cases []searchCase) {
	t.Helper()
	for _, tc := range cases {
		hits, err := c.db.Search(context.Background(), tc.q)
		if err != nil {
			t.Fatalf("%q: %v", tc.q.Text, err)
		}
		got := found(hits)
		if ordered {
			got = inOrder(hits)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q in %v: %v, want %v", tc.q.Text, tc.q.In, got, tc.want)
		}
	}
}

// inOrder returns the hits as "session/round", in their order.
func inOrder(hits []Hit) []string {
	out := []string{}
	for _, h := range hits {
		out = append(out, fmt.Sprintf("%s/%d", h.SessionID, h.Round))
	}
	return out
}

// TestSearchTiers: the rounds where a query's words are one phrase rank
// first, then those where they are near, then the rest; of each, those
// where it is in a prompt or a reply before those where it is only in the
// tools' text; bm25 after that. --in narrows the texts searched.
func TestSearchTiers(t *testing.T) {
	filler := strings.Repeat("and then some more words go by here ", 3)
	rows := []Row{
		{Round: 1, Started: stamp(1), Reply: "Exit code 3 was what the test said"},                                // phrase, in a reply
		{Round: 2, Started: stamp(2), Tools: "Bash false\nExit code 3"},                                           // phrase, in the tools' text only
		{Round: 3, Started: stamp(3), Prompt: "what does code 3 mean on exit?"},                                   // near
		{Round: 4, Started: stamp(4), Reply: "exit " + filler + " code " + filler + " 3"},                         // anywhere
		{Round: 5, Started: stamp(5), Prompt: "exit now", Tools: "Read x\nerror code 3"},                          // anywhere, across texts
		{Round: 6, Started: stamp(6), Reply: "exit exit exit code code code 3 3 3 exit code and " + filler + "3"}, // near, with a better bm25 than 3
	}
	c := oneSession(t, rows)
	searchCases(t, c, true, []searchCase{
		{Query{Text: "Exit code 3"}, []string{"s/1", "s/2", "s/6", "s/3", "s/4", "s/5"}},
		{Query{Text: "exit code 3", In: Replies}, []string{"s/1", "s/6", "s/4"}},
		{Query{Text: "exit code 3", In: Tools}, []string{"s/2"}},
		{Query{Text: "exit code 3", In: Prompts | Tools}, []string{"s/2", "s/3", "s/5"}},
		{Query{Text: "exit", In: Prompts}, []string{"s/5", "s/3"}}, // bm25: the shorter first
	})
	// One word: in a prompt or a reply first, then in the tools' text.
	hits, err := c.db.Search(context.Background(), Query{Text: "code"})
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range hits {
		if tool := h.In == "tools"; tool != (h.Round == 2 || h.Round == 5) || tool && i < len(hits)-2 {
			t.Errorf("code: %v, its snippets in %v: those in the tools' text last", inOrder(hits), h.In)
		}
	}
	// The snippet is cut from the text the phrase is in, and marks it.
	hits, _ = c.db.Search(context.Background(), Query{Text: "exit code 3", In: Tools})
	if len(hits) != 1 || hits[0].In != "tools" || marked(hits[0].Snippet) != "Bash false «Exit code 3»" {
		t.Errorf("exit code 3 in tools: %+v", hits)
	}
}

// TestSearchPhraseBeyondWindow: a round where the query's words are one
// phrase ranks first however many newer rounds have the words apart.
func TestSearchPhraseBeyondWindow(t *testing.T) {
	c := newCorpus(t)
	var rows []Row
	rows = append(rows, Row{SessionID: "s", Round: 1, Started: stamp(0), Tools: "ls: cannot access 'x': No such file or directory", RoundFile: "r"})
	for i := 2; i <= rankWindow+40; i++ {
		rows = append(rows, Row{SessionID: "s", Round: i, Started: stamp(i), Reply: "no, the file is not such a one", RoundFile: "r"})
	}
	c.put(t, Session{SessionID: "s", AgentID: "claude", Doc: "x/s.md"}, rows)
	hits, err := c.db.Search(context.Background(), Query{Text: "No such file", Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].Round != 1 || marked(hits[0].Snippet) != "ls: cannot access 'x': «No such file» or directory" {
		t.Errorf("No such file: %v, first %+v; want round 1 first", inOrder(hits), hits)
	}
}

// TestSearchCJK: a word of a script written without spaces is found inside
// a sentence (the prompt), as a word, a phrase of several, a
// prefix of one letter and with --fts; English beside it is as before.
func TestSearchCJK(t *testing.T) {
	rows := []Row{
		{Round: 1, Started: stamp(1), Prompt: "请帮我修复这个错误，日志里写着连接超时"},
		{Round: 2, Started: stamp(2), Reply: "好的。连接超时了吗？The error is a timeout."},
		{Round: 3, Started: stamp(3), Reply: "コーヒーを飲みながらエラーを直します。로그에 연결 시간 초과 오류가 있습니다"},
		{Round: 4, Started: stamp(4), Reply: "第3章 errors"},
	}
	c := oneSession(t, rows)
	searchCases(t, c, false, []searchCase{
		{Query{Text: "错误"}, []string{"s/1"}},
		{Query{Text: "连接超时"}, []string{"s/1", "s/2"}},
		{Query{Text: "连接超时了"}, []string{"s/2"}},
		{Query{Text: "修复这个错误"}, []string{"s/1"}},
		{Query{Text: "日志 连接"}, []string{"s/1"}},
		{Query{Text: "错"}, []string{"s/1"}},
		{Query{Text: "时"}, []string{"s/1", "s/2"}},
		{Query{Text: "误日"}, []string{}}, // a comma between them
		{Query{Text: "连接超时", Raw: true}, []string{"s/1", "s/2"}},
		{Query{Text: `"日志里写着连接" OR エラー`, Raw: true}, []string{"s/1", "s/3"}},
		{Query{Text: "コーヒー"}, []string{"s/3"}},
		{Query{Text: "エラー"}, []string{"s/3"}},
		{Query{Text: "오류"}, []string{"s/3"}},
		{Query{Text: "第3章"}, []string{"s/4"}},
		{Query{Text: "3章"}, []string{"s/4"}},
		{Query{Text: "error"}, []string{"s/2"}},
		{Query{Text: "timeout"}, []string{"s/2"}},
	})
	hits, _ := c.db.Search(context.Background(), Query{Text: "连接超时"})
	for _, h := range hits {
		if h.Round == 1 && marked(h.Snippet) != "…我修复这个错误，日志里写着«连接超时»" {
			t.Errorf("snippet %q", marked(h.Snippet))
		}
	}
}

// TestTokensAsFTS5: the tokens Go cuts a text into (which search matches
// and marks) are those FTS5 indexes of it, in order.
func TestTokensAsFTS5(t *testing.T) {
	c := newCorpus(t)
	texts := []string{
		"请帮我修复这个错误，日志里写着连接超时",
		"错误abc def错 x错误y 第3章",
		"コーヒーを飲みながら、エラーを直します 々 ゝ",
		"로그에 연결 시간 초과 오류가 있습니다",
		"plain english, with-hyphens and snake_case 42",
		"mixed 中文English混合 text",
		"",
		"単",
	}
	var rows []Row
	for i, s := range texts {
		rows = append(rows, Row{SessionID: "s", Round: i + 1, Started: stamp(i), Prompt: s, Tools: s + " tools", RoundFile: "r"})
	}
	c.put(t, Session{SessionID: "s", AgentID: "claude", Doc: "x/s.md"}, rows)
	for i, s := range texts {
		q, err := c.db.db.Query(`SELECT term FROM text_terms t JOIN rounds r ON r.rowid = t.doc WHERE r.round = ? AND t.col = 'prompt' ORDER BY t.offset`, i+1)
		if err != nil {
			t.Fatal(err)
		}
		got := []string{}
		for q.Next() {
			var term string
			q.Scan(&term)
			got = append(got, term)
		}
		q.Close()
		want := []string{}
		for _, tok := range tokens(s) {
			want = append(want, strings.ToLower(tok))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%q: FTS5 has %q, Go %q", s, got, want)
		}
	}
}

func TestWordPhrase(t *testing.T) {
	for _, c := range []struct {
		word   string
		tokens []string
		prefix bool
	}{
		{"连接超时", []string{"连接", "接超", "超时"}, false},
		{"错误", []string{"错误"}, false},
		{"错", []string{"错"}, true},
		{"错误abc", []string{"错误", "误", "abc"}, false},
		{"abc错", []string{"abc", "错"}, true},
		{"第3章", []string{"第", "3", "章"}, true},
		{"hello.py", []string{"hello", "py"}, false},
		{"hel*", []string{"hel"}, true},
	} {
		p := wordPhrase(c.word)
		if !slices.Equal(p.tokens, c.tokens) || p.prefix != c.prefix {
			t.Errorf("wordPhrase(%q) = %q %v, want %q %v", c.word, p.tokens, p.prefix, c.tokens, c.prefix)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"连接超时", `"连接 接超 超时"`},
		{`"日志里" OR 错*`, `"日志 志里" OR "错"*`},
		{"plain AND words", "plain AND words"},
	} {
		if got := cjkQuery(c.in); got != c.want {
			t.Errorf("cjkQuery(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestMatcher: a matcher finds every match of every phrase, and only
// those, as comparing each phrase with the tokens at each token does; over
// random texts of words that are and are not the phrases', in any case,
// with prefixes, letters beyond ASCII (a Kelvin sign folds to k), CJK and
// more than 64 distinct words.
func TestMatcher(t *testing.T) {
	naive := func(text string, phrases []phrase) ([][]occurrence, int64) {
		type span struct{ start, end int }
		var toks []span
		for i := 0; ; {
			start, end, next := nextToken(text, i)
			if start == len(text) {
				break
			}
			toks = append(toks, span{start, end})
			i = next
		}
		out := make([][]occurrence, len(phrases))
		for i := range toks {
			for pi, p := range phrases {
				ok := i+len(p.tokens) <= len(toks)
				for k := 0; ok && k < len(p.tokens); k++ {
					ok = tokenMatches(text[toks[i+k].start:toks[i+k].end], p.tokens[k], p.prefix && k == len(p.tokens)-1)
				}
				if ok {
					out[pi] = append(out[pi], occurrence{i, toks[i].start})
				}
			}
		}
		return out, int64(len(toks))
	}
	words := []string{"exit", "EXIT", "Exit", "code", "codes", "co", "3", "33", "\u212Aey", "key", "KEY", "连接", "接超", "超时", "错误", "é", "É", "x"}
	var many []string
	for i := 0; i < 70; i++ {
		many = append(many, fmt.Sprintf("w%d", i))
	}
	rng := rand.New(rand.NewSource(1))
	phraseSets := [][]phrase{
		{{tokens: []string{"exit", "code", "3"}}, {tokens: []string{"exit"}}, {tokens: []string{"code"}}, {tokens: []string{"3"}}},
		{{tokens: []string{"exit", "co"}, prefix: true}, {tokens: []string{"exit"}}, {tokens: []string{"co"}, prefix: true}},
		{{tokens: []string{"key"}}, {tokens: []string{"k"}, prefix: true}, {tokens: []string{"é"}}},
		{{tokens: []string{"\u212Aey"}}, {tokens: []string{"code", "\u212Aey"}}}, // the Kelvin sign folds to k
		{{tokens: []string{"连接", "接超", "超时"}}, {tokens: []string{"错"}, prefix: true}},
		{{tokens: many}, {tokens: []string{"w69", "w0"}}, {tokens: []string{"w1"}}},
	}
	// One matcher a set, its rings reused from text to text, as a search
	// reuses them from round to round.
	matchers := make([]*matcher, len(phraseSets))
	for i, ps := range phraseSets {
		matchers[i] = newMatcher(ps)
	}
	for n := 0; n < 2000; n++ {
		var sb strings.Builder
		for w := rng.Intn(40); w > 0; w-- {
			if rng.Intn(3) == 0 {
				sb.WriteString(many[rng.Intn(len(many))])
			} else {
				sb.WriteString(words[rng.Intn(len(words))])
			}
			sb.WriteString([]string{" ", "  ", "-", ", ", "\n", ""}[rng.Intn(6)])
		}
		text := sb.String()
		for i, ps := range phraseSets {
			m := matchers[i]
			for range 2 { // and again on the same text
				got, gotN := m.positions(text)
				want, wantN := naive(text, ps)
				if gotN != wantN || !reflect.DeepEqual(got, want) {
					t.Fatalf("%v in %q: %v (%d tokens), want %v (%d)", ps, text, got, gotN, want, wantN)
				}
			}
		}
	}
}
