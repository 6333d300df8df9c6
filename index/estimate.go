package index

import (
	"context"
	"database/sql"
	"errors"
	"math"
)

// estimates are how often each phrase of a search of two or more is
// found, and so its idf (FTS5 counts every match for bm25, which at a
// million rounds takes a second). In an index of several connections (the
// store's) another connection makes them while the search reads its
// candidates: they are only needed to rank what it read, and a search
// then waits for them on the second processor, not on its own. That they
// may be of a moment other than the search's is of no consequence: they
// are estimates.
type estimates struct {
	idf  []float64 // 1 until made (and made 1 with fewer than two phrases)
	hits []float64 // in how many rounds each phrase is
	// parts are the phrases' matches, given once (give); a nil channel
	// makes them on the search's connection when given. done is closed
	// when they are made, or will not be; err is why not.
	parts chan []string
	done  chan struct{}
	err   error
	given bool
	s     *searcher
}

// estimate begins the estimates of a search of np phrases: on a connection
// of their own, which opens and reads how many rounds there are while the
// search finds its phrases' matches.
func (s *searcher) estimate(np int) *estimates {
	e := &estimates{idf: make([]float64, np), hits: make([]float64, np), s: s}
	for i := range e.idf {
		e.idf[i] = 1
	}
	if np < 2 || !s.x.shared {
		return e // none to make, or made on the search's connection (give)
	}
	e.parts, e.done = make(chan []string, 1), make(chan struct{})
	go func() {
		defer close(e.done)
		tx, err := s.x.db.BeginTx(s.ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			e.err = err
			return
		}
		defer tx.Rollback()
		sam, err := s.sample(tx)
		if err != nil {
			e.err = err
			return
		}
		if parts, ok := <-e.parts; ok {
			e.err = e.make(tx, sam, parts)
		}
	}()
	return e
}

// give hands the estimates the matches of the phrases, in order (an empty
// one cannot match): they are made now on the search's connection, or by
// the one making them.
func (e *estimates) give(parts []string) error {
	if e.given || len(e.idf) < 2 {
		return nil
	}
	e.given = true
	if e.parts != nil {
		e.parts <- parts
		close(e.parts)
		return nil
	}
	sam, err := e.s.sample(e.s.tx)
	if err != nil {
		return err
	}
	return e.make(e.s.tx, sam, parts)
}

// wait waits for the estimates, and returns why they could not be made.
func (e *estimates) wait() error {
	if e.done != nil {
		<-e.done
	}
	return e.err
}

// stop ends the estimates, made or not, once the search is done with
// them: the connection making them is then back in the pool.
func (e *estimates) stop() error {
	if e.parts != nil && !e.given {
		e.given = true
		close(e.parts)
	}
	return e.wait()
}

// idfSample is where the estimates are made from: the rounds from rowid
// since, sample of n.
type idfSample struct {
	n, sample float64
	since     int64
}

// sample returns where the estimates are made from: the newest
// idfRounds rounds, or every round.
func (s *searcher) sample(tx *sql.Tx) (idfSample, error) {
	n, _, err := averages(s.ctx, tx)
	if err != nil {
		return idfSample{}, err
	}
	sam := idfSample{n: float64(n), sample: float64(n), since: math.MinInt64}
	err = tx.QueryRowContext(s.ctx, `SELECT id FROM text_fts_docsize ORDER BY id DESC LIMIT 1 OFFSET ?`, idfRounds-1).Scan(&sam.since)
	switch {
	case err == nil:
		sam.sample = idfRounds
	case !errors.Is(err, sql.ErrNoRows):
		return idfSample{}, err
	}
	return sam, nil
}

// make makes the estimates of the phrases whose matches are parts, in tx.
func (e *estimates) make(tx *sql.Tx, sam idfSample, parts []string) error {
	if sam.n == 0 {
		return nil
	}
	for i, m := range parts {
		var share float64
		if m != "" {
			var err error
			if share, err = e.s.share(tx, e.s.within(m), sam); err != nil {
				return err
			}
		}
		hits := share * sam.n
		e.hits[i] = hits
		e.idf[i] = math.Log((sam.n - hits + 0.5) / (hits + 0.5))
		if e.idf[i] <= 0 {
			e.idf[i] = 1e-6 // as FTS5's
		}
	}
	return nil
}

// share returns the share of the sample's rounds that match m in
// text_fts, counted: reading every match of a common word in the sample
// costs 1-3 ms, but on the estimates' own connection, not the search's;
// and an estimate from fewer of them, which read a stretch of the sample,
// was far off for a word found in a few sessions only, as words are.
func (s *searcher) share(tx *sql.Tx, m string, sam idfSample) (float64, error) {
	var c int64
	if err := tx.QueryRowContext(s.ctx, `SELECT count(*) FROM text_fts WHERE text_fts MATCH ? AND rowid >= ?`, m, sam.since).Scan(&c); err != nil {
		return 0, err
	}
	return float64(c) / sam.sample, nil
}

// averages returns how many rounds text_fts has and the tokens of each of
// its columns: FTS5's "averages" record, varints.
func averages(ctx context.Context, tx *sql.Tx) (n uint64, cols [nCols]uint64, err error) {
	var avg []byte
	err = tx.QueryRowContext(ctx, `SELECT block FROM text_fts_data WHERE id = 1`).Scan(&avg)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, cols, err
	}
	n, k := varint(avg)
	for col := range cols {
		t, m := varint(avg[k:])
		cols[col], k = t, k+m
	}
	return n, cols, nil
}
