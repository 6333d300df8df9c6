package inscribe

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scribe-archive/scribe/internal/atomicfile"
	"github.com/scribe-archive/scribe/internal/testkit/testenv"
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
// overwritten is noticed by the next inscribe, which fails naming it
// instead of saying "unchanged" over a store an export then fails on
// (issue 14), and by check --store and repair. An append reads no round
// file it does not extend (issue 34): it notices a file deleted or added
// (its folder changed), and one it extends damaged (the last closed round,
// the open one); an older file cut short or overwritten in place is left
// to inscribe, even after the append wrote its note (.rounds-checked).
func TestRoundFileDamageNoticed(t *testing.T) {
	cut := func(p string) error { return os.Truncate(p, 100) }
	for _, c := range []struct {
		name     string
		file     string // in the document's folder
		damage   func(p string) error
		why      string
		sized    bool // a stat shows it (CheckDoc notices it)
		listed   bool // its folder changed (an append with nothing new notices it)
		extended bool // an append that finds new lines notices it
		atOnce   bool // damaged within the clock tick the note was written in
	}{
		{"closed round deleted", "rounds/001.json", os.Remove, "missing", true, true, true, false},
		{"closed round cut short", "rounds/002.json", cut, "100 bytes, but scribe wrote", true, false, false, false},
		{"last closed round cut short", "rounds/004.json", cut, "100 bytes, but scribe wrote", true, false, true, false},
		{"open round cut short", "rounds/005.json", cut, "100 bytes, but scribe wrote", true, false, true, false},
		{"open round deleted", "rounds/005.json", os.Remove, "missing", true, true, true, false},
		{"closed round deleted at once", "rounds/003.json", os.Remove, "missing", true, true, true, true},
		{"closed round overwritten", "rounds/003.json", overwrite, "its bytes are not those scribe wrote", false, false, false, false},
		{"last closed round overwritten", "rounds/004.json", overwrite, "its bytes are not those scribe wrote", false, false, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, src, md := recordStore(t)
			p := filepath.Join(folderOf(md), filepath.FromSlash(c.file))
			if !c.atOnce {
				afterChange(t, statePath(folderOf(md)))
			}
			if err := c.damage(p); err != nil {
				t.Fatal(err)
			}
			if r := updateOne(t, l, src, Options{}); c.listed != (r.Err != nil) || !c.listed && r.Outcome != Unchanged {
				t.Errorf("append with nothing new: %s %v (want it noticed: %v)", r.Outcome, r.Err, c.listed)
			}
			growSource(t, src)
			damaged := func(what string, r Result) {
				t.Helper()
				var de *DamageError
				if !errors.As(r.Err, &de) || de.File != p || !strings.Contains(de.Why, c.why) || de.Session != multiturn {
					t.Errorf("%s: %v (%#v), want a damage of %s: %s", what, r.Err, de, p, c.why)
				}
				if r.Outcome != Failed {
					t.Errorf("%s: outcome %s", what, r.Outcome)
				}
			}
			if r := updateOne(t, l, src, Options{}); c.extended {
				damaged("append", r)
			} else if r.Err != nil || r.Outcome != Appended {
				t.Errorf("append: %s %v, want appended (it reads no older file)", r.Outcome, r.Err)
			}
			// inscribe, and again: it fails until the file is mended.
			for range 2 {
				damaged("inscribe", updateOne(t, l, src, Options{Verify: true}))
			}
			verifyFinds(t, md, src, p)
			if err := checkDoc(md); c.sized && !errors.As(err, new(*DamageError)) {
				t.Errorf("CheckDoc: %v", err)
			}
		})
	}
}

