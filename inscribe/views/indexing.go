package views

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/scribe-archive/scribe/index"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/inscribe/document"
	"github.com/scribe-archive/scribe/internal/atomicfile"
	"github.com/scribe-archive/scribe/session"
)

// What search indexes of a round's text: the first indexedPartMax bytes of
// each text (the prompt, a reply, a tool's input) and the first
// indexedRoundMax bytes of the round. FTS5 holds a row's terms in memory
// until the row is written, about seven times its text (a 105 MB prompt
// cost 1 GB), and cannot write a row in parts; the caps bound that at about
// 30 MB whatever the round. Only a pasted prompt reaches them in practice:
// what the model writes is bounded by its output limit. Like GitHub's code
// search (files over 384 KiB) or Lucene's LimitTokenCountAnalyzer, words
// past them are not found. Of a tool's result, the index holds the start
// and the end of each text (inscribe.ResultText).
const (
	indexedPartMax  = 1 << 20
	indexedRoundMax = 4 << 20
)

// roundRow derives a round's index row from its round file's fields; the
// caller sets the row's round file and engagement.
func roundRow(key string, rf *inscribe.RoundFile) index.Row {
	row := index.Row{SessionID: key, Round: rf.Round, Started: rf.Started, TokenCount: rf.TokenCount}
	// The texts are joined once, at their size, and not copied at all when
	// there is one that needs no cut.
	var prompt, reply, tools indexedText
	size := 0 // of the round's texts, all three
	prompt.size, reply.size, tools.size = &size, &size, &size
	var agentText []string
	if rf.User != nil {
		row.UserPreview = document.Preview(rf.User.Text)
		prompt.add(rf.User.Text)
	}
	for _, b := range rf.Agent {
		switch b.Type {
		case "text":
			if b.Text != "" {
				agentText = append(agentText, b.Text)
			}
			reply.add(b.Text)
		case "thinking":
			row.ThinkingCount++
			row.ThinkingChars += len([]rune(b.Text))
			reply.add(b.Text)
		case "tool_use":
			row.ToolCount++
			tools.add(b.Name + "\n" + jsonText(b.Input))
			if b.Result != nil {
				tools.add(resultText(b.Result))
			}
		}
	}
	row.AgentPreview = document.Preview(strings.Join(agentText, "\n"))
	row.Prompt, row.Reply, row.Tools = prompt.String(), reply.String(), tools.String()
	return row
}

// resultText is the text of a tool's result that search indexes: its text
// parts and the values of its raw ones (jsonText), each as the store keeps
// it for the index (inscribe.ResultText: the start and end of a long one).
func resultText(r *inscribe.RoundResult) string {
	var parts []string
	for _, c := range r.Content {
		switch c.Type {
		case "text":
			parts = append(parts, inscribe.ResultText(c.Text))
		case "raw":
			parts = append(parts, inscribe.ResultText(jsonText(json.RawMessage(c.Text))))
		}
	}
	return strings.Join(parts, "\n")
}

// indexedText is the parts of one of a round's texts search indexes, each
// cut to what the caps leave (indexedPartMax, indexedRoundMax: size is
// the round's, shared by its texts).
type indexedText struct {
	parts []string
	size  *int // of the round's parts joined
}

func (t *indexedText) add(s string) {
	if s == "" {
		return
	}
	sep := min(len(t.parts), 1) // the newline that joins it
	limit := min(indexedPartMax, indexedRoundMax-*t.size-sep)
	if limit <= 0 {
		return
	}
	if len(s) > limit {
		// A copy: the cut must not keep the whole text alive.
		if s = strings.Clone(inscribe.CutText(s, limit)); s == "" {
			return
		}
	}
	t.parts = append(t.parts, s)
	*t.size += sep + len(s)
}

func (t *indexedText) String() string { return strings.Join(t.parts, "\n") }

