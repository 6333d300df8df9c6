package inscribe

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/scribe-archive/scribe/internal/atomicfile"
)

// A document's read note (state.json) and graph (graph.tsv) are the
// machine's own: they say where the source is on this machine and how far
// it was read, and they lie in .scribe/, which a clone of the store does
// not carry (layout.go). Everything else they hold is a function of the
// record. So a document that has no note on this machine (a clone, a store
// whose .scribe/ was deleted) gets one from its record the first time it
// is updated: the round files the record vouches for are inscribed afresh
// in a scratch folder, as repair does, which gives the note and the graph
// an inscription of those very bytes writes (an inscription is
// deterministic), and the note is then placed on this document. Each round
// file is read once; nothing of the source is.

// recordOnly is the note a document without one on this machine is checked
// with (checkDoc, verifyDoc): its record of closed round files, and nothing
// of the open one, whose sum only a note holds. It is nil when there is no
// record to check with. A session whose only round is still open has
// an empty record, which is no file at all.
func recordOnly(folder string) *docState {
	var size int64
	fi, err := os.Stat(filepath.Join(folder, roundsFile))
	switch {
	case err == nil:
		size = fi.Size()
	case !errors.Is(err, fs.ErrNotExist) || exists(roundPath(folder, 2)):
		return nil
	default:
		if rf, err := readRoundHeader(roundPath(folder, 1)); err == nil && !rf.Open {
			return nil // a closed round the record lacks: lost
		}
	}
	return &docState{RoundsSize: &size}
}

// rebuildNote makes the read note of a document that has none on this
// machine from its record, writes it and its graph, and returns it. It
// returns nil, and writes nothing, when the record cannot vouch for the
// round files (no record of them: a store from before rounds.tsv, or one
// damaged): the document then needs a repair, or a rebuild.
func (u *update) rebuildNote() (*docState, error) {
	folder := u.folder
	rec := recordOnly(folder)
	if rec == nil {
		return nil, nil
	}
	record := filepath.Join(folder, roundsFile)
	scratch, err := os.MkdirTemp(folder, ".repair.tmp-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)

	// The bytes the round files hold: the closed rounds' as the record
	// vouches for them, then the open round's (the note alone has its
	// sum: it is inscribed again below, and must come out the same).
	src := filepath.Join(scratch, "source", filepath.Base(u.spec.source))
	if err := os.MkdirAll(filepath.Dir(src), DirMode); err != nil {
		return nil, err
	}
	out, err := os.OpenFile(src, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, FileMode)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	// A round file that does not hold what the record says is damage,
	// unless the record itself does not read to its end: it is read on.
	closed, oldSums := 0, false
	var damaged error
	err = eachSum(record, *rec.RoundsSize, func(s roundSum) error {
		if s.Round == 1 {
			oldSums = isSHA(s.Sum)
		}
		if damaged != nil {
			return nil
		}
		p := roundPath(folder, s.Round)
		if err := checkSum(p, s, true); err != nil {
			damaged = &DamageError{Session: u.spec.id, File: p, Why: err.Error()}
		} else if err := copyEntries(out, p); err != nil {
			damaged = &DamageError{Session: u.spec.id, File: p, Why: err.Error()}
		}
		closed = s.Round
		return nil
	})
	if errors.Is(err, errRecord) {
		return nil, nil
	}
	if err == nil {
		err = damaged
	}
	if err != nil {
		return nil, err
	}
	openPath := roundPath(folder, closed+1)
	if _, err := os.Stat(openPath); err == nil {
		if err := copyEntries(out, openPath); err != nil {
			return nil, &DamageError{Session: u.spec.id, File: openPath, Why: err.Error()}
		}
	}
	if err := out.Close(); err != nil {
		return nil, err
	}

	// Inscribed afresh, with the store's redactor (the round files of a
	// redacting store hold redacted lines, which it leaves as they are).
	fresh := &Store{Root: filepath.Join(scratch, "store"), Redact: u.store.Redact}
	spec := u.spec
	spec.md = filepath.Join(fresh.Root, filepath.Base(u.spec.md))
	spec.source = src
	spec.files = nil
	f := fresh.newUpdate(spec, Options{}, &Result{})
	if err := atomicfile.MkdirAll(f.folder, DirMode); err != nil {
		return nil, err
	}
	err = f.run()
	f.batch.Abort()
	f.rounds.close()
	if err != nil {
		return nil, fmt.Errorf("%s: make its read note from its round files: %w", u.spec.md, err)
	}
	note, err := readState(f.folder)
	if err != nil || note == nil {
		return nil, fmt.Errorf("%s: make its read note from its round files: none was written", u.spec.md)
	}

	// The fresh inscription wrote the same round files, or the record does
	// not describe these ones.
	n := closed
	if note.OpenRound != nil {
		n = note.OpenRound.Round
	}
	for r := 1; r <= n; r++ {
		same, err := sameFile(roundPath(folder, r), roundPath(f.folder, r))
		if err != nil {
			return nil, err
		}
		if !same {
			return nil, &DamageError{Session: u.spec.id, File: roundPath(folder, r),
				Why: "its lines do not inscribe as this round file (damaged, or written by another scribe)"}
		}
	}

	// Placed on this document: its source, and where its open round
	// starts in it. The document's tail is the fresh one's unless a person
	// edited it, and then the update that would replace it says so
	// (EditedError), as it does for a note kept on this machine.
	note.Source = u.store.recordedSource(u.spec.source)
	freshSize, err := fileSize(spec.md)
	if err != nil {
		return nil, err
	}
	tail := freshSize - note.DocOpenAt
	mf, err := os.Open(u.spec.md)
	if err != nil {
		return nil, err
	}
	defer mf.Close()
	fi, err := mf.Stat()
	if err != nil {
		return nil, err
	}
	at := fi.Size() - tail
	if same, err := rangeIs(mf, fi.Size(), tail, note.DocTailHash); err != nil || at < 0 || !same {
		if note.OpenFirstID == "" {
			return nil, nil
		}
		if at, err = locateItem(mf, fi.Size(), at, note.OpenFirstID); err != nil || at < 0 {
			return nil, err
		}
	}
	note.DocOpenAt = at

	// The record as the fresh inscription wrote it: the same, but for a
	// record of SHA-256s an earlier store wrote, which the fresh note's
	// rounds_size does not describe (its sums are brought forward so, the
	// round files being the fresh ones byte for byte; sums.go).
	if oldSums {
		if fresh, err := os.ReadFile(filepath.Join(f.folder, roundsFile)); err == nil {
			if _, err := u.batch.WriteIfChanged(record, fresh, FileMode); err != nil {
				return nil, err
			}
		}
	}

	graph, err := os.ReadFile(graphPath(f.folder))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	gp := graphPath(folder)
	if err := u.batch.MkdirAll(filepath.Dir(gp), DirMode); err != nil {
		return nil, err
	}
	if _, err := u.batch.WriteIfChanged(gp, graph, FileMode); err != nil {
		return nil, err
	}
	if err := writeState(&u.batch, folder, note); err != nil {
		return nil, err
	}
	if err := u.batch.Commit(); err != nil {
		return nil, err
	}
	return readState(folder)
}

// fileSize is the size of the file at p.
func fileSize(p string) (int64, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}
