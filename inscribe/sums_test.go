package inscribe

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/internal/testkit/testenv"
)

// copySources copies the fixture's sources into a scratch tree.
func copySources(t *testing.T, l *liveDir) {
	for _, dir := range []string{"-home-dev-src-multiturn", "-home-dev-src-subagent"} {
		testenv.CopyTree(t, filepath.Join(testenv.Projects(t), dir), filepath.Join(l.projects, dir))
	}
}

// sha256Store copies testdata/sha256 (two documents of the store the
// repository's data/ was before its sums were CRC32Cs: a five-round
// session, and one with a subagent) and their sources into a scratch tree.
func sha256Store(t *testing.T) *liveDir {
	t.Helper()
	l := newLive(t)
	repo := testenv.RepoRoot(t)
	testenv.CopyTree(t, filepath.Join(repo, "testdata", "sha256", "data"), filepath.Join(l.root, "data"))
	copySources(t, l)
	return l
}

// sha256Docs are the folders of the fixture's documents, relative to
// data/sessions/claude.
var sha256Docs = []string{
	multiturn,
	"33333333-3333-4333-8333-333333333333",
	"33333333-3333-4333-8333-333333333333/agent-a851eb1970e603fa2",
}

// TestUpgradeSums: an update of a store whose sums are SHA-256s (issue 33)
// brings each document's note and record forward in place, reading each
// round file and each source once, and leaves them as a fresh inscription
// writes them: the record byte for byte, the note's
// running sum of the closed rounds and its open round's sum. A second
// update has nothing to do.
func TestUpgradeSums(t *testing.T) {
	for _, verify := range []bool{false, true} {
		t.Run(map[bool]string{false: "append", true: "inscribe"}[verify], func(t *testing.T) {
			l := sha256Store(t)
			for _, r := range l.update(verify) {
				if r.Outcome != Unchanged {
					t.Errorf("%s: %s, want unchanged (its sums are not its content)", r.Doc, r.Outcome)
				}
			}
			checkUpgraded(t, l)
			for _, r := range l.update(verify) {
				if r.Outcome != Unchanged {
					t.Errorf("second run: %s %s", r.Outcome, r.Doc)
				}
			}
			// The tails an earlier store summed are compared as they are,
			// and replaced by the next update that writes.
			growSource(t, filepath.Join(l.projects, "-home-dev-src-multiturn", multiturn+".jsonl"))
			l.update(verify)
			st, err := readState(filepath.Join(l.root, "data", "sessions", "claude", multiturn))
			if err != nil || st == nil {
				t.Fatal(st, err)
			}
			for _, s := range []string{st.TailHash, st.ClosedTail, st.DocTailHash, st.ClosedHash} {
				if len(s) != 8 {
					t.Errorf("after an append that wrote: a sum %q, want a CRC32C", s)
				}
			}
		})
	}
}

// checkUpgraded checks that the fixture's documents have the sums a fresh
// inscription of their sources writes.
func checkUpgraded(t *testing.T, l *liveDir) {
	t.Helper()
	fresh := newLive(t)
	copySources(t, fresh)
	fresh.update(false)
	for _, rel := range sha256Docs {
		got := filepath.Join(l.root, "data", "sessions", "claude", filepath.FromSlash(rel))
		want := filepath.Join(fresh.root, "data", "sessions", "claude", filepath.FromSlash(rel))
		gs, err := readState(got)
		if err != nil || gs == nil {
			t.Fatalf("%s: note %v %v", rel, gs, err)
		}
		ws, err := readState(want)
		if err != nil || ws == nil {
			t.Fatalf("fresh %s: note %v %v", rel, ws, err)
		}
		if gs.oldSums() {
			t.Errorf("%s: its note still holds SHA-256s", rel)
		}
		if gs.ClosedHash != ws.ClosedHash {
			t.Errorf("%s: closed_hash %q, a fresh inscription's %q", rel, gs.ClosedHash, ws.ClosedHash)
		}
		if (gs.RoundsSize == nil) != (ws.RoundsSize == nil) || gs.RoundsSize != nil && *gs.RoundsSize != *ws.RoundsSize {
			t.Errorf("%s: rounds_size %v, a fresh inscription's %v", rel, gs.RoundsSize, ws.RoundsSize)
		}
		if (gs.OpenRound == nil) != (ws.OpenRound == nil) || gs.OpenRound != nil && *gs.OpenRound != *ws.OpenRound {
			t.Errorf("%s: open_round %v, a fresh inscription's %v", rel, gs.OpenRound, ws.OpenRound)
		}
		a, aerr := os.ReadFile(filepath.Join(got, roundsFile))
		b, berr := os.ReadFile(filepath.Join(want, roundsFile))
		if string(a) != string(b) || (aerr == nil) != (berr == nil) {
			t.Errorf("%s: rounds.tsv\n%s(%v), a fresh inscription's\n%s(%v)", rel, a, aerr, b, berr)
		}
	}
}