// jsonText is the text of a tool's input (or a raw block) as a person
// reads it: its strings and numbers, one a line, in order, without their
// keys and without JSON's escapes; raw itself when it is not JSON.
func jsonText(raw json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var lines []string
	type frame struct{ object, wantKey bool }
	var stack []frame
	for {
		t, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return string(raw)
		}
		var top *frame
		if len(stack) > 0 {
			top = &stack[len(stack)-1]
		}
		if d, ok := t.(json.Delim); ok {
			switch d {
			case '{', '[':
				if top != nil && top.object {
					top.wantKey = true // after this value, a key
				}
				stack = append(stack, frame{object: d == '{', wantKey: d == '{'})
			default:
				stack = stack[:len(stack)-1]
			}
			continue
		}
		if top != nil && top.object && top.wantKey {
			top.wantKey = false // a key: its value comes next
			continue
		}
		switch v := t.(type) {
		case string:
			if v != "" {
				lines = append(lines, v)
			}
		case json.Number:
			lines = append(lines, v.String())
		}
		if top != nil && top.object {
			top.wantKey = true
		}
	}
	return strings.Join(lines, "\n")
}

// storeIndex returns the store's index, opened once per Views. One that
// was written by another version of scribe, or damaged, is rebuilt with
// every document's index from the round files, with a warning.
func (s *Views) storeIndex() (*index.DB, []error, error) {
	s.idxMu.Lock()
	if s.idx != nil {
		defer s.idxMu.Unlock()
		return s.idx, nil, nil
	}
	p := s.IndexPath()
	if err := atomicfile.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		s.idxMu.Unlock()
		return nil, nil, err
	}
	db, err := s.openIndex(p)
	var se *index.StaleError
	if !errors.As(err, &se) {
		if err == nil {
			s.idx = db
		}
		s.idxMu.Unlock()
		return db, nil, err
	}
	warnings := []error{fmt.Errorf("%v: rebuilding every index from the round files", err)}
	if se.Damaged {
		if to, err := setAside(p); err == nil && to != "" {
			warnings = []error{fmt.Errorf("%v: set aside as %s; rebuilding every index from the round files", se, filepath.Base(to))}
		}
	}
	removeDB(p)
	docs, err := s.allDocs()
	if err != nil {
		s.idxMu.Unlock()
		return nil, warnings, err
	}
	for _, d := range docs {
		// What only a document's index still holds is kept before it goes.
		warnings = append(warnings, s.keepIndexedTags(d)...)
		removeDB(d.IndexPath())
	}
	if db, err = s.openIndex(p); err != nil {
		s.idxMu.Unlock()
		return nil, warnings, err
	}
	s.idx = db
	s.idxMu.Unlock()
	for _, d := range docs {
		ws, err := s.IndexDoc(d, true)
		warnings = append(warnings, ws...)
		if err != nil {
			return nil, warnings, err
		}
	}
	return db, warnings, nil
}

// openIndex opens the store's index at p.
func (s *Views) openIndex(p string) (*index.DB, error) {
	if s.Brief {
		return index.OpenBrief(p, s.wait())
	}
	return index.OpenWait(p, s.wait())
}

// CloseIndex closes the store's index, if open.
func (s *Views) CloseIndex() error {
	s.idxMu.Lock()
	defer s.idxMu.Unlock()
	for _, db := range s.damaged {
		db.Close()
	}
	s.damaged = nil
	if s.idx == nil {
		return nil
	}
	err := s.idx.Close()
	s.idx = nil
	return err
}

// allDocs lists every document in the store, sidechains included, in
// order (inscribe.Store.Walk).
func (s *Views) allDocs() ([]*inscribe.Doc, error) {
	var out []*inscribe.Doc
	err := s.Walk(func(d *inscribe.Doc) error {
		out = append(out, d)
		return nil
	})
	return out, err
}

// docRows reads a document's round files from round `from` on and derives
// their index rows.
func (s *Views) docRows(d *inscribe.Doc, key string, from int, written *inscribe.Written) ([]index.Row, error) {
	tags, err := d.Tags()
	if err != nil {
		return nil, err
	}
	ns, err := d.RoundsFrom(from)
	if err != nil {
		return nil, err
	}
	return roundRows(d, key, ns, tags, written.Take)
}

// roundRuns are a document's round numbers, in order, as runs of
// consecutive numbers: the rounds of a sound document are one run, where
// an []int of the 500,000 rounds of a session of a million tiny lines held
// 4 MB for as long as the document was indexed (issue 33).
type roundRuns []roundRun

type roundRun struct{ first, n int }

// roundsFrom lists d's rounds from round from on (Doc.RoundsFrom).
func roundsFrom(d *inscribe.Doc, from int) (roundRuns, error) {
	ns, err := d.RoundsFrom(from)
	return runsOf(ns), err
}

