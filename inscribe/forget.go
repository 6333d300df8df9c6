package inscribe

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"unicode/utf8"

	"github.com/scribe-archive/scribe/inscribe/document"
	"github.com/scribe-archive/scribe/internal/atomicfile"
	"github.com/scribe-archive/scribe/internal/jsonpatch"
	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
)

// A Replacer replaces what is to be forgotten in a text, and says how many
// times it did.
type Replacer func(text string) (string, int)

// Forgotten is what Forget did to one document.
type Forgotten struct {
	Doc string
	// Occurrences counts the values replaced: in the round files (each
	// source line's text fields), in the document's text and in the files
	// kept beside it. A value the store holds twice (a round file's line
	// and the document's message) counts twice.
	Occurrences int
	// Files are the files rewritten.
	Files []string
}

// Forget replaces what replace finds in every text of one document of the
// store, and its read note, with one batch: the text fields of its round
// files' lines (source.TextFinder: identities and signatures are never
// touched) and the blocks derived from them, the document's messages, title
// and summary, the builder's state in the read note (the first prompt, the
// title), and the files kept beside it. The read note keeps describing the
// source. Running it again changes nothing. The derived views (indexes,
// catalogs) are the caller's to rebuild.
//
// The document is rendered again from what it parses to: an unedited
// document keeps every other byte; a person's edits are kept as the
// document reads them.
func (s *Store) Forget(d *Doc, a source.Adapter, replace Replacer) (*Forgotten, error) {
	md := d.path
	defer d.forget()
	folder := folderOf(md)
	unlock, err := lockDoc(folder, 0)
	if err != nil {
		return nil, err
	}
	defer unlock()
	st, err := readState(folder)
	if err != nil {
		return nil, err
	}
	if st != nil && st.Next != nil {
		return nil, fmt.Errorf("%s: an update of this document was stopped mid-way: run scribe append first", md)
	}
	res := &Forgotten{Doc: md}
	var b atomicfile.Batch
	defer b.Abort()
	// All or nothing: a kill between the renames of the round files and
	// of their sums would leave a record that reads as damaged.
	b.Journal(journalPath(folder))
	write := func(p string, data []byte) error {
		// The document's and its round files' in its folder, where the
		// next writer looks for leftovers (removeTemps).
		dir := filepath.Dir(p)
		if p == md || dir == roundsDir(folder) {
			dir = folder
		}
		changed, err := b.WriteIfChangedIn(dir, p, data, FileMode)
		if changed {
			res.Files = append(res.Files, p)
		}
		return err
	}

	// The round files.
	sums, err := forgetRounds(folder, a, replace, res, write)
	if err != nil {
		return nil, err
	}
	// The files kept beside the document.
	kept := []string{filepath.Join(folder, sidechainMetaFile)}
	filepath.WalkDir(filepath.Join(folder, sourceFilesDir), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			kept = append(kept, p)
		}
		return nil
	})
	for _, p := range kept {
		data, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if out, n := forgetFile(data, replace); n > 0 {
			res.Occurrences += n
			if err := write(p, out); err != nil {
				return nil, err
			}
		}
	}
	// The document, then its read note.
	src, err := os.ReadFile(md)
	if err != nil {
		return nil, err
	}
	doc, err := document.Parse(src, md)
	if err != nil {
		return nil, err
	}
	n := forgetDoc(doc, replace)
	if n == 0 && len(res.Files) == 0 {
		return res, nil
	}
	res.Occurrences += n
	out := src
	if n > 0 {
		out = document.Render(doc)
	}
	if st != nil {
		if err := checkBeforeNote(md, st); err != nil {
			return nil, err
		}
		next := *st
		if err := resum(folder, st, &next, sums, write); err != nil {
			return nil, err
		}
		if len(next.Builder) > 0 {
			if bs, k := forgetJSON(next.Builder, replace); k > 0 {
				next.Builder = bs
			}
		}
		if err := locateOpenIn(md, out, &next); err != nil {
			return nil, err
		}
		if !bytes.Equal(out, src) {
			// As an update writes it: the note with the next one, the
			// document, the note alone (resolveState).
			pending := *st
			pending.Next = &next
			if err := writeState(&b, folder, &pending); err != nil {
				return nil, err
			}
			if err := write(md, out); err != nil {
				return nil, err
			}
		}
		if err := writeState(&b, folder, &next); err != nil {
			return nil, err
		}
	} else if err := write(md, out); err != nil {
		return nil, err
	}
	return res, b.Commit()
}

