package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
)

// TestSearchScan: a prefix of one character is found by reading the
// newest rounds where most rounds have a word it starts (asking FTS5 about
// the few that have letters it may fold), and as FTS5 finds it where few
// do, or where many of those that do not have such letters; either way it
// finds what FTS5 finds.
func TestSearchScan(t *testing.T) {
	c := newCorpus(t)
	for s := 0; s < 3; s++ {
		id := fmt.Sprintf("s%d", s)
		text := func(i int) string {
			switch {
			case i%5 == 0:
				return "other words"
			case i%97 == 0:
				return "quiet über" // FTS5 folds ü: a word "u*" starts
			case i > 300:
				return "data Élan élan señor under" // the newest: many a word "e*" starts only folded
			}
			return "data Deploy elan under"
		}
		c.put(t, Session{SessionID: id, AgentID: "claude", Doc: "x/" + id + ".md"}, numbered(id, s*120, 120, text))
	}
	ctx := context.Background()
	// Which way each is found: the scan, or FTS5 (errScan).
	for text, scan := range map[string]bool{"d*": true, "D*": true, "u*": true, "o*": false, "q*": false, "e*": false, "s*": false, "w*": false} {
		tx, err := c.db.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		q := Query{Text: text}
		_, phrases, err := parseQuery(q)
		if err != nil {
			t.Fatal(err)
		}
		s := &searcher{ctx: ctx, tx: tx, x: c.db, in: Prompts | Replies | Tools, oldestFirst: true}
		s.lo, s.hi = -1<<63, 1<<63-1
		src, ok, err := s.phraseSource(q, phrases, []string{""}, nil)
		if err != nil || !ok || src.table != "" {
			t.Fatalf("%s: source %+v, %v, %v", text, src, ok, err)
		}
		m, _, err := s.phraseMatch(phrases[0])
		if err != nil {
			t.Fatal(err)
		}
		sc, err := s.scorer(q, phrases, []string{m}, s.estimate(1))
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.verified(src, s.within(m), rankWindow, sc)
		if got := err == nil; got != scan || err != nil && !errors.Is(err, errScan) {
			t.Errorf("%s: scanned %v (%v), want %v", text, got, err, scan)
		}
		s.close()
		tx.Rollback()
	}
	for _, text := range []string{"d*", "D*", "u*", "o*", "q*", "e*", "s*", "w*", "z*"} {
		for _, limit := range []int{20, 1000} {
			got, err := c.db.Search(ctx, Query{Text: text, Limit: limit})
			if err != nil {
				t.Fatal(err)
			}
			want, err := c.db.Search(ctx, Query{Text: text, Raw: true, Limit: 1000})
			if err != nil {
				t.Fatal(err)
			}
			g, w := found(got), found(want)
			if limit == 1000 && !reflect.DeepEqual(g, w) {
				t.Errorf("%s: %v, want %v (FTS5's)", text, g, w)
			}
			for _, h := range g {
				if !slices.Contains(w, h) {
					t.Errorf("%s, limit %d: %s does not match", text, limit, h)
				}
			}
		}
	}
}
