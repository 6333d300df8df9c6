package views

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/scribe-archive/scribe/index"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/inscribe/document"
	"github.com/scribe-archive/scribe/session"
)

// CheckStoreIndex runs SQLite's quick check over the store's index
// (sessions.db), which reads every page: a damaged one is set aside, with
// a warning, and a new one fills as documents are indexed.
func (s *Views) CheckStoreIndex() ([]error, error) {
	sdb, warnings, err := s.storeIndex()
	if err != nil {
		return warnings, err
	}
	err = sdb.QuickCheck(context.Background())
	if ws, retry := s.recoverIndex(err); retry {
		return append(warnings, ws...), nil
	}
	return warnings, err
}

// reindexDoc brings a repaired document's views up to date: its tags
// first, when they were lost or damaged (from what the indexes still
// hold), then its index. The index is rebuilt from the round files when
// the repair mended the document (u.All), or when SQLite's quick check
// finds it damaged, stale or gone, or the table of rounds (index.md) or
// the tags (tags.tsv) are not what it or the store's index holds; else
// it is brought up to date as after an append, which finds it current.
// Rebuilding the index of a sound document was most of a repair's time
// and its peak memory, SQLite's while it wrote (a session of 500,000
// rounds: 639 s and 63.8 MB, 218 s and 53.7 MB without; issue 33).
func (s *Views) reindexDoc(u inscribe.Update) ([]error, error) {
	d := u.Doc
	local := d.IndexPath()
	_, gone := os.Stat(local) // (before mendTags, which opens it: an empty one)
	warnings := s.mendTags(d, u.Key)
	all := true
	if gone == nil {
		sound, ws := s.soundIndex(d, u.Key, !u.All)
		warnings = append(warnings, ws...)
		all = u.All || !sound
	}
	if all {
		removeDB(local)
	}
	ws, err := s.indexDoc(d, u.Key, u.Seen, all, nil)
	warnings = append(warnings, ws...)
	if err != nil {
		return warnings, err
	}
	// A document rebuilt without its head lists the engagements its
	// rounds are tagged with again.
	tags, err := d.Tags()
	if err != nil {
		return warnings, err
	}
	_, err = d.RewriteHead(func(m *session.Meta) {
		have := map[string]bool{}
		for _, e := range m.Engagements {
			have[e.ID] = true
		}
		var add []string
		for _, e := range tags {
			if !have[e] {
				have[e] = true
				add = append(add, e)
			}
		}
		sort.Strings(add)
		for _, e := range add {
			m.Engagements = append(m.Engagements, session.Engagement{ID: e})
		}
	})
	return warnings, err
}

// mendTags recovers a document's engagement tags when tags.tsv is damaged
// (lines that do not read: the file is set aside as tags.tsv.damaged-<time>,
// its readable lines kept), lost or cut short, from the tags the indexes
// hold for rounds the file does not have.
func (s *Views) mendTags(d *inscribe.Doc, key string) []error {
	return s.mendTagsFrom(d, func() map[int]string { return s.indexedTags(d, key) })
}

// keepIndexedTags is mendTags before a document's index is thrown away and
// rebuilt from its round files and tags.tsv (a reindex, a store index
// rebuilt): tags its own index holds that tags.tsv lost (cut short,
// deleted) are written back first, so that the rebuild keeps them. A
// document whose lock another holds (its writer keeps its tags) or whose
// head does not read (repair rebuilds it, and recovers its tags then) is
// left as it is.
func (s *Views) keepIndexedTags(d *inscribe.Doc) []error {
	unlock, err := d.Lock(time.Millisecond)
	if err != nil {
		return nil
	}
	defer unlock()
	m, err := d.Meta()
	if err != nil {
		return nil
	}
	return s.mendTagsFrom(d, func() map[int]string { return ownIndexTags(d, document.Key(m)) })
}