// forgetRounds rewrites the round files whose lines hold what is to be
// forgotten: each line's text fields, and the round's blocks, derived
// again by the adapter from the new lines.
func forgetRounds(folder string, a source.Adapter, replace Replacer, res *Forgotten, write func(string, []byte) error) (map[int]forgotRound, error) {
	ns, err := roundNumbers(roundsDir(folder))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	tf, _ := a.(source.TextFinder)
	type round struct {
		file    *RoundFile
		entries []session.Entry
		changed bool
	}
	rounds := make([]round, len(ns))
	any := false
	for i, n := range ns {
		rf, err := readRound(roundPath(folder, n))
		if err != nil {
			return nil, err
		}
		rounds[i].file = rf
		for _, re := range rf.Entries {
			raw, err := re.Bytes()
			if err != nil {
				return nil, err
			}
			out, k := forgetLine(raw, re, tf, replace)
			if k > 0 {
				res.Occurrences += k
				rounds[i].changed, any = true, true
			}
			rounds[i].entries = append(rounds[i].entries, session.Entry{Line: re.Line, Raw: out, NoNewline: re.NoNewline, Len: len(out), Invalid: re.JSON == nil})
		}
	}
	if !any {
		return nil, nil
	}
	// The rounds' blocks come from their items: build them again.
	b, err := a.NewBuilder(builderConfig(folder, filepath.Base(folder)), nil, nil)
	if err != nil {
		return nil, err
	}
	var built []*session.Round
	for _, r := range rounds {
		for _, e := range r.entries {
			if c := b.AddEntry(e); c != nil {
				built = append(built, c)
			}
		}
	}
	if fin := b.Finish(); fin.Open != nil {
		built = append(built, fin.Open)
	}
	if len(built) != len(rounds) {
		return nil, fmt.Errorf("%s: its round files build %d rounds again, not %d: nothing was changed", folder, len(built), len(rounds))
	}
	sums := map[int]forgotRound{}
	for i, r := range rounds {
		if !r.changed {
			continue
		}
		nr := built[i]
		if nr.N != r.file.Round || len(nr.Entries) != len(r.entries) {
			return nil, fmt.Errorf("%s: round %d builds other rounds again: nothing was changed", folder, r.file.Round)
		}
		for j := range nr.Entries {
			nr.Entries[j].Invalid = r.entries[j].Invalid
		}
		nr.Open = r.file.Open
		hdr := roundHeader(nr)
		var buf bytes.Buffer
		if err := writeRoundTo(&buf, hdr, nr, nil); err != nil {
			return nil, err
		}
		if err := write(roundPath(folder, r.file.Round), buf.Bytes()); err != nil {
			return nil, err
		}
		sum := fileSum(0).add(buf.Bytes())
		sums[r.file.Round] = forgotRound{roundSum{Round: r.file.Round, Size: int64(buf.Len()), Sum: sum.String()}, r.file.Open}
	}
	return sums, nil
}

// forgotRound is the sum of a round file forget rewrote.
type forgotRound struct {
	sum  roundSum
	open bool
}

// resum brings the record of the round files (rounds.tsv, the note's
// open_round) to the round files forget rewrote: the record is written
// anew, in the batch.
func resum(folder string, st, next *docState, sums map[int]forgotRound, write func(string, []byte) error) error {
	if len(sums) == 0 || st.RoundsSize == nil {
		return nil
	}
	path := filepath.Join(folder, roundsFile)
	var sb []byte
	err := eachSum(path, *st.RoundsSize, func(s roundSum) error {
		if f, ok := sums[s.Round]; ok && !f.open {
			s = f.sum
		}
		sb = appendSumLine(sb, s)
		return nil
	})
	if err != nil {
		return err
	}
	if err := write(path, sb); err != nil {
		return err
	}
	size := int64(len(sb))
	next.RoundsSize = &size
	for _, f := range sums {
		if f.open {
			s := f.sum
			next.OpenRound = &s
		}
	}
	return nil
}

// forgetLine replaces what is to be forgotten in one source line kept in a
// round file: in its text fields when it is JSON, in the whole line when it
// is other text. Bytes that are not UTF-8 are kept.
func forgetLine(raw []byte, re RoundEntry, tf source.TextFinder, replace Replacer) ([]byte, int) {
	switch {
	case re.JSON != nil && tf != nil:
		return replaceFields(raw, withDataKeys(raw, tf.TextFields(raw)), replace)
	case re.Text != nil:
		out, n := replace(string(raw))
		return []byte(out), n
	}
	return raw, 0
}

