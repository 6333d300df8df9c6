package web

import (
	"sync"
	"time"

	"github.com/scribe-archive/scribe/inscribe/document"
)

// places remembers where the pages of the documents served lately start,
// so that a page, or a round's redirect, reads a document from the page
// it is on (or the nearest before it that is known) rather than from its
// first message: serving every page of a session of half a million rounds
// read it from the start for each, quadratic in its length (issue 33).
// A document that changed (its modification time or size) is read from
// its start again. It holds at most maxPlacedDocs documents, a few dozen
// bytes a page each.
type places struct {
	mu   sync.Mutex
	docs map[string]*pagePlaces // by the document's path
	used uint64                 // a clock for evicting the least recently used
}

const maxPlacedDocs = 64

// pagePlaces is where a document's pages start, as far as it was read.
type pagePlaces struct {
	mod   time.Time
	size  int64
	used  uint64
	pages []pageStart // pages[k] is page k+1's
	// totals are the index's totals of the document's rounds, when read
	// (the count and the sum read every round's row of the index).
	totals *roundTotals
}

// roundTotals are what index.DB.RoundTotals gives.
type roundTotals struct {
	count, last int
	tokens      int64
}

// pageStart is where a page's first message starts, and the round the
// message before it belongs to (0: none).
type pageStart struct {
	at    document.Place
	round int
}

// nearest returns the last page, of those up to page `page` whose start is
// known, that is accepted, and where it starts (0: none is known).
func (p *places) nearest(path string, mod time.Time, size int64, page int, accept func(pageStart) bool) (int, pageStart) {
	p.mu.Lock()
	defer p.mu.Unlock()
	d := p.current(path, mod, size)
	if d == nil {
		return 0, pageStart{}
	}
	p.used++
	d.used = p.used
	for k := min(page, len(d.pages)); k >= 1; k-- {
		if accept == nil || accept(d.pages[k-1]) {
			return k, d.pages[k-1]
		}
	}
	return 0, pageStart{}
}

// note records where page `page` starts; pages are noted in order, each
// after the one before it (a later one is ignored until then).
func (p *places) note(path string, mod time.Time, size int64, page int, at pageStart) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.docs == nil {
		p.docs = map[string]*pagePlaces{}
	}
	d := p.current(path, mod, size)
	if d == nil {
		if p.docs[path] == nil && len(p.docs) >= maxPlacedDocs {
			p.evict()
		}
		d = &pagePlaces{mod: mod, size: size}
		p.docs[path] = d
	}
	p.used++
	d.used = p.used
	if page == len(d.pages)+1 {
		d.pages = append(d.pages, at)
	}
}

// forget drops what is known of a document (a place that did not read).
func (p *places) forget(path string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.docs, path)
}

// evict drops the document used least recently.
func (p *places) evict() {
	var oldest string
	var at uint64
	for k, d := range p.docs {
		if oldest == "" || d.used < at {
			oldest, at = k, d.used
		}
	}
	delete(p.docs, oldest)
}

// docTotals returns the totals kept for a document, if it has not changed.
func (p *places) docTotals(path string, mod time.Time, size int64) (roundTotals, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	d := p.current(path, mod, size)
	if d == nil || d.totals == nil {
		return roundTotals{}, false
	}
	return *d.totals, true
}

// setTotals keeps a document's totals, while what is known of it is of
// this version of it.
func (p *places) setTotals(path string, mod time.Time, size int64, t roundTotals) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if d := p.current(path, mod, size); d != nil {
		d.totals = &t
	}
}

// current returns what is known of a document, if it is of this version
// of it (its modification time and size); the caller holds p.mu.
func (p *places) current(path string, mod time.Time, size int64) *pagePlaces {
	if d := p.docs[path]; d != nil && d.mod.Equal(mod) && d.size == size {
		return d
	}
	return nil
}
