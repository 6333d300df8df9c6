package index

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// TestEstimates: how many rounds a phrase is in is counted among the
// newest idfRounds rounds; the same whether another connection makes the
// estimates (the store's index) or the search's own (a document's), and
// whether or not they are given the phrases before the search is done
// with them.
func TestEstimates(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	shared, err := Open(filepath.Join(dir, "shared.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer shared.Close()
	scratch, err := OpenScratch(filepath.Join(dir, "scratch.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer scratch.Close()
	const rounds = 2000
	text := func(i int) string {
		text := "filler"
		if i%4 == 0 {
			text += " alpha" // 500 rounds
		}
		if i%200 == 0 {
			text += " beta" // 10 rounds
		}
		return text
	}
	for _, db := range []*DB{shared, scratch} {
		for s := 0; s < rounds/100; s++ {
			id := fmt.Sprintf("s%02d", s)
			if err := db.Put(ctx, Session{SessionID: id, AgentID: "claude", Doc: "x/" + id + ".md"}, numbered(id, s*100, 100, text)); err != nil {
				t.Fatal(err)
			}
		}
	}
	var got [][]float64
	for _, db := range []*DB{shared, scratch} {
		tx, err := db.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		s := &searcher{ctx: ctx, tx: tx, x: db, in: Prompts | Replies | Tools}
		e := s.estimate(3)
		if err := e.give([]string{`"alpha"`, `"beta"`, ""}); err != nil {
			t.Fatal(err)
		}
		if err := e.wait(); err != nil {
			t.Fatal(err)
		}
		if e.hits[0] != 500 || e.hits[1] != 10 || e.hits[2] != 0 {
			t.Errorf("shared %v: hits %v, want 500, 10 and 0", db.shared, e.hits)
		}
		if e.idf[2] != math.Log((rounds+0.5)/0.5) || !(e.idf[1] > e.idf[0]) {
			t.Errorf("shared %v: idf %v", db.shared, e.idf)
		}
		got = append(got, e.hits)
		// Estimates the search never gives its phrases end all the same.
		if err := s.estimate(2).stop(); err != nil {
			t.Fatal(err)
		}
		tx.Rollback()
	}
	if !reflect.DeepEqual(got[0], got[1]) {
		t.Errorf("estimates differ: %v in the shared index, %v in the scratch one", got[0], got[1])
	}
}

// TestEstimatesSample: past idfRounds rounds, a phrase's rounds are
// counted among the newest idfRounds, and scaled to all of them; a word
// found in a few sessions only is counted all the same, wherever they lie
// among those rounds.
func TestEstimatesSample(t *testing.T) {
	ctx := context.Background()
	c := newCorpus(t)
	const rounds = 8400 // more than idfRounds, in sessions of 100
	text := func(i int) string {
		switch {
		case i > rounds-300:
			return "filler alpha" // the newest 300
		case i <= 100:
			return "filler beta" // older than the sample
		case i > 1000 && i <= 1300:
			return "filler gamma" // three sessions, at the sample's oldest
		}
		return "filler"
	}
	for s := 0; s < rounds/100; s++ {
		id := fmt.Sprintf("s%03d", s)
		c.put(t, Session{SessionID: id, AgentID: "claude", Doc: "x/" + id + ".md"}, numbered(id, s*100, 100, text))
	}
	tx, err := c.db.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	s := &searcher{ctx: ctx, tx: tx, x: c.db, in: Prompts | Replies | Tools}
	e := s.estimate(3)
	if err := e.give([]string{`"alpha"`, `"beta"`, `"gamma"`}); err != nil {
		t.Fatal(err)
	}
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	scale := float64(rounds) / idfRounds
	if want := []float64{300 * scale, 0, 300 * scale}; !reflect.DeepEqual(e.hits, want) {
		t.Errorf("hits %v, want %v", e.hits, want)
	}
}

// TestSearchSomeProjects: a project filter of several projects finds the
// rounds of those projects, whether the words have few rounds (whose
// projects are checked) or more than are ranked (FTS5 reads the
// projects' rounds).
func TestSearchSomeProjects(t *testing.T) {
	c := newCorpus(t)
	projects := []string{"/src/app", "/src/lib", "/work/app-two", "/work/other"}
	for s := 0; s < 8; s++ {
		id := fmt.Sprintf("s%d", s)
		text := func(i int) string {
			if i%100 == 50 {
				return "word rare"
			}
			return "word"
		}
		c.put(t, Session{SessionID: id, AgentID: "claude", Project: projects[s%4], Doc: "x/" + id + ".md"}, numbered(id, s*100, 100, text))
	}
	for _, q := range []Query{
		{Text: "rare", Project: "app"},
		{Text: "word", Project: "app", Limit: 1000},
		{Text: "word", Project: "app"},
		{Text: "word", Project: "app", Since: time.Date(2026, 11, 22, 0, 650, 0, 0, time.UTC)},
	} {
		c.checkHits(t, q)
	}
}
