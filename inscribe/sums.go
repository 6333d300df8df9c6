package inscribe

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// The store's sums. What scribe records of the bytes it read and wrote (a
// round file's sum in rounds.tsv; the read note's sums of the source, of its
// closed rounds' bytes and of the document's tail) is there to notice
// damage and a source another file replaced. No adversary picks those
// bytes to collide with a sum: one who can write the store can write its
// record too. So a sum is a CRC32C (Castagnoli), which CPUs compute in
// hardware at many GB/s, written as 8 hex digits. Each byte is summed once
// where it is read or written: the source's lines as the update reads
// them (not read again), a round file as it is written.
//
// Stores written before held SHA-256s (about 0.4 GB/s of one core on a CPU
// without SHA extensions, a third of an inscription's CPU there): 64 hex
// digits, and a closed_hash in base64, the marshalled state of a running
// SHA-256. They are still read and checked as they are, and an update of a
// document brings its sums forward (upgradeSums).

// castagnoli returns the CRC32C table; hash/crc32 uses the CPU's
// instruction (SSE 4.2 on amd64, CRC on arm64) for it. It is made on first
// use, not at start-up: making it computes hash/crc32's tables for the
// instruction, 0.15 to 0.25 ms of every process (of scribe version's 6,
// of a search's 15), where most commands (search, show, list) sum nothing.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// crcText is the text of a sum.
func crcText(c uint32) string {
	var b [8]byte
	const digits = "0123456789abcdef"
	for i := 7; i >= 0; i-- {
		b[i] = digits[c&15]
		c >>= 4
	}
	return string(b[:])
}

// isSHA reports whether a recorded sum is a SHA-256 from an earlier store.
func isSHA(sum string) bool { return len(sum) == 2*sha256.Size }

// sumOf returns a hash of the kind of a recorded sum (a hex SHA-256 or a
// CRC32C), and the recorded sum's text as that hash's sum would print.
func sumOf(want string) hash.Hash {
	if isSHA(want) {
		return sha256.New()
	}
	return crc32.New(castagnoli())
}

// sumString is h's sum as the store writes it.
func sumString(h hash.Hash) string {
	if c, ok := h.(hash.Hash32); ok {
		return crcText(c.Sum32())
	}
	return hex.EncodeToString(h.Sum(nil))
}

// rangeSum returns the sum of f's bytes [max(0, end-window), end).
func rangeSum(f io.ReaderAt, end, window int64) (string, error) {
	return rangeSumAs(f, end, window, "")
}

// rangeIs reports whether f's bytes [max(0, end-window), end) have the
// recorded sum want, of whichever kind it is.
func rangeIs(f io.ReaderAt, end, window int64, want string) (bool, error) {
	got, err := rangeSumAs(f, end, window, want)
	return err == nil && got == want, err
}

func rangeSumAs(f io.ReaderAt, end, window int64, kind string) (string, error) {
	start := max(0, end-window)
	h := sumOf(kind)
	if _, err := copySum(h, io.NewSectionReader(f, start, end-start)); err != nil {
		return "", err
	}
	return sumString(h), nil
}

// sumBufs are the buffers copySum reads through.
var sumBufs = sync.Pool{New: func() any { return new([64 << 10]byte) }}

// copySum copies r to a hash, as io.Copy would, through a buffer kept for
// the next.
func copySum(h io.Writer, r io.Reader) (int64, error) {
	buf := sumBufs.Get().(*[64 << 10]byte)
	defer sumBufs.Put(buf)
	return io.CopyBuffer(h, r, buf[:])
}

// fileSum is the running sum of the closed rounds' source bytes that a
// read note keeps (closed_hash): a CRC32C, continued by the next update
// from where the last one left it.
type fileSum uint32

func (s fileSum) String() string { return crcText(uint32(s)) }

// add continues the sum over b.
func (s fileSum) add(b []byte) fileSum {
	return fileSum(crc32.Update(uint32(s), castagnoli(), b))
}

