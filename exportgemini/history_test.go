package exportgemini_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/scribe-archive/scribe/index"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/inscribe/views"
	"github.com/scribe-archive/scribe/internal/testkit/storetest"
)

// TestEveryVersionKept: nothing the client ever wrote is lost. For every
// bundled session, the text of every version of every message its file
// ever held (a message written again, a history set anew by a resume, a
// compression, a rewind or a rollback, a tail a $rewindTo dropped) is in
// the document's items, the live branch or its history, and search finds
// it in that session. The judge reads the file its own way: each message
// of each line, as it was written.
func TestEveryVersionKept(t *testing.T) {
	ss, err := adapter.Discover(samples(t))
	if err != nil {
		t.Fatal(err)
	}
	s, err := inscribe.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	v := storetest.Views(s) // the store's indexes kept as it inscribes
	defer v.CloseIndex()
	for _, src := range ss {
		for _, r := range s.Update(src, inscribe.Options{}) {
			if r.Err != nil {
				t.Fatal(r.Err)
			}
		}
		d, ok := s.Find(src.ID)
		if !ok {
			t.Fatalf("%s: no document", src.Path)
		}
		doc, err := storetest.Doc(t, d.Path()).Parse()
		if err != nil {
			t.Fatal(err)
		}
		var held strings.Builder
		for _, it := range doc.Items {
			for _, b := range it.Blocks {
				held.WriteString(b.Text + "\n")
				if b.Result != nil {
					for _, p := range b.Result.Parts {
						held.WriteString(p.Text + "\n")
					}
				}
			}
		}
		n := 0
		for line, texts := range writtenTexts(t, src.Path) {
			for _, text := range texts {
				n++
				if !strings.Contains(held.String(), strings.TrimSpace(text)) {
					t.Errorf("%s:%d: the document does not hold %q", filepath.Base(src.Path), line, text[:min(len(text), 80)])
				}
				// (The context the client injects and a compression's
				// state snapshot are the client's, not the conversation's:
				// the document shows them, the index leaves them out.)
				if q := searchWords(text); q != "" && !clientContext(text) && !found(t, v, q, src.ID) {
					t.Errorf("%s:%d: search %q does not find the session", filepath.Base(src.Path), line, q)
				}
			}
		}
		t.Logf("%s: %d texts written, all in the document", filepath.Base(src.Path), n)
	}
}

// writtenTexts are, by line, the texts of the messages a session file
// writes: their content's texts and their thoughts' descriptions.
func writtenTexts(t *testing.T, path string) map[int][]string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[int][]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for line := 1; sc.Scan(); line++ {
		var rec struct {
			Type     string          `json:"type"`
			Content  json.RawMessage `json:"content"`
			Thoughts []struct {
				Description string `json:"description"`
			} `json:"thoughts"`
			Set *struct {
				Messages []json.RawMessage `json:"messages"`
			} `json:"$set"`
			Messages []json.RawMessage `json:"messages"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) != nil {
			continue // a torn line, which is never inscribed
		}
		msgs := rec.Messages
		if rec.Set != nil {
			msgs = rec.Set.Messages
		}
		if rec.Type != "" {
			msgs = append(msgs, sc.Bytes())
		}
		for _, raw := range msgs {
			var m struct {
				Type     string          `json:"type"`
				Content  json.RawMessage `json:"content"`
				Thoughts []struct {
					Description string `json:"description"`
				} `json:"thoughts"`
			}
			json.Unmarshal(raw, &m)
			if m.Type != "user" && m.Type != "gemini" {
				continue
			}
			var s string
			var parts []part
			if json.Unmarshal(m.Content, &s) == nil {
				parts = append(parts, part{Text: &s})
			} else {
				json.Unmarshal(m.Content, &parts)
			}
			for _, p := range parts {
				if p.Text == nil {
					continue
				}
				text := *p.Text
				if p.Thought {
					// A thought of a history the client rebuilt,
					// "**subject** description": the document shows
					// the description, labelled by its subject.
					if _, after, ok := strings.Cut(strings.TrimPrefix(text, "**"), "** "); ok && strings.HasPrefix(text, "**") {
						text = after
					}
				}
				if strings.TrimSpace(text) != "" {
					out[line] = append(out[line], text)
				}
			}
			for _, th := range m.Thoughts {
				if strings.TrimSpace(th.Description) != "" {
					out[line] = append(out[line], th.Description)
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// part is a part of a message's content, as the judge reads it.
type part struct {
	Text    *string `json:"text"`
	Thought bool    `json:"thought"`
}

// searchWords is a query for a text: its first six words of letters and
// digits, or "" when it has none.
func searchWords(text string) string {
	words := strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	return strings.Join(words[:min(len(words), 6)], " ")
}

// found reports whether a search for q finds a round of session id.
func found(t *testing.T, v *views.Views, q, id string) bool {
	t.Helper()
	hits, err := v.Search(index.Query{Text: q, Agent: "gemini", Limit: 1000})
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	for _, h := range hits {
		if h.SessionID == id {
			return true
		}
	}
	return false
}

// clientContext reports whether a message's text is what the client
// injects: its session context, or a compression's state snapshot.
func clientContext(text string) bool {
	text = strings.TrimSpace(text)
	return strings.HasPrefix(text, "<session_context>") || strings.HasPrefix(text, "<state_snapshot>")
}