// TestRoundFilesTrusted: inscribe reads no round file that did not change
// after the read note was written (it trusts it), so a file damaged before
// a note was written over it without a check goes unseen by inscribe; check
// --store (VerifyDoc) reads every file and sees it.
func TestRoundFilesTrusted(t *testing.T) {
	l, src, md := recordStore(t)
	folder := folderOf(md)
	p := filepath.Join(roundsDir(folder), "003.json")
	if err := overwrite(p); err != nil {
		t.Fatal(err)
	}
	// The note written again after the damage, as it was.
	afterChange(t, p)
	note := statePath(folder)
	data, err := os.ReadFile(note)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(note+".tmp", data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(note+".tmp", note); err != nil {
		t.Fatal(err)
	}
	if r := updateOne(t, l, src, Options{Verify: true}); r.Err != nil || r.Outcome != Unchanged {
		t.Errorf("inscribe read a round file older than the note: %s %v", r.Outcome, r.Err)
	}
	verifyFinds(t, md, src, p)
}

// verifyFinds checks that VerifyDoc (check --store) finds the round file p
// of the document md damaged.
func verifyFinds(t *testing.T, md, src, p string) {
	t.Helper()
	for _, err := range verifyDoc(md, claudeSrc, src) {
		if de := (*DamageError)(nil); errors.As(err, &de) && de.File == p {
			return
		}
	}
	t.Errorf("VerifyDoc (check --store) did not find %s damaged", p)
}

// afterChange waits until the clock that stamps files has moved past the
// time the file at p last changed, so that a change made now is later (files
// are stamped with a clock of a few milliseconds).
func afterChange(t *testing.T, p string) {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	probe := filepath.Join(t.TempDir(), "probe")
	for {
		if err := os.WriteFile(probe, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		pi, err := os.Stat(probe)
		if err != nil {
			t.Fatal(err)
		}
		if changeTime(pi).After(changeTime(fi)) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// growSource appends a line to a source (a copy of its last one).
func growSource(t *testing.T, src string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
	f, err := os.OpenFile(src, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(strings.TrimSuffix(lines[len(lines)-1], "\n") + "\n"); err != nil {
		t.Fatal(err)
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
	folder := folderOf(md)
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
	if r := updateOne(t, l, src, Options{Verify: true}); r.Err != nil || r.Outcome != Unchanged || len(r.Warnings) > 0 {
		t.Fatalf("%s %v %v", r.Outcome, r.Err, r.Warnings)
	}
	sameSnapshot(t, "record made from the files", l.snapshot(), want)

	// A damaged record: made again.
	os.WriteFile(filepath.Join(folder, roundsFile), []byte("garbage\n"), 0o644)
	r := updateOne(t, l, src, Options{Verify: true})
	if r.Err != nil || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0].Error(), "rounds.tsv: damaged: made again") {
		t.Fatalf("%v %v", r.Err, r.Warnings)
	}
	sameSnapshot(t, "record made again", l.snapshot(), want)

	// Without a record, a damaged round file is still noticed: its
	// entries do not hash to what the note says was inscribed.
	stripRecord()
	overwrite(filepath.Join(folder, "rounds", "002.json"))
	r = updateOne(t, l, src, Options{Verify: true})
	var de *DamageError
	if !errors.As(r.Err, &de) || de.File != roundsDir(folder) {
		t.Errorf("%v, want a damage of the round files", r.Err)
	}
}

// TestVerifyGraph: check --store compares graph.tsv with the graph the
// round files give, a line at a time: a sound graph passes, with lines an
// update appended past the note's size or not; one changed or cut short
// is damage, and so is one deleted (issue 33).
//
// A long session's graph is built in a scratch file and compared as each
// round closes (BuilderGraph): the sample is checked so too.
func TestVerifyGraph(t *testing.T) {
	for _, inFile := range []int{defaultGraphInFile, 0} {
		t.Run(fmt.Sprintf("in a file past %d rounds", inFile), func(t *testing.T) {
			defer SetGraphInFileForTest(inFile)()
			testVerifyGraph(t)
		})
	}
}

func testVerifyGraph(t *testing.T) {
	_, src, md := recordStore(t)
	g := graphPath(folderOf(md))
	sound, err := os.ReadFile(g)
	if err != nil || len(sound) == 0 {
		t.Fatal(len(sound), err)
	}
	graphDamage := func() string {
		for _, err := range verifyDoc(md, claudeSrc, src) {
			var de *DamageError
			if errors.As(err, &de) && de.File == g {
				return de.Why
			}
		}
		return ""
	}
	last := bytes.LastIndexByte(sound[:len(sound)-1], '\n') + 1
	for _, c := range []struct {
		name, graph, want string
	}{
		{"sound", string(sound), ""},
		{"lines past what the note says", string(sound) + "x\ty\tz\n", ""},
		{"a byte changed", string(sound[:10]) + "#" + string(sound[11:]), "not the graph"},
		{"its last line changed", string(sound[:last]) + strings.Repeat("y", len(sound)-last-1) + "\n", "not the graph"},
		{"cut short", string(sound[:len(sound)-1]), "cut short"},
	} {
		if err := os.WriteFile(g, []byte(c.graph), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := graphDamage(); c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	os.Remove(g)
	if got := graphDamage(); !strings.Contains(got, "missing") {
		t.Errorf("no graph: %q", got)
	}
}

// TestAppendKeepsCheckTime: an append that checked only what it extends
// keeps, before its note, when the round files were last all checked
// (.rounds-checked: the inscription's note's time), across appends;
// inscribe, having checked every file changed since, removes it, and the
// note is what it was.
func TestAppendKeepsCheckTime(t *testing.T) {
	l, src, md := recordStore(t)
	folder := folderOf(md)
	note := statePath(folder)
	kept := func() string {
		b, err := os.ReadFile(checkedPath(folder))
		if errors.Is(err, fs.ErrNotExist) {
			return ""
		}
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	if kept() != "" {
		t.Fatalf("an inscription keeps a check time")
	}
	fi, err := os.Stat(note)
	if err != nil {
		t.Fatal(err)
	}
	want := strconv.FormatInt(changeTime(fi).UnixNano(), 10)
	for i := range 2 {
		afterChange(t, note)
		growSource(t, src)
		if r := updateOne(t, l, src, Options{}); r.Err != nil || r.Outcome != Appended {
			t.Fatalf("append %d: %s %v", i, r.Outcome, r.Err)
		}
		if got := kept(); got != want {
			t.Errorf("append %d: check time %q, want the inscription's note's time %s", i, got, want)
		}
	}
	before, _ := os.ReadFile(note)
	if r := updateOne(t, l, src, Options{Verify: true}); r.Err != nil || r.Outcome != Unchanged {
		t.Fatalf("inscribe: %s %v", r.Outcome, r.Err)
	}
	if got := kept(); got != "" {
		t.Errorf("inscribe left the check time %s", got)
	}
	if after, _ := os.ReadFile(note); !bytes.Equal(before, after) {
		t.Errorf("inscribe changed the note")
	}
}

// TestRecordReadAsChecked: the record of round files is read a line at a
// time as the files are checked (issue 33), and what it finds is what
// reading it whole first found: a record that does not read, wherever its
// damage, is the one finding, even after a round file found damaged
// before the damaged line; lines past the note's rounds_size (an update
// stopped before its note) are not read.
func TestRecordReadAsChecked(t *testing.T) {
	for _, c := range []struct {
		name   string
		damage func(record []byte) []byte
		sound  bool
	}{
		{"last line's sum", func(b []byte) []byte {
			i := bytes.LastIndexByte(b[:len(b)-1], '\t')
			return append(b[:i+1:i+1], "zzzzzzzz\n"...)
		}, false},
		{"cut in its last line", func(b []byte) []byte { return b[:len(b)-3] }, false},
		{"lines out of order", func(b []byte) []byte {
			lines := bytes.SplitAfter(b, []byte("\n"))
			lines[0], lines[1] = lines[1], lines[0]
			return bytes.Join(lines, nil)
		}, false},
		{"a line too long", func(b []byte) []byte {
			return append(b, append(bytes.Repeat([]byte("9"), 8<<10), "\t1\tabcdef01\n"...)...)
		}, false},
		{"lines past the note's size", func(b []byte) []byte { return append(b, "5\t99\tabcdef01\n"...) }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, src, md := recordStore(t)
			folder := folderOf(md)
			record := filepath.Join(folder, roundsFile)
			b, err := os.ReadFile(record)
			if err != nil || bytes.Count(b, []byte("\n")) != 4 {
				t.Fatalf("%q %v, want the four closed rounds' lines", b, err)
			}
			if c.name == "a line too long" {
				// Within the note's size: the note says so.
				st, err := readState(folder)
				if err != nil || st == nil {
					t.Fatal(err)
				}
				size := int64(len(c.damage(b)))
				st.RoundsSize = &size
				var wb atomicfile.Batch
				if err := writeState(&wb, folder, st); err != nil {
					t.Fatal(err)
				}
				if err := wb.Commit(); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(record, c.damage(b), 0o644); err != nil {
				t.Fatal(err)
			}
			// A round file cut short before the damaged line.
			if err := os.Truncate(roundPath(folder, 2), 100); err != nil {
				t.Fatal(err)
			}
			var cheap []error
			walkJoined(checkDoc(md), func(e error) {
				if e != nil {
					cheap = append(cheap, e)
				}
			})
			for what, errs := range map[string][]error{"CheckDoc": cheap, "VerifyDoc": verifyDoc(md, claudeSrc, src)} {
				var files []string
				for _, err := range errs {
					de := (*DamageError)(nil)
					if !errors.As(err, &de) {
						t.Fatalf("%s: %v, want damage", what, err)
					}
					files = append(files, filepath.Base(de.File))
				}
				want := "[rounds.tsv]"
				if c.sound {
					want = "[002.json]"
				}
				if fmt.Sprint(files) != want {
					t.Errorf("%s found %v, want %s", what, files, want)
				}
			}
		})
	}
}