// withDataKeys adds to a line's text fields the keys of its objects that
// are data rather than names (a file's path, a question asked): those
// holding anything but letters, digits, '_' and '-'. The spans stay in
// order.
func withDataKeys(raw []byte, fields []source.TextField) []source.TextField {
	var keys []source.TextField
	jsonpatch.Keys(raw, func(v jsonpatch.StringValue) {
		k := v.Path[len(v.Path)-1]
		for _, c := range k {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
				keys = append(keys, source.TextField{Start: v.Start, End: v.End, Text: k})
				return
			}
		}
	})
	if len(keys) == 0 {
		return fields
	}
	all := append(append([]source.TextField(nil), fields...), keys...)
	sort.Slice(all, func(i, j int) bool { return all[i].Start < all[j].Start })
	return all
}

// replaceFields replaces in the given string values of a JSON line, every
// other byte kept.
func replaceFields(raw []byte, fields []source.TextField, replace Replacer) ([]byte, int) {
	total := 0
	out := raw
	for i := len(fields) - 1; i >= 0; i-- {
		f := fields[i]
		t, n := replace(jsonpatch.FieldText(raw, f))
		if n == 0 {
			continue
		}
		total += n
		if &out[0] == &raw[0] {
			out = append([]byte(nil), raw...)
		}
		out = append(out[:f.Start], append(encodeString(t), out[f.End:]...)...)
	}
	return out, total
}

// forgetJSON replaces in every string value of a JSON value.
func forgetJSON(data []byte, replace Replacer) ([]byte, int) {
	return replaceFields(data, jsonStrings(data), replace)
}

// forgetFile replaces in a file kept beside a session: a JSON value in its
// string values, other UTF-8 text as a whole.
func forgetFile(data []byte, replace Replacer) ([]byte, int) {
	if !utf8.Valid(data) {
		return data, 0
	}
	if t := bytes.TrimSpace(data); len(t) > 0 && (t[0] == '{' || t[0] == '[') && json.Valid(t) {
		return forgetJSON(data, replace)
	}
	out, n := replace(string(data))
	return []byte(out), n
}

// forgetDoc replaces in every text of a parsed document: the title, the
// summary, the sidechains' descriptions, and each message's texts, tool
// inputs and results (JSON in its string values).
func forgetDoc(d *session.Document, replace Replacer) int {
	total := 0
	str := func(s *string) {
		if s == nil {
			return
		}
		t, n := replace(*s)
		*s, total = t, total+n
	}
	jsonText := func(s *string) {
		if *s == "" {
			return
		}
		if json.Valid([]byte(*s)) {
			out, n := forgetJSON([]byte(*s), replace)
			*s, total = string(out), total+n
			return
		}
		str(s)
	}
	str(d.Meta.Title)
	str(&d.Summary)
	// The head's metadata that comes from the session's text: a branch or
	// a folder may be named after what is to be forgotten.
	str(d.Meta.ClientSummary)
	str(d.Meta.GitBranch)
	str(d.Meta.Project)
	for i := range d.Meta.Sidechains {
		str(&d.Meta.Sidechains[i].Description)
	}
	for i := range d.Items {
		for j := range d.Items[i].Blocks {
			blk := &d.Items[i].Blocks[j]
			if blk.Kind == session.KindRaw {
				jsonText(&blk.Text)
			} else {
				str(&blk.Text)
			}
			jsonText(&blk.Input)
			if blk.Result != nil {
				for k := range blk.Result.Parts {
					p := &blk.Result.Parts[k]
					if p.Kind == session.KindRaw {
						jsonText(&p.Text)
					} else {
						str(&p.Text)
					}
				}
			}
		}
	}
	return total
}

func encodeString(s string) []byte { return jsonpatch.EncodeString(s) }

// jsonStrings returns every string value of a JSON value.
func jsonStrings(data []byte) []source.TextField {
	var out []source.TextField
	jsonpatch.Strings(data, nil, func(v jsonpatch.StringValue) {
		out = append(out, source.TextField{Start: v.Start, End: v.End, Text: jsonpatch.DecodeString(data[v.Start:v.End])})
	})
	return out
}

// locateOpenIn sets a note's doc_open_at and doc_tail_hash for the
// document md whose bytes are doc: where its open round's first message
// (open_first_id) starts, else its end.
func locateOpenIn(md string, doc []byte, st *docState) error {
	st.DocOpenAt = int64(len(doc))
	if st.OpenFirstID != "" {
		mark := append([]byte("\n"), document.IdentityPrefix(st.OpenFirstID)...)
		i := bytes.Index(doc, mark)
		at := -1
		if i >= 0 {
			at = bytes.LastIndex(doc[:i], itemOpen)
		}
		if at < 0 {
			return fmt.Errorf("%s: the open round's first message (%s) is not in the document", md, st.OpenFirstID)
		}
		st.DocOpenAt = int64(at)
	}
	st.DocTailHash = fileSum(0).add(doc[st.DocOpenAt:]).String()
	return nil
}
