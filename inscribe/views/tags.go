package views

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/scribe-archive/scribe/index"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/inscribe/document"
	"github.com/scribe-archive/scribe/session"
)

// ParseRounds reads a round selection: "3", "3-7", "all", or a comma list
// of those ("1,4-6"), against a session of n rounds.
func ParseRounds(spec string, n int) ([]int, error) {
	seen := map[int]bool{}
	var out []int
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		lo, hi := 0, 0
		switch {
		case part == "all":
			lo, hi = 1, n
		case strings.Contains(part, "-"):
			a, b, _ := strings.Cut(part, "-")
			x, err1 := strconv.Atoi(strings.TrimSpace(a))
			y, err2 := strconv.Atoi(strings.TrimSpace(b))
			if err1 != nil || err2 != nil || x > y {
				return nil, fmt.Errorf("round range %q: write it as 3-7", part)
			}
			lo, hi = x, y
		default:
			x, err := strconv.Atoi(part)
			if err != nil {
				return nil, fmt.Errorf("rounds %q: give a number, a range like 3-7, or all", part)
			}
			lo, hi = x, x
		}
		if lo < 1 || hi > n {
			if n == 0 {
				return nil, fmt.Errorf("rounds %q: the session has no rounds", part)
			}
			return nil, fmt.Errorf("rounds %q: the session has rounds 1-%d", part, n)
		}
		for r := lo; r <= hi; r++ {
			if !seen[r] {
				seen[r] = true
				out = append(out, r)
			}
		}
	}
	sort.Ints(out)
	return out, nil
}

// ValidEngagement reports whether s can be an engagement id.
func ValidEngagement(s string) bool {
	if s == "" || len(s) > 200 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:", r)) {
			return false
		}
	}
	return true
}

// Tag sets (engagement non-empty) or clears (engagement "") the engagement
// of rounds of a document: in its durable tags file, in both indexes, in
// its table of rounds, and in its frontmatter's engagements list. It
// returns how many rounds changed.
func (s *Views) Tag(d *inscribe.Doc, rounds []int, engagement string) (int, error) {
	unlock, err := d.Lock(0)
	if err != nil {
		return 0, err
	}
	defer unlock()
	tags, err := d.Tags()
	if err != nil {
		return 0, err
	}
	changed := 0
	for _, r := range rounds {
		switch {
		case engagement == "" && tags[r] != "":
			delete(tags, r)
			changed++
		case engagement != "" && tags[r] != engagement:
			tags[r] = engagement
			changed++
		}
	}
	if err := d.SetTags(tags); err != nil {
		return 0, err
	}
	m, err := d.Meta()
	if err != nil {
		return changed, err
	}
	// The indexes: bring them up to date (which reads the tags file), then
	// set the tags of rounds already there.
	if _, err := s.IndexDoc(d, false); err != nil {
		return changed, err
	}
	var eng *string
	if engagement != "" {
		eng = &engagement
	}
	ctx := context.Background()
	sdb, _, err := s.storeIndex()
	if err != nil {
		return changed, err
	}
	if _, err := sdb.SetEngagement(ctx, document.Key(m), rounds, eng); err != nil {
		// Damaged: set aside, and built anew from the tags file, which
		// has the new tags.
		if _, retry := s.recoverIndex(err); !retry {
			return changed, err
		}
		if _, err := s.IndexDoc(d, true); err != nil {
			return changed, err
		}
	}
	ldb, err := index.OpenScratch(d.IndexPath())
	var se *index.StaleError
	if errors.As(err, &se) {
		// Damaged: rebuild it (from the tags file, which has the new tags).
		removeDB(d.IndexPath())
		if _, err = s.IndexDoc(d, true); err == nil {
			ldb, err = index.OpenScratch(d.IndexPath())
		}
	}
	if err != nil {
		return changed, err
	}
	_, err = ldb.SetEngagement(ctx, document.Key(m), rounds, eng)
	if _, retry := s.recoverIndex(err); retry {
		ldb.Close()
		if _, err = s.IndexDoc(d, true); err == nil {
			ldb, err = index.OpenScratch(d.IndexPath())
		}
		if err != nil {
			return changed, err
		}
	}
	if err == nil {
		err = writeRoundsIndex(ctx, ldb, document.Key(m), d, d.Title(), 1)
	}
	if cerr := ldb.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return changed, err
	}
	// The frontmatter lists the engagements the session touched. An entry
	// scribe added (no phases) goes when no round carries its tag any more;
	// one a person filled in stays.
	used := map[string]bool{}
	for _, e := range tags {
		used[e] = true
	}
	_, err = d.RewriteHead(func(m *session.Meta) {
		var keep []session.Engagement
		have := map[string]bool{}
		for _, e := range m.Engagements {
			if used[e.ID] || e.PhaseAtStart != "" || e.PhaseAtEnd != "" {
				keep = append(keep, e)
				have[e.ID] = true
			}
		}
		var add []string
		for e := range used {
			if !have[e] {
				add = append(add, e)
			}
		}
		sort.Strings(add)
		for _, e := range add {
			keep = append(keep, session.Engagement{ID: e})
		}
		m.Engagements = keep
	})
	return changed, err
}