// runsOf returns the runs of ns, round numbers in order.
func runsOf(ns []int) roundRuns {
	var rs roundRuns
	for _, n := range ns {
		if k := len(rs) - 1; k >= 0 && rs[k].first+rs[k].n == n {
			rs[k].n++
		} else {
			rs = append(rs, roundRun{n, 1})
		}
	}
	return rs
}

// len returns the number of rounds.
func (rs roundRuns) len() int {
	n := 0
	for _, r := range rs {
		n += r.n
	}
	return n
}

// slice returns the numbers of the rounds i to j-1 (j past the end: to
// the end).
func (rs roundRuns) slice(i, j int) []int {
	var ns []int
	for _, r := range rs {
		for k := max(i, 0); k < min(j, r.n); k++ {
			ns = append(ns, r.first+k)
		}
		i, j = i-r.n, j-r.n
	}
	return ns
}

// from returns the rounds numbered n and after.
func (rs roundRuns) from(n int) roundRuns {
	var out roundRuns
	for _, r := range rs {
		switch {
		case r.first >= n:
			out = append(out, r)
		case r.first+r.n > n:
			out = append(out, roundRun{n, r.first + r.n - n})
		}
	}
	return out
}

// roundRows derives the index rows of a document's rounds ns, tagged as
// tags says.
//
// written gives the headers of rounds an update just wrote (Written.Take,
// or Peek): those rounds are not read back.
func roundRows(d *inscribe.Doc, key string, ns []int, tags map[int]string, written func(int) (*inscribe.RoundFile, bool)) ([]index.Row, error) {
	rows := make([]index.Row, 0, len(ns))
	for _, n := range ns {
		rf, ok := written(n)
		if !ok {
			var err error
			if rf, err = d.RoundHeader(n); err != nil {
				return nil, err
			}
		}
		row := roundRow(key, rf)
		row.RoundFile = d.RoundRel(n)
		if t, ok := tags[n]; ok {
			row.EngagementID = &t
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// rowsChunk is how many rounds' rows indexing holds at once: the rounds of
// a document are indexed a chunk at a time, in one transaction per index,
// so that a session of a million tiny lines (500,000 rounds) is not held
// whole, texts included (bench/README.md, issue 33).
var rowsChunk = 1024 // a variable for tests

func (s *Views) sessionRow(d *inscribe.Doc, m *session.Meta, summary string, seen int64) index.Session {
	return index.Session{SessionID: document.Key(m), AgentID: m.AgentID, Title: document.DisplayTitle(m, summary), Project: strOr(m.Project, ""),
		Started: strOr(m.Started, ""), Ended: strOr(m.Ended, ""), Doc: d.Rel(), Seen: seen}
}

// IndexDoc brings a document's indexes up to date: its session.db, its
// rounds table (index.md in its folder) and the store's sessions.db. It
// indexes only the rounds the indexes lack, and the last one (which may
// have been open), so an append of one round touches one or two rows.
// all forces every round to be indexed again.
func (s *Views) IndexDoc(d *inscribe.Doc, all bool) ([]error, error) {
	m, err := d.Meta()
	if err != nil {
		return nil, err
	}
	seen, err := d.Seen()
	if err != nil {
		return nil, err
	}
	return s.indexDoc(d, document.Key(m), seen, all, nil)
}

// indexDoc is IndexDoc for a document whose key and read position the
// caller knows: when its indexes are current, it reads nothing else. A
// database found damaged on the way is set aside and rebuilt
// (recoverIndex).
func (s *Views) indexDoc(d *inscribe.Doc, key string, seen int64, all bool, written *inscribe.Written) ([]error, error) {
	warnings, err := s.indexDocInto(nil, d, key, seen, all, written)
	for try := 0; err != nil && try < 2; try++ {
		ws, retry := s.recoverIndex(err)
		warnings = append(warnings, ws...)
		if !retry {
			break
		}
		var more []error
		more, err = s.indexDocInto(nil, d, key, seen, true, nil)
		warnings = append(warnings, more...)
	}
	return warnings, err
}

// indexDocInto is indexDoc, once, writing the store's index in batch (nil:
// a transaction of its own). A batch rebuilds: every round is indexed.
func (s *Views) indexDocInto(batch *index.Batch, d *inscribe.Doc, key string, seen int64, all bool, written *inscribe.Written) ([]error, error) {
	ctx := context.Background()
	sdb, warnings, err := s.storeIndex()
	if err != nil {
		return warnings, err
	}
	local := d.IndexPath()
	_, localErr := os.Stat(local)
	if errors.Is(localErr, fs.ErrNotExist) {
		// Its folder among the machine's own state may not be there yet
		// (a clone of the store).
		if err := atomicfile.MkdirAll(filepath.Dir(local), 0o700); err != nil {
			return warnings, err
		}
	}
	mark := index.Mark{Doc: d.Rel(), Seen: seen}
	var indexed index.Mark
	known := false
	if batch == nil {
		if !all && localErr == nil && s.markedCurrent(ctx, sdb, key, mark) {
			return warnings, nil // current
		}
		if indexed.Doc, indexed.Seen, known, err = sdb.SessionSeen(ctx, key); err != nil {
			return warnings, err
		}
	} else {
		all = true
	}
	if !all && known && indexed == mark && localErr == nil {
		return warnings, nil // current
	}
	od, err := d.Head()
	if err != nil {
		return warnings, err
	}
	m := od.Meta
	row := s.sessionRow(d, m, od.Summary, seen)
	from := 1
	if known && !all {
		if from, err = sdb.MaxRound(ctx, key); err != nil {
			return warnings, err
		}
		from = max(from, 1)
	}
	// The document's own index. A new one of a document of few rounds is
	// built in memory, from every round (index.CreateScratch).
	var ns roundRuns // the rounds to index
	var ldb *index.DB
	// ns holds every round: of a document without an index, or of one
	// a rebuild (a batch) replaces whole. A rebuild's new index takes the
	// old one's place only once written, so that one killed halfway leaves
	// the old index as it was, never an empty one.
	whole := errors.Is(localErr, fs.ErrNotExist) || batch != nil
	if whole {
		if ns, err = roundsFrom(d, 1); err != nil {
			return warnings, err
		}
		switch {
		case ns.len() <= inMemoryRounds:
			ldb, err = index.CreateScratch(local)
		case batch != nil:
			ldb, err = index.ReplaceScratch(local, s.wait())
		}
	}
	if ldb == nil && err == nil {
		ldb, err = index.OpenScratchWait(local, s.wait())
	}
	var se *index.StaleError
	if errors.As(err, &se) {
		w := fmt.Errorf("%v: rebuilding it from the round files", err)
		if se.Damaged {
			if to, err := setAside(local); err == nil {
				w = damageWarning(se, to)
			}
		}
		warnings = append(warnings, w)
		if err = os.Remove(local); err == nil || errors.Is(err, os.ErrNotExist) {
			ldb, err = index.OpenScratchWait(local, s.wait())
		}
		from = 1
	}
	if err != nil {
		return warnings, err
	}
	closed := false
	defer func() {
		if !closed {
			ldb.Close()
		}
	}()
	localFrom := from
	if whole {
		localFrom = 1
	} else {
		if n, err := ldb.MaxRound(ctx, key); err == nil && n < localFrom {
			localFrom = max(n, 1)
		}
		if ns, err = roundsFrom(d, min(from, localFrom)); err != nil {
			return warnings, err
		}
	}
	tags, err := d.Tags()
	if err != nil {
		return warnings, err
	}
	// The rows go to the document's index, then to the store's, a chunk
	// at a time (rowsChunk), each index's in one transaction. The rounds
	// are read once for each (their headers: Written.Peek, then Take), not
	// once for both: SQLite's writers of the two, taking turns a chunk at
	// a time, share one page cache, and read the document's index's pages
	// again and again (430,000 page reads for 100,000 tiny lines where
	// 90,000 were). The rows of one chunk, all there are, are kept for the
	// store's.
	lb, err := ldb.Begin(ctx)
	if err != nil {
		return warnings, err
	}
	defer lb.Rollback()
	total := ns.len()
	single := total <= rowsChunk
	var storeRows []index.Row // when single
	for i := 0; i == 0 || i < total; i += rowsChunk {
		get := written.Peek
		if single {
			get = written.Take
		}
		rows, err := roundRows(d, key, ns.slice(i, i+rowsChunk), tags, get)
		if err != nil {
			return warnings, err
		}
		own := make([]index.Row, len(rows))
		for i, r := range rows {
			r.Prompt, r.Reply, r.Tools = "", "", "" // the text is searched in the store's index; the document's keeps Method 53's columns
			own[i] = r
		}
		if err := putChunk(ctx, lb, i, row, own); err != nil {
			return warnings, err
		}
		if single {
			storeRows = slices.DeleteFunc(rows, func(r index.Row) bool { return r.Round < from })
		}
	}
	if err := lb.Commit(); err != nil {
		return warnings, err
	}
	tableFrom := min(from, localFrom)
	if all {
		tableFrom = 1
	}
	err = writeRoundsIndex(ctx, ldb, key, d, row.Title, tableFrom)
	closed = true
	if cerr := ldb.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return warnings, err
	}
	// The store's index, last: once it is current, so is everything else.
	// Its rows are those of the rounds from `from` on: in the rebuild's
	// batch; else, of one chunk, in one put with the documents that queue
	// for the store's writer meanwhile (putStore); else in a transaction
	// of this document's own, which the process's other writers wait for.
	switch {
	case single && batch != nil:
		return warnings, batch.Put(ctx, row, storeRows)
	case single:
		return warnings, s.putStore(ctx, sdb, row, storeRows)
	}
	store := batch
	if store == nil {
		s.putMu.Lock()
		defer s.putMu.Unlock()
		start := time.Now()
		defer func() { s.serial += time.Since(start) }()
		if store, err = sdb.Begin(ctx); err != nil {
			return warnings, err
		}
		defer store.Rollback()
	}
	ns = ns.from(from)
	for i, total := 0, ns.len(); i == 0 || i < total; i += rowsChunk {
		rows, err := roundRows(d, key, ns.slice(i, i+rowsChunk), tags, written.Take)
		if err != nil {
			return warnings, err
		}
		if err := putChunk(ctx, store, i, row, rows); err != nil {
			return warnings, err
		}
	}
	if batch != nil {
		return warnings, nil
	}
	return warnings, store.Commit()
}

// putChunk puts the rows of a chunk of a document's rounds in a batch, the
// document's own row with the first (at is the chunk's first round's
// index): once is enough (index.Batch.PutRounds).
func putChunk(ctx context.Context, b *index.Batch, at int, session index.Session, rows []index.Row) error {
	if at == 0 {
		return b.Put(ctx, session, rows)
	}
	return b.PutRounds(ctx, rows)
}

// inMemoryRounds is how many rounds a document may have for its new index
// to be built in memory (index.CreateScratch). Built so, an index costs
// about 8 KB of memory a round (the long sample's 378 rounds raised its
// inscription's peak by 2.8 MB), so half a megabyte at most here; nine
// documents in ten of a300 have no more (their median: 12 rounds).
var inMemoryRounds = 64 // a variable for tests

// A storePut is one document's rows for the store's index, queued for its
// one writer (putStore).
type storePut struct {
	sdb     *index.DB
	session index.Session
	rows    []index.Row
	done    bool // written (or failed), under putMu
	err     error
}

// putStore writes a document's rows to the store's index. The index has
// one writer at a time; the documents that queue for it while it writes
// are written next, all in one transaction, by whichever of their
// updates takes the writer first. So the more workers wait for the
// writer, the less each one costs it (one commit, and one flush of the
// full-text tables, for all), and the writer does not cap how far more
// cores speed an inscription up. A transaction that fails writes its
// documents again one by one, so that each gets its own error (unless
// another process held the index too long: they would wait again).
func (s *Views) putStore(ctx context.Context, sdb *index.DB, session index.Session, rows []index.Row) error {
	p := &storePut{sdb: sdb, session: session, rows: rows}
	s.queueMu.Lock()
	s.queue = append(s.queue, p)
	s.queueMu.Unlock()

	s.putMu.Lock()
	defer s.putMu.Unlock()
	if p.done {
		return p.err
	}
	start := time.Now()
	defer func() { s.serial += time.Since(start) }()
	var group []*storePut
	s.queueMu.Lock()
	rest := s.queue[:0]
	for _, q := range s.queue {
		if q.sdb == sdb {
			group = append(group, q)
		} else {
			rest = append(rest, q) // another handle (this one was set aside): its own writer's
		}
	}
	s.queue = rest
	s.queueMu.Unlock()
	err := putAll(ctx, sdb, group)
	alone := err != nil && len(group) > 1 && !index.IsBusy(err) // busy: each would wait again
	for _, q := range group {
		if alone {
			q.err = sdb.Put(ctx, q.session, q.rows)
		} else {
			q.err = err
		}
		q.done = true
	}
	return p.err
}

// putAll writes the documents of a group in one transaction.
func putAll(ctx context.Context, sdb *index.DB, group []*storePut) error {
	if len(group) == 1 {
		return sdb.Put(ctx, group[0].session, group[0].rows)
	}
	b, err := sdb.Begin(ctx)
	if err != nil {
		return err
	}
	defer b.Rollback()
	for _, q := range group {
		if err := b.Put(ctx, q.session, q.rows); err != nil {
			return err
		}
	}
	return b.Commit()
}

// writeRoundsIndex writes a document's table of rounds (Method 53's
// index.md) from its index, where rounds before round `from` are known to
// be listed already. An append therefore rewrites the last row or two and
// copies the rest of the file as it is, without reading it.
func writeRoundsIndex(ctx context.Context, ldb *index.DB, key string, d *inscribe.Doc, title string, from int) error {
	doc := d.RoundsTableLink()
	head := roundsTableHead(title, doc)
	if from > 1 {
		rows, err := ldb.Rounds(ctx, key, from)
		if err != nil {
			return err
		}
		if len(rows) > 0 {
			var buf bytes.Buffer
			for _, r := range rows {
				writeRoundRow(&buf, doc, r)
			}
			done, err := d.SpliceRoundsTable(head, tableRule, roundRowPrefix(doc, from), buf.Bytes())
			if done || err != nil {
				return err
			}
		}
	}
	n, err := ldb.MaxRound(ctx, key)
	if err != nil {
		return err
	}
	if n <= rowsChunk {
		var buf bytes.Buffer
		if err := writeRoundsTable(ctx, &buf, ldb, key, doc, title); err != nil {
			return err
		}
		return d.WriteRoundsTable(buf.Bytes())
	}
	return d.WriteRoundsTableFrom(func(w io.Writer) error { return writeRoundsTable(ctx, w, ldb, key, doc, title) })
}

// writeRoundsTable writes a document's whole table of rounds, from its
// index, a chunk of rows at a time (rowsChunk).
func writeRoundsTable(ctx context.Context, w io.Writer, ldb *index.DB, key, doc, title string) error {
	head := roundsTableHead(title, doc)
	last, err := ldb.MaxRound(ctx, key)
	if err != nil {
		return err
	}
	if last == 0 {
		head = head[:bytes.Index(head, []byte("| round |"))]
		head = append(head, "No rounds.\n"...)
	}
	if _, err := w.Write(head); err != nil {
		return err
	}
	var buf bytes.Buffer
	for from := 1; from <= last; from += rowsChunk {
		rows, err := ldb.RoundsBetween(ctx, key, from, from+rowsChunk-1)
		if err != nil {
			return err
		}
		buf.Reset()
		for _, r := range rows {
			writeRoundRow(&buf, doc, r)
		}
		if _, err := w.Write(buf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

// tableRule ends the head of a rounds table.
const tableRule = "| --- | --- | --- | --- | --- | --- | --- | --- |\n"

func roundsTableHead(title, doc string) []byte {
	return fmt.Appendf(nil, "# Rounds of %s\n\n[The document](%s)\n\n"+
		"| round | timestamp | engagement | user_preview | agent_preview | tools | thinking | tokens |\n"+tableRule,
		document.EscapeInline(title), doc)
}

// roundRowPrefix is how round n's row starts.
func roundRowPrefix(doc string, n int) []byte {
	return fmt.Appendf(nil, "| [%d](%s#%s) |", n, doc, document.RoundAnchor(n))
}

func writeRoundRow(buf *bytes.Buffer, doc string, r index.Row) {
	eng := ""
	if r.EngagementID != nil {
		eng = *r.EngagementID
	}
	buf.Write(roundRowPrefix(doc, r.Round))
	fmt.Fprintf(buf, " %s | %s | %s | %s | %d | %d | %d |\n",
		cell(r.Started), cell(document.EscapeInline(eng)), cell(document.EscapeInline(r.UserPreview)), cell(document.EscapeInline(r.AgentPreview)),
		r.ToolCount, r.ThinkingCount, r.TokenCount)
}

// removeDB deletes a database with its write-ahead log.
func removeDB(p string) {
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(p + suffix)
	}
}

// Reindex rebuilds every index of the store from the round files and the
// durable engagement tags: each document's session.db and index.md, and
// the store's sessions.db.
func (s *Views) Reindex() ([]error, error) {
	warnings, err := s.reindexOnce()
	if ws, retry := s.recoverIndex(err); retry {
		// The store's index was damaged: set aside; build it anew.
		warnings = append(warnings, ws...)
		var more []error
		more, err = s.reindexOnce()
		warnings = append(warnings, more...)
	}
	return warnings, err
}

func (s *Views) reindexOnce() ([]error, error) {
	ctx := context.Background()
	docs, err := s.allDocs()
	if err != nil {
		return nil, err
	}
	sdb, warnings, err := s.storeIndex()
	if err != nil {
		return warnings, err
	}
	// The store's index is rebuilt in one transaction: a search meanwhile
	// reads the index as it was, and never waits (write-ahead log). The
	// documents' own indexes, which no search reads, are rebuilt one by one.
	batch, err := sdb.Begin(ctx)
	if err != nil {
		return warnings, err
	}
	defer batch.Rollback()
	if err := batch.Clear(ctx); err != nil {
		return warnings, err
	}
	var damaged []error
	for _, d := range docs {
		m, err := d.Meta()
		if err != nil {
			return warnings, err
		}
		seen, err := d.Seen()
		if err != nil {
			return warnings, err
		}
		warnings = append(warnings, s.keepIndexedTags(d)...)
		ws, err := s.indexDocInto(batch, d, document.Key(m), seen, true, nil)
		warnings = append(warnings, ws...)
		if err != nil {
			return warnings, err
		}
		// A round file lost is a round missing from search: say so.
		if err := d.Check(); err != nil {
			damaged = append(damaged, err)
		}
	}
	if err := batch.Commit(); err != nil {
		return warnings, err
	}
	// The rows deleted leave their text in free pages until reused: a
	// reindex (which forget runs) leaves none.
	if err := sdb.Compact(ctx); err != nil {
		return warnings, err
	}
	return warnings, errors.Join(damaged...)
}

// EnsureIndex makes sure the store's index covers every document before it
// is searched: a document it lacks (an index deleted, or a run stopped
// before indexing) is indexed now, so a search is never silently short.
//
// Listing every document costs a directory read per session. So when all
// are found indexed, the index records how the agents' folders looked
// before they were listed (a folderStamp each): while they look the same,
// no document was added or removed, and nothing is listed. A folder that
// was modified (every update of a document renames it into place) is read,
// one directory read, and if it has the same names, its documents are
// those it had.
func (s *Views) EnsureIndex() ([]error, error) { return s.ensureIndex(false) }

// EnsureSearchable is EnsureIndex before a search, which never waits for
// another scribe. When another holds the store's index to write it (a
// reindex rebuilds it in one transaction; a bulk inscribe writes it over
// and over), it is left as it is: the search reads it as it was, or as the
// other made it once done. A document another scribe holds the lock of is
// left to it (it indexes the document before it lets go). What is left so,
// the next search looks at again.
func (s *Views) EnsureSearchable() ([]error, error) { return s.ensureIndex(true) }

func (s *Views) ensureIndex(search bool) ([]error, error) {
	now, err := s.FolderStamps()
	if err != nil {
		return nil, err
	}
	sdb, warnings, err := s.storeIndex()
	if err != nil {
		return warnings, err
	}
	ctx := context.Background()
	if search {
		if busy, err := sdb.WriterActive(ctx); busy || index.IsBusy(err) {
			return warnings, nil
		}
	}
	recorded, err := sdb.FoldersStamp(ctx)
	if err == nil {
		var same bool
		if same, err = sameFolders(recorded, now); same || err != nil {
			if err == nil {
				err = s.recordStamps(recorded, now)
			}
			if search && index.IsBusy(err) {
				err = nil // another scribe writes the index: the next search records it
			}
			return warnings, err
		}
	}
	n := 0
	if err == nil {
		n, err = sdb.Sessions(ctx)
	}
	if ws, retry := s.recoverIndex(err); retry {
		warnings = append(warnings, ws...)
		n = -1 // a new index: every document goes in
	} else if err != nil {
		return warnings, err
	}
	for i := range now {
		if now[i].NamesRead() {
			continue // read by sameFolders, or recorded for the time it still has
		}
		if err := now[i].ReadNames(); err != nil {
			return warnings, err
		}
	}
	docs, err := s.allDocs()
	if err != nil {
		return warnings, err
	}
	if n != len(docs) {
		for _, d := range docs {
			if !search {
				ws, err := s.IndexDoc(d, false)
				warnings = append(warnings, ws...)
				if err != nil {
					return warnings, err
				}
				continue
			}
			ws, left, err := s.indexIfFree(d)
			warnings = append(warnings, ws...)
			if index.IsBusy(err) {
				return warnings, nil // another scribe writes the index: the next search goes on
			}
			if err != nil {
				return warnings, err
			}
			if left {
				return warnings, nil // the next search lists them again
			}
		}
	}
	err = s.recordStamps("", now)
	if search && index.IsBusy(err) {
		err = nil
	}
	return warnings, err
}

// indexIfFree is IndexDoc under the document's lock, when no other scribe
// holds it (left: another does, and indexes the document itself).
func (s *Views) indexIfFree(d *inscribe.Doc) (warnings []error, left bool, err error) {
	unlock, err := d.Lock(time.Millisecond)
	var le *inscribe.LockError
	if errors.As(err, &le) {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer unlock()
	warnings, err = s.IndexDoc(d, false)
	return warnings, false, err
}

// stampSettle is how old an agent's folder must be for its stamp to be
// recorded: a change in the same tick of the file system's clock as the
// last before the stamp was taken would leave its modification time as
// it was.
const stampSettle = 2 * time.Second

// sameFolders reports whether the folders now are as recorded: the same
// agents, each modified when it was, or else with the same names (read
// now).
func sameFolders(recorded string, now []inscribe.FolderStamp) (bool, error) {
	lines := strings.Split(strings.TrimSuffix(recorded, "\n"), "\n")
	if recorded == "" || len(lines) != len(now) {
		return recorded == "" && len(now) == 0, nil
	}
	for i := range now {
		name, rest, _ := strings.Cut(lines[i], " ")
		modified, names, _ := strings.Cut(rest, " ")
		if name != now[i].Agent() || names == "0" {
			return false, nil
		}
		if modified == strconv.FormatInt(now[i].Modified.UnixNano(), 10) {
			h, _ := strconv.ParseUint(names, 16, 64)
			now[i].SetNames(h)
			continue
		}
		if err := now[i].ReadNames(); err != nil {
			return false, err
		}
		if fmt.Sprintf("%x", now[i].Names()) != names {
			return false, nil
		}
	}
	return true, nil
}

// recordStamps records the folders' stamps in the store's index, when
// every folder was modified over stampSettle ago; else the next search
// looks again. Stamps the index holds already (recorded) are not written
// again: a search of an unchanged store takes no write lock.
func (s *Views) recordStamps(recorded string, stamps []inscribe.FolderStamp) error {
	var sb strings.Builder
	for _, f := range stamps {
		if time.Since(f.Modified) < stampSettle {
			return nil
		}
		sb.WriteString(f.String() + "\n")
	}
	if sb.String() == recorded {
		return nil
	}
	sdb, _, err := s.storeIndex()
	if err == nil {
		err = sdb.SetFoldersStamp(context.Background(), sb.String())
	}
	if _, retry := s.recoverIndex(err); retry {
		err = nil // set aside: the next search lists the documents again
	}
	return err
}

// Hit is a search hit with where to read it.
type Hit struct {
	index.Hit
	// Path is the document and the round's anchor, relative to the current
	// directory: data/sessions/claude/<id>.md#round-3.
	Path string `json:"path"`
}

// Search searches the store's index (see index.Query).
func (s *Views) Search(q index.Query) ([]Hit, error) {
	sdb, _, err := s.storeIndex()
	if err != nil {
		return nil, err
	}
	hits, err := sdb.Search(context.Background(), q)
	if _, retry := s.recoverIndex(err); retry {
		// Damaged: set aside; a new index is built before searching again.
		if _, err := s.EnsureIndex(); err != nil {
			return nil, err
		}
		if sdb, _, err = s.storeIndex(); err != nil {
			return nil, err
		}
		hits, err = sdb.Search(context.Background(), q)
	}
	if err != nil {
		return nil, err
	}
	out := make([]Hit, len(hits))
	for i, h := range hits {
		out[i] = Hit{Hit: h, Path: filepath.ToSlash(s.PathOf(h.Doc)) + "#" + document.RoundAnchor(h.Round)}
	}
	return out, nil
}
