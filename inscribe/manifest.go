package inscribe

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/scribe-archive/scribe/internal/atomicfile"
	"github.com/scribe-archive/scribe/internal/osfile"
)

// The record of the round files. A closed round's file never changes, so
// what scribe wrote in it can be written down once: rounds.tsv, in the
// document's folder, has one line per closed round, "round TAB size TAB
// sum" (sums.go), appended as rounds close, and cut back to the read note's
// rounds_size before an update appends (as graph.tsv is). The open round's
// file, replaced at each update, has its size and sum in the note
// (open_round).
//
// What checks the files against the record, and when (trust):
//   - inscribe (Verify), and an update that writes after a file was added
//     to the rounds folder or removed from it since the note, first stats
//     every round file: one missing, or not of the size scribe wrote, is
//     damage. One that changed after the round files were last checked
//     (its ctime is later than the note's, or than .rounds-checked) is
//     hashed too. A file scribe wrote is never newer than the note of the
//     update that wrote it, so only a file something else touched since is
//     read: an overwrite of the same size is caught, and an unchanged store
//     is not read again.
//   - An append that finds new lines checks what it extends: the rounds
//     folder as a no-op append does (below), the record's last line and
//     the file of the round it names, and the open round's file
//     (appendSound). Before its note, it keeps the time the files were last
//     all checked in the document's local .rounds-checked (checkedSince),
//     so that the next inscribe still reads every file changed since: an
//     append costs what is new, not the session's length (issue 34), and
//     leaves an older file cut short or overwritten in place to inscribe,
//     check --store and repair. An update that checked them all removes it.
//   - An append that finds nothing new writes nothing: it lists the rounds
//     folder (a file deleted, added or renamed over another), and leaves
//     damage within a file to inscribe, or to check.
//   - check --store and repair hash every file.
// So no update puts a new note over a damaged file without a check that
// will see it: the time the trust rests on moves only after one.