var newline = []byte{'\n'}

// addLine continues the sum over a line and, when it has one, its line
// end.
func (s fileSum) addLine(raw []byte, terminated bool) fileSum {
	s = s.add(raw)
	if terminated {
		s = s.add(newline)
	}
	return s
}

// parseClosed reads a note's closed_hash. ok is false for a SHA-256 state
// from an earlier store (upgradeSums) and for one that cannot be read.
func parseClosed(s string) (sum fileSum, ok bool) {
	if s == "" {
		return 0, true // nothing closed yet
	}
	if len(s) != 8 {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 16, 32)
	return fileSum(n), err == nil
}

// closedCheck sums the closed rounds' bytes as they are read again, to
// compare them with a note's closed_hash of either kind: a CRC32C always
// (upgradeSums keeps it), and the SHA-256 an earlier store's note holds.
type closedCheck struct {
	want string
	crc  fileSum
	sha  hash.Hash
}

func newClosedCheck(want string) *closedCheck {
	c := &closedCheck{want: want}
	if _, ok := parseClosed(want); !ok {
		c.sha = sha256.New()
	}
	return c
}

func (c *closedCheck) Write(b []byte) (int, error) {
	c.crc = c.crc.add(b)
	if c.sha != nil {
		c.sha.Write(b)
	}
	return len(b), nil
}

// ok reports whether the bytes written are those the note summed.
func (c *closedCheck) ok() bool {
	if c.sha == nil {
		return c.crc.String() == c.want || c.want == "" && c.crc == 0
	}
	want, err := unmarshalHash(c.want)
	return err == nil && bytes.Equal(c.sha.Sum(nil), want.Sum(nil))
}

// checkClosed reads r (the closed rounds' bytes) and reports whether they
// are what closed_hash summed, and their CRC32C.
func checkClosed(r io.Reader, closedHash string) (fileSum, bool, error) {
	c := newClosedCheck(closedHash)
	if _, err := copySum(c, r); err != nil {
		return 0, false, err
	}
	return c.crc, c.ok(), nil
}

// sumWriter passes what is written on, counting and summing it.
type sumWriter struct {
	w   io.Writer
	crc fileSum
	n   int64
}

func newSumWriter(w io.Writer) *sumWriter { return &sumWriter{w: w} }

func (s *sumWriter) Write(b []byte) (int, error) {
	n, err := s.w.Write(b)
	s.crc = s.crc.add(b[:n])
	s.n += int64(n)
	return n, err
}

func (s *sumWriter) sum(round int) roundSum {
	return roundSum{Round: round, Size: s.n, Sum: s.crc.String()}
}

// errSum is a file whose bytes do not have the sum recorded.
var errSum = errors.New("its bytes are not those scribe wrote (overwritten or damaged)")

