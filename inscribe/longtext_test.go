package inscribe

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// pieces of text where encoding/json and the piecewise writers could part:
// escapes, HTML, line separators, multi-byte runes, bytes that are no
// UTF-8, a rune cut short, white space of every width.
var awkward = []string{"a", "é", "→", "😀", "<", ">", "&", "\"", "\\", "\n", "\t", "\x00", "\x1f", "\u2028", "\u2029",
	"\xff", "\xe2\x82", "\xc3", "\x80", "\x80\x80\x80\x80\x80", " ", "\u0085", "\u00a0", "\u3000", "{}", "[1,2]"}

func awkwardString(rng *rand.Rand, n int) string {
	var sb strings.Builder
	for i := 0; i < n; i++ {
		sb.WriteString(awkward[rng.IntN(len(awkward))])
	}
	return sb.String()
}

// TestWriteJSONString checks that a string written in pieces is encoded as
// encoding/json encodes it whole, whatever the pieces' size.
func TestWriteJSONString(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 18))
	for i := 0; i < 2000; i++ {
		s := awkwardString(rng, rng.IntN(40))
		want, _ := json.Marshal(s)
		for piece := 4; piece <= 9; piece++ {
			var got bytes.Buffer
			w := bufio.NewWriter(&got)
			writeJSONStringIn(w, s, piece)
			w.Flush()
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("%q in pieces of %d: %s, want %s", s, piece, got.Bytes(), want)
			}
		}
	}
}

// TestWriteIndented checks that a round file's header and blocks with
// long texts are written as json.MarshalIndent writes them, including
// when a short field holds the placeholder a long text stands in for.
func TestWriteIndented(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 18))
	long := func() string { return awkwardString(rng, longText+rng.IntN(100)) }
	user := &RoundBlock{Type: "text", Text: long()}
	agent := []RoundBlock{
		{Type: "text", Text: long()},
		{Type: "tool_use", Name: "\x00scribe long text 1\x00", ID: "t1", Input: json.RawMessage(`{"a":1}`),
			Result: &RoundResult{Content: []RoundBlock{{Type: "text", Text: long()}, {Type: "raw", Text: "short"}, {Type: "text", Text: long()}}}},
		{Type: "thinking", Text: "short <b>"},
	}
	rf := RoundFile{Round: 3, Started: "2026-01-01T00:00:00Z", User: user}
	check := func(v any, prefix string, texts []*string, trim string) {
		t.Helper()
		if len(texts) == 0 {
			t.Fatal("no long text to stream")
		}
		want, err := json.MarshalIndent(v, prefix, "  ")
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		w := bufio.NewWriter(&got)
		if err := writeIndented(w, v, prefix, texts, trim); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		if !bytes.Equal(got.Bytes(), bytes.TrimSuffix(want, []byte(trim))) {
			t.Errorf("%T differs from json.MarshalIndent", v)
		}
	}
	check(&rf, "", longTexts(&rf, nil), "\"agent\": null,\n  \"entries\": null\n}")
	for i := range agent {
		if texts := longTexts(&RoundFile{}, agent[i:i+1]); len(texts) > 0 {
			check(&agent[i], "    ", texts, "")
		}
	}
	if user.Text == "" || agent[1].Result.Content[0].Text == "" {
		t.Fatal("a text was not put back")
	}
}

// TestEmbeddable checks the piecewise test of a line against the test on
// the whole line in memory (writeRoundTo's).
func TestEmbeddable(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 18))
	for i := 0; i < 3000; i++ {
		line := []byte(awkwardString(rng, 1+rng.IntN(12)))
		want := utf8.Valid(line) && len(bytes.TrimSpace(line)) == len(line)
		src := append([]byte("xyz"), line...)
		src = append(src, "\n..."...)
		for piece := 4; piece <= 9; piece++ {
			got, err := embeddableIn(bytes.NewReader(src), 3, int64(len(line)), piece)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("%q in pieces of %d: %v, want %v", line, piece, got, want)
			}
		}
	}
}

// TestReadRoundHeaderLong checks that a round file's header with long
// texts, read a line at a time and decoded in place, is what
// encoding/json reads, and so when a mark or a long string is where no
// text goes (then read by a json.Decoder).
func TestReadRoundHeaderLong(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 33))
	long := func() string { return awkwardString(rng, longText+rng.IntN(100)) }
	tool := func(name string, input json.RawMessage) RoundBlock {
		return RoundBlock{Type: "tool_use", Name: name, ID: "t1", Input: input,
			Result: &RoundResult{Content: []RoundBlock{{Type: "text", Text: long()}, {Type: "raw", Text: "short"}, {Type: "text", Text: long()}}}}
	}
	longInput, _ := json.Marshal(map[string]string{"content": long()})
	text := "some entry"
	for _, c := range []struct {
		name  string
		agent []RoundBlock
		lines bool // read a line at a time
	}{
		{"texts", []RoundBlock{{Type: "text", Text: long()}, tool("Bash", json.RawMessage(`{"a":1}`)), {Type: "thinking", Text: "short <b>"}}, true},
		{"a mark in a name", []RoundBlock{tool("\x00scribe long text 1\x00", json.RawMessage(`{"a":1}`))}, false},
		{"a long input", []RoundBlock{tool("Write", longInput)}, false},
		{"short", []RoundBlock{{Type: "text", Text: "hi"}}, true},
	} {
		rf := RoundFile{Round: 3, Started: "2026-01-01T00:00:00Z", Lines: [2]int{1, 2}, User: &RoundBlock{Type: "text", Text: long()}, Agent: c.agent,
			Entries: []RoundEntry{{Line: 1, Text: &text}}}
		data, err := json.MarshalIndent(&rf, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "001.json")
		if err := os.WriteFile(p, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		var want RoundFile
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatal(err)
		}
		want.Entries = nil
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		_, lines, err := readHeaderLines(f, "entries")
		f.Close()
		if err != nil || lines != c.lines {
			t.Errorf("%s: read a line at a time: %v (%v), want %v", c.name, lines, err, c.lines)
		}
		got, err := readRoundHeader(p)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !reflect.DeepEqual(got, &want) {
			t.Errorf("%s: the header read differs from encoding/json's", c.name)
		}
	}
}