// mendTagsFrom writes back to a document's tags.tsv the tags indexed (read
// once the file is read) that it lacks; a damaged file is set aside.
func (s *Views) mendTagsFrom(d *inscribe.Doc, indexed func() map[int]string) []error {
	p := d.TagsName()
	tags, err := d.Tags()
	lenient, exists := d.TagsLeniently()
	damaged := err != nil && exists
	if err != nil && !damaged {
		return []error{err}
	}
	if damaged {
		tags = map[int]string{}
		for r, e := range lenient {
			if ValidEngagement(e) {
				tags[r] = e
			}
		}
	}
	added := 0
	for r, e := range indexed() {
		if _, ok := tags[r]; !ok {
			tags[r] = e
			added++
		}
	}
	if !damaged && added == 0 {
		return nil
	}
	what := fmt.Sprintf("%s was missing or cut short: %d %s recovered from the indexes", p, added, plural(added, "tag", "tags"))
	if damaged {
		to, rerr := d.SetAsideTags()
		if rerr != nil {
			return []error{rerr}
		}
		why := err.Error()
		if de, ok := err.(*inscribe.DamageError); ok {
			why = de.Why
		}
		what = fmt.Sprintf("%s was damaged (%s): set aside as %s; %d %s kept, %d of them from the indexes", p, why, filepath.Base(to), len(tags), plural(len(tags), "tag", "tags"), added)
	}
	if err := d.SetTags(tags); err != nil {
		return []error{err}
	}
	return []error{errors.New(what)}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// indexedTags are the tags the indexes hold for a document's rounds: its
// own index's, else the store's.
func (s *Views) indexedTags(d *inscribe.Doc, key string) map[int]string {
	if out := ownIndexTags(d, key); len(out) > 0 {
		return out
	}
	if sdb, _, err := s.storeIndex(); err == nil {
		if out, err := sdb.RoundTags(context.Background(), key); err == nil {
			return out
		}
	}
	return map[int]string{}
}

// ownIndexTags are the tags a document's own index holds.
func ownIndexTags(d *inscribe.Doc, key string) map[int]string {
	if db, err := index.OpenScratch(d.IndexPath()); err == nil {
		out, err := db.RoundTags(context.Background(), key)
		db.Close()
		if err == nil {
			return out
		}
	}
	return map[int]string{}
}

// VerifyDoc checks a document's derived views: that its index reads (all
// of it: SQLite's quick check), that its tags read, and that its table of
// rounds is what its index gives. Each problem is a *inscribe.DamageError.
func (s *Views) VerifyDoc(d *inscribe.Doc) []error {
	session := d.SessionID()
	damage := func(p, why string) error { return &inscribe.DamageError{Session: session, File: p, Why: why} }
	var errs []error
	tagsFile := d.TagsName()
	tags, tagsErr := d.Tags()
	if tagsErr != nil {
		if _, ok := tagsErr.(*inscribe.DamageError); !ok {
			tagsErr = damage(tagsFile, tagsErr.Error())
		}
		errs = append(errs, tagsErr)
	}
	local := d.IndexPath()
	if _, err := os.Stat(local); err != nil {
		return errs // made when next indexed
	}
	db, err := index.OpenScratch(local)
	if err != nil {
		return append(errs, damage(local, err.Error()))
	}
	defer db.Close()
	if err := db.QuickCheck(context.Background()); err != nil {
		return append(errs, damage(local, err.Error()))
	}
	m, err := d.Meta()
	if err != nil {
		return errs // the document's own check reports it
	}
	// The tags the index holds came from tags.tsv: a tag it has that the
	// file lacks was lost from the file (the first such round is named).
	ctx := context.Background()
	if idx, err := db.RoundTags(ctx, document.Key(m)); err == nil && tagsErr == nil {
		for _, r := range slices.Sorted(maps.Keys(idx)) {
			if tags[r] == "" {
				errs = append(errs, damage(tagsFile, fmt.Sprintf("round %d is tagged %s in the index, not in the file (lost, or cut short?)", r, idx[r])))
				break
			}
		}
	}
	same, err := sameTable(ctx, d, db, document.Key(m))
	if err != nil {
		return append(errs, damage(local, err.Error()))
	}
	if !same {
		errs = append(errs, damage(d.RoundsTableName(), "not the table of rounds the document's index gives (missing or damaged)"))
	}
	return errs
}

// soundIndex reports whether a document's index (key, its key) reads
// whole, SQLite's quick check says, and, when compare is set, whether the
// table of rounds (index.md) is what it gives and it and the store's
// index hold the tags tags.tsv holds: the table is written from the
// index, and the indexes' tags from tags.tsv, so a table or tags that
// differ (a tag whose indexing failed, tags mendTags recovered into the
// file) are written again with the index. A damaged index is set aside,
// with a warning.
func (s *Views) soundIndex(d *inscribe.Doc, key string, compare bool) (bool, []error) {
	local := d.IndexPath()
	db, err := index.OpenScratch(local)
	if err != nil {
		return false, nil
	}
	ctx := context.Background()
	var warnings []error
	err = db.QuickCheck(ctx)
	same := err == nil
	if same && compare {
		if same, err = sameTable(ctx, d, db, key); same && err == nil {
			sdb, ws, serr := s.storeIndex()
			warnings = append(warnings, ws...)
			same = serr == nil && sameTags(ctx, d, key, db, sdb)
		}
	}
	db.Close()
	var se *index.StaleError
	if errors.As(err, &se) && se.Damaged {
		if to, err := setAside(local); err == nil && to != "" {
			warnings = append(warnings, damageWarning(se, to))
		}
	}
	return same && err == nil, warnings
}

// sameTags reports whether each index holds the tags of the document
// (key) that its tags.tsv holds.
func sameTags(ctx context.Context, d *inscribe.Doc, key string, dbs ...*index.DB) bool {
	file, err := d.Tags()
	if err != nil {
		return false
	}
	for _, db := range dbs {
		if idx, err := db.RoundTags(ctx, key); err != nil || !maps.Equal(file, idx) {
			return false
		}
	}
	return true
}

// sameTable reports whether the document's table of rounds is the one its
// index db gives, comparing them as the table is written (writeRoundsTable)
// rather than holding either whole. An error is the index's.
func sameTable(ctx context.Context, d *inscribe.Doc, db *index.DB, key string) (bool, error) {
	f, err := os.Open(d.RoundsTableName())
	if err != nil {
		// Missing or unreadable: not the table, once the index reads.
		_, err := db.MaxRound(ctx, key)
		return false, err
	}
	defer f.Close()
	c := &sameWriter{r: bufio.NewReaderSize(f, 64<<10)}
	if err := writeRoundsTable(ctx, c, db, key, d.RoundsTableLink(), d.Title()); err != nil {
		return false, err
	}
	_, err = c.r.ReadByte()
	return !c.differ && err == io.EOF, nil
}

// sameWriter compares what is written to it with what r reads on.
type sameWriter struct {
	r      *bufio.Reader
	buf    []byte
	differ bool
}

func (c *sameWriter) Write(p []byte) (int, error) {
	if !c.differ {
		c.buf = slices.Grow(c.buf[:0], len(p))[:len(p)]
		if _, err := io.ReadFull(c.r, c.buf); err != nil || !bytes.Equal(c.buf, p) {
			c.differ = true
		}
	}
	return len(p), nil
}

// VerifyStore checks the store's own derived views, reading them all: that
// its index reads (SQLite's quick check), and that the catalogs are what the
// documents give. Each problem is a *inscribe.DamageError (of no session).
func (s *Views) VerifyStore() []error {
	var errs []error
	damage := func(p, why string) error { return &inscribe.DamageError{File: p, Why: why} }
	p := s.IndexPath()
	if _, err := os.Stat(p); err == nil {
		if db, err := index.Open(p); err != nil {
			errs = append(errs, damage(p, err.Error()))
		} else {
			if err := db.QuickCheck(context.Background()); err != nil {
				errs = append(errs, damage(p, err.Error()))
			}
			db.Close()
		}
	}
	agents, err := s.Agents()
	if err != nil {
		return append(errs, err)
	}
	for _, a := range agents {
		want, _, _, err := s.agentIndex(a, false) // from every head
		if err != nil {
			return append(errs, err)
		}
		if got, err := s.Catalog(a); err != nil || string(got) != string(want) {
			errs = append(errs, damage(s.CatalogName(a), "not the catalog the documents give (missing, damaged or behind)"))
		}
	}
	if got, err := s.Catalog(""); err != nil || string(got) != string(s.topIndex(agents)) {
		errs = append(errs, damage(s.CatalogName(""), "not the catalog the agents' catalogs give (missing, damaged or behind)"))
	}
	return errs
}