// validSum reports whether s is a recorded sum of either kind.
func validSum(s string) bool {
	if len(s) != 8 && !isSHA(s) {
		return false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// oldSums reports whether a note holds sums of an earlier store: its
// closed_hash, or its open round's sum, a SHA-256.
func (st *docState) oldSums() bool {
	_, ok := parseClosed(st.ClosedHash)
	return !ok || st.OpenRound != nil && isSHA(st.OpenRound.Sum)
}

// eachRecorded calls fn with each round of the record of a document's
// closed round files, as far as its note says (rounds_size), in order
// (eachSum: errRecord when it does not read). A note from before issue 33
// beside a shorter record of CRC32Cs is an upgrade a kill cut short
// (upgradeSums puts the record in place before the note): that record
// holds the rounds the note closed, no more, and is read whole.
func eachRecorded(folder string, st *docState, fn func(roundSum) error) error {
	path := filepath.Join(folder, roundsFile)
	size, cut := *st.RoundsSize, false
	if st.oldSums() {
		if fi, err := os.Stat(path); err == nil && fi.Size() < size {
			size, cut = fi.Size(), true
		}
	}
	read := false
	err := eachSum(path, size, func(s roundSum) error {
		if cut && !read && isSHA(s.Sum) {
			return errRecord
		}
		read = true
		if fn == nil {
			return nil
		}
		return fn(s)
	})
	if err == nil && cut && !read {
		err = errRecord
	}
	return err
}

// upgradeSums brings the sums of a document an earlier store wrote
// forward, in place, the first time an update reads its note: the note's
// closed_hash is summed again from the source's closed bytes (which must
// still have the SHA-256 it held, as for an inscription; checkClosed), and
// each round file the record has a SHA-256 of is read once, checked
// against it and summed (a file that is not what was written is a
// *DamageError, as for check --store). The record is written whole, then
// the note (recordOf). The note's other sums are left: they are compared
// as what they are (rangeIs), and the next update that writes replaces
// them.
func (u *update) upgradeSums() error {
	st := u.old
	if st == nil || !st.oldSums() {
		return nil
	}
	next := *st
	if _, ok := parseClosed(st.ClosedHash); !ok {
		sum := u.closedRead
		if sum == nil {
			s, ok, err := checkClosed(io.NewSectionReader(u.src, 0, st.OpenOffset), st.ClosedHash)
			if err != nil {
				return err
			}
			if !ok {
				return &SourceError{Source: u.spec.source, Doc: u.spec.md,
					Why: "the source's first bytes differ from what was inscribed (another file took its place)"}
			}
			sum = &s
			u.closedRead = sum
		}
		next.ClosedHash = sum.String()
	}
	if st.RoundsSize != nil {
		var errs []error
		var sb []byte
		err := eachRecorded(u.folder, st, func(s roundSum) error {
			if isSHA(s.Sum) {
				p := roundPath(u.folder, s.Round)
				var err error
				if s.Sum, err = sumAgain(p, s); err != nil {
					errs = append(errs, &DamageError{Session: u.spec.id, File: p, Why: err.Error()})
				}
			}
			sb = appendSumLine(sb, s)
			return nil
		})
		if err != nil {
			return &DamageError{Session: u.spec.id, File: filepath.Join(u.folder, roundsFile), Why: "missing or damaged: it does not hold what the read note says"}
		}
		if len(errs) > 0 {
			return errors.Join(errs...)
		}
		if size := int64(len(sb)); size != *st.RoundsSize {
			if _, err := u.batch.WriteIfChanged(filepath.Join(u.folder, roundsFile), sb, FileMode); err != nil {
				return err
			}
			next.RoundsSize = &size
		}
	}
	if o := st.OpenRound; o != nil && isSHA(o.Sum) {
		// The open round's file may be one an update stopped after
		// putting it in place wrote (checkSums): its sum is then left,
		// and the next update that writes replaces it.
		if sum, err := sumAgain(roundPath(u.folder, o.Round), *o); err == nil {
			open := *o
			open.Sum = sum
			next.OpenRound = &open
		}
	}
	if err := writeState(&u.batch, u.folder, &next); err != nil {
		return err
	}
	if err := u.batch.Commit(); err != nil {
		return err
	}
	u.old, u.noteChanged = &next, time.Time{}
	return nil
}

// sumAgain reads a round file an earlier store recorded the SHA-256 of, and
// returns its CRC32C once it has that SHA-256.
func sumAgain(p string, s roundSum) (string, error) {
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", errors.New("missing (deleted?)")
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	sha := sha256.New()
	crc := crc32.New(castagnoli())
	n, err := copySum(io.MultiWriter(sha, crc), f)
	if err != nil {
		return "", err
	}
	if n != s.Size {
		return "", fmt.Errorf("%d bytes, but scribe wrote %d (cut short or overwritten)", n, s.Size)
	}
	if hex.EncodeToString(sha.Sum(nil)) != s.Sum {
		return "", errSum
	}
	return crcText(crc.Sum32()), nil
}