// TestUpgradeSumsDamage: what the upgrade reads is checked against the
// SHA-256s it replaces. A round file overwritten with as many bytes fails
// the update as inscribe's checks do, naming the file; a source whose
// first bytes another file's replaced is kept as it was inscribed, with a
// warning naming it, as inscribe keeps any source that no longer holds
// what was inscribed (continuation.go). Either way the note is left as it
// was.
func TestUpgradeSumsDamage(t *testing.T) {
	doc := filepath.Join("data", "sessions", "claude", multiturn)
	for _, c := range []struct {
		name   string
		damage func(l *liveDir) string // returns what the error must name
	}{
		{"round file overwritten", func(l *liveDir) string {
			p := filepath.Join(l.root, doc, "rounds", "002.json")
			overwrite(p)
			return p
		}},
		{"source replaced", func(l *liveDir) string {
			p := filepath.Join(l.projects, "-home-dev-src-multiturn", multiturn+".jsonl")
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			i := strings.Index(string(data), "multiturn")
			data[i] = 'M'
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			return "another file took its place"
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := sha256Store(t)
			before, err := os.ReadFile(statePath(filepath.Join(l.root, doc)))
			if err != nil {
				t.Fatal(err)
			}
			want := c.damage(l)
			src := filepath.Join(l.projects, "-home-dev-src-multiturn", multiturn+".jsonl")
			r := updateOne(t, l, src, Options{})
			if c.name == "source replaced" {
				if r.Err != nil || len(r.Warnings) == 0 || !strings.Contains(errors.Join(r.Warnings...).Error(), want) {
					t.Errorf("%s %v %v, want no failure and a warning naming %s", r.Outcome, r.Err, r.Warnings, want)
				}
			} else {
				if r.Outcome != Failed || r.Err == nil || !strings.Contains(r.Err.Error(), want) {
					t.Errorf("%s %v, want a failure naming %s", r.Outcome, r.Err, want)
				}
				var de *DamageError
				if !errors.As(r.Err, &de) {
					t.Errorf("%T: want a *DamageError", r.Err)
				}
			}
			after, err := os.ReadFile(statePath(filepath.Join(l.root, doc)))
			if err != nil || string(after) != string(before) {
				t.Errorf("the note changed (%v)", err)
			}
		})
	}
}

// TestUpgradeSumsCutShort: a kill between the record's and the note's
// renames leaves the record of CRC32Cs beside the note of SHA-256s (the
// record goes first). The next update reads that record whole and
// finishes the upgrade.
func TestUpgradeSumsCutShort(t *testing.T) {
	l := sha256Store(t)
	rel := filepath.Join("sessions", "claude", multiturn, roundsFile)
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "data", rel))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(l.root, "data", rel), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := checkDoc(filepath.Join(l.root, "data", "sessions", "claude", multiturn+".md")); err != nil {
		t.Errorf("check before the update: %v", err)
	}
	for _, r := range l.update(false) {
		if r.Outcome != Unchanged {
			t.Errorf("%s: %s", r.Doc, r.Outcome)
		}
	}
	checkUpgraded(t, l)
}

// TestUpgradeSumsClone: a clone of a store whose sums are SHA-256s has no
// read notes (they are the machine's own). The first update makes each
// document's note from its record, checking each round file against its
// SHA-256, and writes the record of CRC32Cs the new note describes.
func TestUpgradeSumsClone(t *testing.T) {
	l := sha256Store(t)
	for _, rel := range sha256Docs {
		folder := filepath.Join(l.root, "data", "sessions", "claude", filepath.FromSlash(rel))
		for _, name := range []string{stateFile, graphFile} {
			if err := os.Remove(filepath.Join(folder, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
		}
	}
	for _, r := range l.update(false) {
		if r.Outcome != Unchanged {
			t.Errorf("%s: %s, want unchanged", r.Doc, r.Outcome)
		}
	}
	checkUpgraded(t, l)
}
