package inscribe

import (
	"crypto/sha256"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/scribe-archive/scribe/internal/atomicfile"
	"github.com/scribe-archive/scribe/internal/osfile"
	"github.com/scribe-archive/scribe/session/source"
)

// stateVersion changes when the state's meaning changes; a state of another
// version is ignored (the document is rebuilt from its source).
const stateVersion = 1

// docState is a document's read note, <folder>/state.json: where its source
// was read up to, and what the builder needs to continue from there.
// Without it, scribe cannot tell which of the document's items a person
// wrote, so it refuses to update the document until told to rebuild it
// from its source (MissingNoteError, Options.Rebuild).
type docState struct {
	Version int    `json:"version"`
	Source  string `json:"source"`
	// Size is the source's size at the last update and TailHash the sum
	// (sums.go) of its last (at most) 64 KiB: when both still hold, nothing
	// is new.
	Size     int64  `json:"size"`
	TailHash string `json:"tail_hash"`
	// Seen is the offset just past the last line inscribed. A torn last
	// line lies beyond it.
	Seen int64 `json:"seen"`
	// The open round starts at OpenOffset, on line OpenLine. Everything
	// before it belongs to closed rounds, whose files are final. ClosedHash
	// is the running sum of those bytes (fileSum, continued by the next
	// update) and ClosedTail the sum of their last 64 KiB (a quick check
	// that the source was not replaced).
	OpenOffset int64  `json:"open_offset"`
	OpenLine   int    `json:"open_line"`
	ClosedHash string `json:"closed_hash"`
	ClosedTail string `json:"closed_tail"`
	// The open round's items: the first one's identity, where it starts in
	// the document, and a sum of the document from there to its end (to
	// notice a person's edit of the provisional tail).
	OpenFirstID string `json:"open_first_id,omitempty"`
	DocOpenAt   int64  `json:"doc_open_at"`
	DocTailHash string `json:"doc_tail_hash"`
	// Builder is the source adapter's state at the last closed round, its
	// own bytes (source.Builder.State).
	Builder json.RawMessage `json:"builder"`
	// DocFormat is the format (session.FormatVersion) the document was
	// written in; an update brings an older one forward even when its
	// source is unchanged. Notes from before it have none.
	DocFormat string `json:"doc_format,omitempty"`
	// GraphSize is the size of graph.tsv when this note was written: lines
	// past it were appended by an update that did not finish, and are
	// dropped before appending again.
	GraphSize int64 `json:"graph_size"`
	// RoundsSize is the size of rounds.tsv, the record of the closed round
	// files, when this note was written: lines past it were appended by an
	// update that did not finish. OpenRound is the size and hash of the
	// open round's file. Notes from before them have neither (nil).
	RoundsSize *int64    `json:"rounds_size,omitempty"`
	OpenRound  *roundSum `json:"open_round,omitempty"`
	// Next is set while an update commits: the note as it will be once the
	// document is in place. A kill between the two leaves both, and the
	// document itself says which one holds (see resolveState).
	Next *docState `json:"next,omitempty"`
	// None marks a note that holds only Next: the update that wrote it
	// built the document from nothing (a first inscription, a rebuild), so
	// when Next does not hold there is no note at all.
	None bool `json:"none,omitempty"`

	// changed is the note's change time (ctime) when it was read.
	changed time.Time
}

// Seen returns how far the source of the document in folder was read, by
// its read note: -1 when it has none.
func Seen(folder string) (int64, error) {
	st, err := readState(folder)
	if err != nil || st == nil {
		return -1, err
	}
	return st.Seen, nil
}

// readState reads the read note of the document in folder: nil when it has
// none, or none scribe can read.
func readState(folder string) (*docState, error) {
	f, err := osfile.Open(statePath(folder))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	data := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, nil // cut short while read: as if unreadable
	}
	if !utf8.Valid(data) {
		// scribe writes a note in UTF-8, its builder's state too: bytes
		// that are not are damage, even where JSON would take them (in a
		// key, say).
		return nil, nil
	}
	var st docState
	if !decodeState(data, &st) {
		st = docState{}
		if err := json.Unmarshal(data, &st); err != nil {
			return nil, nil // unreadable: as if missing
		}
	}
	if st.Version != stateVersion {
		return nil, nil // unreadable: as if missing
	}
	st.changed = changeTime(fi)
	for n := &st; n != nil; n = n.Next {
		if r := n.OpenRound; r != nil && r.Sum == "" {
			r.Sum, r.SHA256 = r.SHA256, "" // a note from before issue 33
		}
	}
	return &st, nil
}

func writeState(b *atomicfile.Batch, folder string, st *docState) error {
	st.Version = stateVersion
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	_, err = b.WriteIfChanged(statePath(folder), append(data, '\n'), FileMode)
	return err
}

// tailWindow is how much of a file's end the quick checks hash.
const tailWindow = 64 << 10

// unmarshalHash restores a running SHA-256 from a closed_hash an earlier
// store wrote.
func unmarshalHash(s string) (hash.Hash, error) {
	h := sha256.New()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, err
	}
	if err := h.(encoding.BinaryUnmarshaler).UnmarshalBinary(b); err != nil {
		return nil, err
	}
	return h, nil
}

// appendGraph appends nodes to a graph file, after the first size bytes
// (what the last finished update left), durable once b commits (appendAt).
// It returns the new size.
func appendGraph(b *atomicfile.Batch, path string, size int64, nodes []source.Node) (int64, error) {
	var sb strings.Builder
	for _, n := range nodes {
		if strings.ContainsAny(n.UUID+n.Anchor+n.Parent, "\t\n") {
			continue
		}
		fmt.Fprintf(&sb, "%s\t%s\t%s\n", n.UUID, n.Anchor, n.Parent)
	}
	return appendAt(b, path, size, sb.String())
}

// graphComplete reports whether a graph file holds at least what a note
// recorded (it may have been deleted or truncated by hand).
func graphComplete(path string, size int64) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return size == 0
	}
	return fi.Size() >= size
}

// resolveState picks, from a note written mid-commit, the version the
// document matches: the next one when the document was put in place, the
// committed one otherwise.
func resolveState(st *docState, md string) *docState {
	if st == nil || st.Next == nil {
		return st
	}
	next := st.Next
	st.Next = nil
	if docEndsWith(md, next.DocOpenAt, next.DocTailHash) {
		return next
	}
	if st.None {
		return nil
	}
	return st
}

// docEndsWith reports whether the document's bytes from offset at to its
// end have the sum tailHash.
func docEndsWith(md string, at int64, tailHash string) bool {
	f, err := osfile.Open(md)
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() < at {
		return false
	}
	same, err := rangeIs(f, fi.Size(), fi.Size()-at, tailHash)
	return err == nil && same
}
