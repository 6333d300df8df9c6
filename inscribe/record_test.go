package inscribe

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/internal/atomicfile"
	"github.com/scribe-archive/scribe/internal/testenv"
)

const multiturn = "22222222-2222-4222-8222-222222222222" // five rounds

// recordStore inscribes the five-round sample and returns the scratch tree,
// the source and the document.
func recordStore(t *testing.T) (*liveDir, string, string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testenv.Projects(t), "-home-dev-src-multiturn", multiturn+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	l := newLive(t)
	src := l.put(filepath.Join("-home-dev-src-multiturn", multiturn+".jsonl"), data)
	l.update(true)
	return l, src, filepath.Join(l.root, "data", "sessions", "claude", multiturn+".md")
}

// updateOne updates the sample's document alone.
func updateOne(t *testing.T, l *liveDir, src string, opts Options) Result {
	t.Helper()
	rs := l.store().Update(claudeAt(src, multiturn, filepath.Dir(src)), opts)
	return rs[len(rs)-1]
}

// TestRoundFileDamageNoticed: a round file deleted, cut short or
// overwritten is noticed by the next update, which fails naming it (an
// append by its size, inscribe by its bytes), instead of saying
// "appended" or "unchanged" over a store an export then fails on (issue 14).
func TestRoundFileDamageNoticed(t *testing.T) {
	for _, c := range []struct {
		name   string
		file   string // in the document's folder
		damage func(p string) error
		why    string
		append bool // append notices it too (not only inscribe)
	}{
		{"closed round deleted", "rounds/001.json", os.Remove, "missing", true},
		{"closed round cut short", "rounds/002.json", func(p string) error { return os.Truncate(p, 100) }, "100 bytes, but scribe wrote", true},
		{"open round deleted", "rounds/005.json", os.Remove, "missing", true},
		{"closed round overwritten", "rounds/003.json", overwrite, "its bytes are not those scribe wrote", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, src, md := recordStore(t)
			p := filepath.Join(Folder(md), filepath.FromSlash(c.file))
			if err := c.damage(p); err != nil {
				t.Fatal(err)
			}
			for _, verify := range []bool{false, true} {
				r := updateOne(t, l, src, Options{Verify: verify})
				var de *DamageError
				if !verify && !c.append {
					if r.Err != nil {
						t.Errorf("append: %v", r.Err)
					}
					continue
				}
				if !errors.As(r.Err, &de) || de.File != p || !strings.Contains(de.Why, c.why) || de.Session != multiturn {
					t.Errorf("verify=%v: %v (%#v), want a damage of %s: %s", verify, r.Err, de, p, c.why)
				}
				if r.Outcome != Failed {
					t.Errorf("verify=%v: outcome %s", verify, r.Outcome)
				}
			}
			if err := CheckDoc(md); c.append && !errors.As(err, new(*DamageError)) {
				t.Errorf("CheckDoc: %v", err)
			}
		})
	}
}

// overwrite changes a byte of a round file's source lines, keeping its
// size.
func overwrite(p string) error {
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	i := strings.Index(string(b), `"entries"`)
	i += strings.Index(string(b[i:]), `"content":"`) + len(`"content":"`)
	b[i] ^= 0x20 // a letter's case
	return os.WriteFile(p, b, 0o644)
}

// TestRoundRecordMadeFromFiles: a note from before the record of round
// files gets one at the next update, from the files, once they are checked
// against the note: the same record an inscription writes; and a damaged
// record is made again, with a warning.
func TestRoundRecordMadeFromFiles(t *testing.T) {
	l, src, md := recordStore(t)
	want := l.snapshot()
	folder := Folder(md)
	stripRecord := func() {
		os.Remove(filepath.Join(folder, roundsFile))
		st, err := readState(folder)
		if err != nil || st == nil {
			t.Fatal(err)
		}
		st.RoundsSize, st.OpenRound = nil, nil
		var b atomicfile.Batch
		if err := writeState(&b, folder, st); err != nil {
			t.Fatal(err)
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	stripRecord()
	if r := updateOne(t, l, src, Options{}); r.Err != nil || r.Outcome != Unchanged || len(r.Warnings) > 0 {
		t.Fatalf("%s %v %v", r.Outcome, r.Err, r.Warnings)
	}
	sameSnapshot(t, "record made from the files", l.snapshot(), want)

	// A damaged record: made again.
	os.WriteFile(filepath.Join(folder, roundsFile), []byte("garbage\n"), 0o644)
	r := updateOne(t, l, src, Options{})
	if r.Err != nil || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0].Error(), "rounds.tsv: damaged: made again") {
		t.Fatalf("%v %v", r.Err, r.Warnings)
	}
	sameSnapshot(t, "record made again", l.snapshot(), want)

	// Without a record, a damaged round file is still noticed: its
	// entries do not hash to what the note says was inscribed.
	stripRecord()
	overwrite(filepath.Join(folder, "rounds", "002.json"))
	r = updateOne(t, l, src, Options{})
	var de *DamageError
	if !errors.As(r.Err, &de) || de.File != RoundsDir(folder) {
		t.Errorf("%v, want a damage of the round files", r.Err)
	}
}