// roundSum is what scribe wrote in a round file: its size and sum
// (sums.go). A note from before issue 33 has its open round's SHA-256 under
// "sha256" (readState moves it to Sum).
type roundSum struct {
	Round  int    `json:"round"`
	Size   int64  `json:"size"`
	Sum    string `json:"sum,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
}

// recordSum keeps the sum of a round file this update wrote: an open
// round's for the next note, a closed round's in the record at once,
// appended past what the last note recorded a buffer at a time (as the
// graph's lines are), so that an update holds no sum of each round it
// closes.
func (u *update) recordSum(s roundSum, open bool) error {
	if open {
		u.openSum = &s
		return nil
	}
	u.sumLines = appendSumLine(u.sumLines, s)
	if len(u.sumLines) < 32<<10 {
		return nil
	}
	return u.flushSums()
}

// flushSums appends the sums kept to the record (appendAt: cut back to
// what the last note recorded first).
func (u *update) flushSums() error {
	if !u.sumsStarted {
		u.sumsStarted = true
		if st := u.old; st != nil && st.RoundsSize != nil {
			u.sumsSize = *st.RoundsSize
		}
	}
	size, err := appendAt(&u.batch, filepath.Join(u.folder, roundsFile), u.sumsSize, string(u.sumLines))
	u.sumsSize, u.sumLines = size, u.sumLines[:0]
	return err
}

// recordRounds appends the sums of the rounds this update closed to the
// record, after what the last note recorded, and puts the record's new
// size and the open round's sum in the next note.
func (u *update) recordRounds(next *docState) error {
	err := u.flushSums()
	size := u.sumsSize
	next.RoundsSize = &size
	next.OpenRound = u.openSum
	return err
}

// appendSums appends sums to a record, after its first size bytes, durable
// once b commits (appendAt). It returns the record's new size.
func appendSums(b *atomicfile.Batch, path string, size int64, sums []roundSum) (int64, error) {
	var lines []byte
	for _, s := range sums {
		lines = appendSumLine(lines, s)
	}
	return appendAt(b, path, size, string(lines))
}

// appendSumLine appends a round's line of the record (parseSumLine reads
// it).
func appendSumLine(b []byte, s roundSum) []byte {
	return fmt.Appendf(b, "%d\t%d\t%s\n", s.Round, s.Size, s.Sum)
}

// appendAt cuts a file back to size bytes (what the last finished update
// left) and appends text. It returns the new size. The file is flushed to
// disk with b's files, before any of them is put in place (the note that
// records the new size is one of them).
func appendAt(b *atomicfile.Batch, path string, size int64, text string) (int64, error) {
	if fi, err := os.Stat(path); err == nil && fi.Size() > size {
		if err := os.Truncate(path, size); err != nil {
			return 0, err
		}
	}
	if text == "" {
		return size, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, FileMode)
	if err != nil {
		return 0, err
	}
	n, err := f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	b.SyncFirst(path)
	return size + int64(n), err
}

// errRecord is a record of round files that does not hold what its note
// says (deleted, cut short or overwritten).
var errRecord = errors.New("the record of the round files is damaged")

// sumReader reads the first size bytes of a record a line at a time, so
// that what checks a long session's round files against it holds a line
// of it, not the record: read whole, the record of the 500,000 rounds of a
// million tiny lines was 26 MB in memory (issue 33).
type sumReader struct {
	f    *os.File
	br   *bufio.Reader
	left int64 // of the size bytes, those not read yet
	n    int   // the rounds read
}

// openSums opens the first size bytes of a record. A record that is not
// there is errRecord, unless size is 0 (nothing recorded yet).
func openSums(path string, size int64) (*sumReader, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) && size == 0 {
		return &sumReader{}, nil
	}
	if err != nil {
		return nil, errRecord
	}
	return &sumReader{f: f, br: bufio.NewReaderSize(f, 4<<10), left: size}, nil
}

// next returns the next round's sum, or io.EOF after the last. The size
// bytes must be whole lines that read (parseSumLine), numbered from 1:
// anything else is errRecord.
func (r *sumReader) next() (roundSum, error) {
	if r.left <= 0 {
		return roundSum{}, io.EOF
	}
	// A line is well under the buffer's size (lastSum): a longer one
	// does not read.
	line, err := r.br.ReadSlice('\n')
	if err != nil || int64(len(line)) > r.left {
		return roundSum{}, errRecord
	}
	r.left -= int64(len(line))
	s, ok := parseSumLine(string(line[:len(line)-1]))
	if !ok || s.Round != r.n+1 {
		return roundSum{}, errRecord
	}
	r.n++
	return s, nil
}

func (r *sumReader) close() {
	if r.f != nil {
		r.f.Close()
	}
}

// eachSum calls fn (when not nil) with each round's sum in the first size
// bytes of a record, in order, and returns errRecord when they do not all
// read (sumReader), else fn's first error. The rounds before a damaged
// line have been given to fn: a caller that may not act on a damaged
// record's rounds acts once it returns nil (rebuildNote,
// inscribedFromRounds), or reads it once with a nil fn first (mend.record,
// which looks rounds up as it goes).
func eachSum(path string, size int64, fn func(roundSum) error) error {
	r, err := openSums(path, size)
	if err != nil {
		return err
	}
	defer r.close()
	for {
		s, err := r.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if fn != nil {
			if err := fn(s); err != nil {
				return err
			}
		}
	}
}

// parseSumLine reads a line of a record, without its line end; the sum is
// a substring of line.
func parseSumLine(line string) (roundSum, bool) {
	f0, rest, ok1 := strings.Cut(line, "\t")
	f1, f2, ok2 := strings.Cut(rest, "\t")
	if !ok1 || !ok2 || strings.Contains(f2, "\t") || !validSum(f2) {
		return roundSum{}, false
	}
	n, err1 := strconv.Atoi(f0)
	sz, err2 := strconv.ParseInt(f1, 10, 64)
	if err1 != nil || err2 != nil || n < 1 || sz < 0 {
		return roundSum{}, false
	}
	return roundSum{Round: n, Size: sz, Sum: f2}, true
}

// lastSum reads the last line of a record's first size bytes (size > 0),
// and only that: the record of the round an append extends the session
// after. A record shorter than size, or whose last line does not read, is
// errRecord.
func lastSum(path string, size int64) (roundSum, error) {
	f, err := osfile.Open(path)
	if err != nil {
		return roundSum{}, errRecord
	}
	defer f.Close()
	// A line is a number, a size and a sum: well under 128 bytes, but for
	// a SHA-256 (64 hex digits) of a store before issue 33.
	buf := make([]byte, min(size, 160))
	if _, err := f.ReadAt(buf, size-int64(len(buf))); err != nil || buf[len(buf)-1] != '\n' {
		return roundSum{}, errRecord
	}
	line := buf[:len(buf)-1]
	i := bytes.LastIndexByte(line, '\n')
	if i < 0 && int64(len(buf)) < size {
		return roundSum{}, errRecord // longer than a line scribe writes
	}
	s, ok := parseSumLine(string(line[i+1:]))
	if !ok {
		return roundSum{}, errRecord
	}
	return s, nil
}

// How checkSums reads the round files.
type sumCheck int

const (
	sizesOnly   sumCheck = iota // their sizes (one stat each)
	changedOnes                 // their sizes, and the bytes of those changed after the note (trust)
	allBytes                    // their sizes and bytes
)

// checkSums checks a document's round files against its note and record,
// as how says. It returns one *DamageError per damaged file, or errRecord
// when the record itself is damaged.
//
// The open round's file is the one file an update replaces before its note
// (a kill between the two leaves the new file beside the old note): one
// that is not what the note says is damaged only if it does not hold the
// source's lines from where the open round starts (src, when given; else
// it must read as that round's file, from its first line).
func checkSums(folder, session string, st *docState, how sumCheck, src io.ReaderAt) error {
	var noted time.Time // hash the files that changed after it
	if how == changedOnes {
		fi, err := os.Stat(statePath(folder))
		if err != nil {
			how = allBytes
		} else {
			noted = checkedSince(folder, changeTime(fi))
		}
	}
	var errs []error
	dir := roundsDir(folder) + string(filepath.Separator)
	last := 0
	check := func(s roundSum, open bool) {
		p := dir + roundName(s.Round)
		err := checkSumSince(p, s, how == allBytes, noted)
		if err != nil && open && newerOpen(p, st, src) {
			err = nil
		}
		if err != nil {
			errs = append(errs, &DamageError{Session: session, File: p, Why: err.Error()})
		}
		last = s.Round
	}
	// The record is read as the files are checked: a line that does not
	// read makes it errRecord, and what was found before it is dropped.
	err := eachRecorded(folder, st, func(s roundSum) error {
		check(s, false)
		return nil
	})
	if err != nil {
		return err
	}
	if st.OpenRound != nil {
		check(*st.OpenRound, true)
	}
	// A file put in the folder since the note (the folder changed after
	// it) may be one scribe did not write.
	if how != changedOnes || !folderSettled(roundsDir(folder), noted) {
		errs = append(errs, strayRounds(folder, session, last)...)
	}
	return errors.Join(errs...)
}

// checkedSince is when the round files of the document in folder were
// last all checked: the time .rounds-checked keeps, when an append wrote
// its note without checking them all, else noted (the note's change time).
func checkedSince(folder string, noted time.Time) time.Time {
	b, err := os.ReadFile(checkedPath(folder))
	if err != nil {
		return noted
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if t := time.Unix(0, ns); err == nil && t.Before(noted) {
		return t
	}
	return noted
}

// keepChecked records, in b before the note, when the round files were
// last all checked (since), unless a time is kept already.
func keepChecked(b *atomicfile.Batch, folder string, since time.Time) error {
	p := checkedPath(folder)
	if _, err := os.Lstat(p); err == nil {
		return nil
	}
	_, err := b.WriteIfChanged(p, []byte(strconv.FormatInt(since.UnixNano(), 10)+"\n"), FileMode)
	return err
}

// folderSettled reports whether nothing was added to the folder dir or
// removed from it since noted: its change time is earlier (see
// update.roundsListChanged).
func folderSettled(dir string, noted time.Time) bool {
	fi, err := os.Stat(dir)
	return err == nil && !noted.IsZero() && changeTimeTrusted && changeTime(fi).Before(noted)
}

// strayRounds returns a *DamageError for each file of the document's
// rounds folder named as a round file that scribe did not write: numbered
// beyond the last round recorded (last) after a gap. (The rounds right
// after the last, without a gap, are those an update stopped before its
// note wrote, which the next update writes again.) A sync tool's copy of
// another machine's round file is one: kept, it would read as a round of
// this session (export, the indexes). scribe repair sets it aside.
func strayRounds(folder, session string, last int) []error {
	ns, err := roundNumbers(roundsDir(folder))
	if err != nil {
		return nil
	}
	var errs []error
	next := last + 1
	for _, n := range ns {
		switch {
		case n <= last:
		case n == next:
			next++
		default:
			errs = append(errs, &DamageError{Session: session, File: roundPath(folder, n),
				Why: fmt.Sprintf("a round file scribe did not write: the session's rounds end at %d (a sync tool's copy of another machine's file?); scribe repair sets it aside", last)})
		}
	}
	return errs
}

// setStraysAside renames the round files of the folder beyond the last
// round (last) to <name>.stray-<time>, beside them, for whoever wants to
// look at them, and says so.
func setStraysAside(folder string, last int, say func(string, ...any)) error {
	ns, err := roundNumbers(roundsDir(folder))
	if err != nil {
		return nil
	}
	for _, n := range ns {
		if n <= last {
			continue
		}
		p := roundPath(folder, n)
		to := p + ".stray-" + time.Now().UTC().Format("20060102T150405.000Z")
		if err := os.Rename(p, to); err != nil {
			return err
		}
		say("%s: a round file scribe did not write (the session's rounds end at %d): set aside as %s", p, last, filepath.Base(to))
	}
	return nil
}

// newerOpen reports whether the file of the note's open round is one an
// update stopped after putting it in place wrote: that round's file, from
// the round's first line, its lines the source's from there (when src is
// given), at least as many as were read.
func newerOpen(p string, st *docState, src io.ReaderAt) bool {
	rf, err := readRound(p)
	if err != nil || rf.Round != st.OpenRound.Round || rf.Lines[0] != st.OpenLine {
		return false
	}
	if src == nil {
		return true
	}
	got, err := roundBytes(rf)
	if err != nil || int64(len(got)) < st.Seen-st.OpenOffset {
		return false
	}
	same, err := atomicfile.SameReader(io.NewSectionReader(src, st.OpenOffset, int64(len(got))), bytes.NewReader(got))
	return err == nil && same
}

// checkSum checks one file against its sum: its size (one stat), and with
// full its bytes.
func checkSum(p string, s roundSum, full bool) error { return checkSumSince(p, s, full, time.Time{}) }

// checkSumSince is checkSum that also reads the bytes of a file that
// changed after noted (when not zero).
func checkSumSince(p string, s roundSum, full bool, noted time.Time) error {
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return errors.New("missing (deleted?)")
	}
	if err != nil {
		return err
	}
	if fi.Size() != s.Size {
		return fmt.Errorf("%d bytes, but scribe wrote %d (cut short or overwritten)", fi.Size(), s.Size)
	}
	if !full && (noted.IsZero() || !changeTime(fi).After(noted)) {
		return nil
	}
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sumOf(s.Sum)
	if _, err := copySum(h, f); err != nil {
		return err
	}
	if sumString(h) != s.Sum {
		return errSum
	}
	return nil
}

// sumExisting records the sums of round files written before there was a
// record (or whose record was lost), from the files themselves, once they
// are checked against what the note says was inscribed: the closed rounds'
// entries must hash to closed_hash, and the open round's be as long as
// what was read after them.
func sumExisting(folder, session string, st *docState) (closed []roundSum, open *roundSum, err error) {
	damage := func(p, why string) error { return &DamageError{Session: session, File: p, Why: why} }
	h := newClosedCheck(st.ClosedHash)
	var off int64
	n := 1
	for ; off < st.OpenOffset; n++ {
		p := roundPath(folder, n)
		s, rf, err := readSummed(p)
		if err != nil {
			return nil, nil, damage(p, err.Error())
		}
		if rf.Open {
			return nil, nil, damage(p, "holds an open round where the read note has a closed one")
		}
		got, err := roundBytes(rf)
		if err != nil {
			return nil, nil, damage(p, err.Error())
		}
		h.Write(got)
		off += int64(len(got))
		closed = append(closed, s)
	}
	if off != st.OpenOffset || !h.ok() {
		return nil, nil, damage(roundsDir(folder), "the closed round files do not hold the bytes inscribed from the source (a file was overwritten or damaged)")
	}
	p := roundPath(folder, n)
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) && st.Seen == st.OpenOffset {
		return closed, nil, nil
	}
	s, rf, err := readSummed(p)
	if err != nil {
		return nil, nil, damage(p, err.Error())
	}
	got, err := roundBytes(rf)
	if err != nil {
		return nil, nil, damage(p, err.Error())
	}
	// (More, when an update was stopped after putting it in place.)
	if int64(len(got)) < st.Seen-st.OpenOffset {
		return nil, nil, damage(p, "does not hold the source's lines it was written from (overwritten or damaged)")
	}
	return closed, &s, nil
}

// readSummed reads a round file and its sum.
func readSummed(p string) (roundSum, *RoundFile, error) {
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return roundSum{}, nil, errors.New("missing (deleted?)")
	}
	if err != nil {
		return roundSum{}, nil, err
	}
	var rf RoundFile
	if err := json.Unmarshal(data, &rf); err != nil {
		return roundSum{}, nil, fmt.Errorf("unreadable (cut short or overwritten?): %v", err)
	}
	return roundSum{Round: rf.Round, Size: int64(len(data)), Sum: fileSum(0).add(data).String()}, &rf, nil
}

// roundBytes is the source's bytes a round file holds.
func roundBytes(rf *RoundFile) ([]byte, error) {
	var buf bytes.Buffer
	if err := writeEntries(&buf, rf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
