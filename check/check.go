// Package check proves, or disproves, that the store keeps a session
// exactly: it inscribes a source into a scratch store, exports it back,
// compares the export with the source line by line and entry by entry, then
// inscribes the export and compares the two documents. Every difference is
// a [Finding]: data, classified and located, never a printed message. check
// never writes to the store it is given.
package check

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/scribe-archive/scribe/exportcore"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/inscribe/document"
	"github.com/scribe-archive/scribe/internal/atomicfile"
	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
)

// Kind classifies a finding.
type Kind string

// Kinds of findings. Lost, Added and Transformed compare the source with the
// export, in both directions; Document compares the document inscribed from
// the source with the one inscribed from the export; Torn and Gone are
// explained differences, not failures.
const (
	Lost        Kind = "lost"        // a source line the export does not have
	Added       Kind = "added"       // an export line the source does not have
	Transformed Kind = "transformed" // the same entry, other bytes
	Document    Kind = "document"    // the re-inscribed document differs
	Error       Kind = "error"       // the check could not go on
	Torn        Kind = "torn"        // the source ends in a torn line, which is never inscribed
	Gone        Kind = "gone"        // the source no longer exists: the archive holds the only copy
	Damaged     Kind = "damaged"     // a file of the store is missing or not what scribe wrote
	// Dropped is what a conversion to another client does not carry; a
	// conversion's transformations are Transformed with What set. Both are
	// known losses, reported by the conversion itself (see [Cross]).
	Dropped Kind = "dropped"
	// Redacted is a transformed entry whose only differences are secrets
	// the store replaced with markers (redacted.go).
	Redacted Kind = "redacted"
	// Pending is the lines the source gained since the last append: not
	// inscribed yet, not lost.
	Pending Kind = "pending"
)

// Finding is one difference.
type Finding struct {
	Kind Kind   `json:"kind"`
	File string `json:"file"`           // the file the line is in
	Line int    `json:"line,omitempty"` // 1-based
	UUID string `json:"uuid,omitempty"` // the entry's identity
	// Field is the JSON path of the first field that differs, for a
	// transformed entry; Semantic reports that the two entries hold the
	// same JSON value in other bytes.
	Field    string `json:"field,omitempty"`
	Semantic bool   `json:"semantic,omitempty"`
	Diff     string `json:"diff,omitempty"`
	Msg      string `json:"msg"`
	// Removed is set on a transformed entry whose export lacks text the
	// source holds (a person deleted it from the document): that text,
	// masked. If it was a secret, scribe forget removes it from the round
	// files too.
	Removed string `json:"removed,omitempty"`
	// What, Count, Unit and Detail describe a known loss of a conversion
	// to another client: what kind of content, how much, and a breakdown.
	What   string `json:"what,omitempty"`
	Count  int    `json:"count,omitempty"`
	Unit   string `json:"unit,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// Explained reports whether the finding is expected rather than a loss.
func (f Finding) Explained() bool {
	return f.Kind == Torn || f.Kind == Gone || f.Kind == Redacted || f.Kind == Pending || f.What != "" && (f.Kind == Dropped || f.Kind == Transformed)
}

// Report is the check of one transcript (a session or a sidechain).
type Report struct {
	Source   string    `json:"source"`
	Doc      string    `json:"doc,omitempty"`
	Findings []Finding `json:"findings"`
}

// OK reports whether the round trip lost nothing unexplained.
func (r *Report) OK() bool {
	for _, f := range r.Findings {
		if !f.Explained() {
			return false
		}
	}
	return true
}

func (r *Report) add(f Finding) { r.Findings = append(r.Findings, f) }

// Format is a source format as check needs it: the adapter that reads it,
// and the export that writes it back.
type Format struct {
	Source source.Adapter
	// Export writes a session's document and its sidechains' into dir, each
	// file at the path its source had under the session's folder
	// (source.Session.Rel, source.Sidechain.Rel).
	Export func(d *inscribe.Doc, dir string) error
	// Transcript writes one document's file (a session's or a sidechain's)
	// to w.
	Transcript func(d *inscribe.Doc, w io.Writer) ([]error, error)
	// Redact is the redactor of the stores check inscribes into (nil: no
	// redaction), as the store checked against redacts.
	Redact inscribe.Redactor
}

// Session checks the round trip of a session and its sidechains: one
// report per file.
func Session(t source.Session, f Format) ([]*Report, error) {
	tmp, err := os.MkdirTemp("", "scribe-check-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	store, err := inscribe.OpenStore(filepath.Join(tmp, "first"))
	if err != nil {
		return nil, err
	}
	store.Redact = f.Redact
	var reports []*Report
	results := store.Update(t, inscribe.Options{Agent: f.Source.Agent(), Verify: true})
	for _, res := range results {
		rep := &Report{Source: res.Source, Doc: res.Doc}
		reports = append(reports, rep)
		if res.Err != nil {
			rep.add(Finding{Kind: Error, File: res.Source, Msg: "inscribe: " + res.Err.Error()})
			continue
		}
		for _, w := range res.Warnings {
			var le *source.LineError
			if errors.As(w, &le) && le.Torn {
				rep.add(Finding{Kind: Torn, File: le.File, Line: le.Line, Msg: "the source ends in a torn line (a crash mid-write): it is not inscribed, so the export ends before it"})
			}
		}
	}
	if len(results) == 0 {
		return nil, nil
	}
	main := results[len(results)-1]
	md := main.Doc
	if t.Path == "" || main.Outcome == inscribe.Skipped {
		// Only the session's sidechains have documents (its file is gone,
		// or holds no entry yet, which has nothing to lose): they export
		// from its folder all the same.
		t.Path, md = "", sessionOf(store, results)
	}
	if main.Err != nil || md == "" {
		return reports, nil
	}
	d, err := store.Doc(md)
	if err != nil {
		return nil, err
	}
	out := filepath.Join(tmp, "export")
	if err := f.Export(d, out); err != nil {
		reports[len(reports)-1].add(Finding{Kind: Error, File: md, Msg: "export: " + err.Error()})
		return reports, nil
	}
	return reports, compareAll(store, t, f, out, filepath.Join(tmp, "second"), reports)
}

// sessionOf returns the path of the session document whose sidechains the
// results inscribed ("" when they inscribed none): a sidechain's document
// lies in its session's folder.
func sessionOf(store *inscribe.Store, results []inscribe.Result) string {
	for _, r := range results {
		if r.Err == nil && r.Doc != "" && r.Outcome != inscribe.Skipped {
			if d, err := store.Doc(r.Doc); err == nil && d.Parent() != nil {
				return d.Parent().Path()
			}
		}
	}
	return ""
}

// exportedAt finds the export of a source in out: at the source's path
// relative to its root, else the one file of the same name the exporter
// wrote elsewhere (a Codex rollout read from outside a sessions/YYYY/MM/DD
// folder is written into the dated folder its first line gives).
func exportedAt(out string) func(rel string) string {
	var byName map[string][]string
	return func(rel string) string {
		p := filepath.Join(out, rel)
		if _, err := os.Stat(p); err == nil {
			return p
		}
		if byName == nil {
			byName = map[string][]string{}
			filepath.WalkDir(out, func(q string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					byName[d.Name()] = append(byName[d.Name()], q)
				}
				return nil
			})
		}
		if found := byName[filepath.Base(rel)]; len(found) == 1 {
			return found[0]
		}
		return p
	}
}

// compareAll compares each source of t with its export in out, then
// inscribes the export and compares the documents.
func compareAll(first *inscribe.Store, t source.Session, f Format, out, secondRoot string, reports []*Report) error {
	exported := map[string]string{} // source path -> exported path
	at := exportedAt(out)
	if t.Path != "" {
		exported[t.Path] = at(t.Rel)
	}
	for _, sc := range t.Sidechains {
		exported[sc.Path] = at(sc.Rel)
	}
	for _, rep := range reports {
		if exp, ok := exported[rep.Source]; ok && rep.OKSoFar() {
			if err := compareFiles(rep, rep.Source, exp); err != nil {
				return err
			}
		}
	}
	second, err := inscribe.OpenStore(secondRoot)
	if err != nil {
		return err
	}
	second.Redact = f.Redact
	ets, err := f.Source.Discover(out)
	if err != nil {
		return err
	}
	byExport := map[string]*Report{}
	for src, exp := range exported {
		for _, rep := range reports {
			if rep.Source == src {
				byExport[exp] = rep
			}
		}
	}
	for _, et := range ets {
		for _, res := range second.Update(et, inscribe.Options{Agent: f.Source.Agent(), Verify: true}) {
			rep := byExport[res.Source]
			if rep == nil {
				continue
			}
			if res.Err != nil {
				rep.add(Finding{Kind: Error, File: res.Source, Msg: "inscribe the export: " + res.Err.Error()})
				continue
			}
			a, err := first.Doc(rep.Doc)
			if err != nil {
				return err
			}
			b, err := second.Doc(res.Doc)
			if err != nil {
				return err
			}
			compareDocs(rep, a, b)
		}
	}
	return nil
}

// OKSoFar reports whether no error stopped the check of this report.
func (r *Report) OKSoFar() bool {
	for _, f := range r.Findings {
		if f.Kind == Error {
			return false
		}
	}
	return true
}

// lineInfo is what the comparison keeps of a line: where it is, and a
// digest. Lines themselves are read back only when they differ, so a check
// holds no file in memory.
type lineInfo struct {
	offset int64
	length int
	sum    string
}

func scanLines(path string) ([]lineInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	lr := source.NewLineReader(f, 1, 0)
	var out []lineInfo
	for {
		l, err := lr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		h := sha256.Sum256(l.Raw)
		term := "n"
		if !l.Terminated {
			term = "x"
		}
		out = append(out, lineInfo{offset: l.Offset, length: len(l.Raw), sum: hex.EncodeToString(h[:12]) + term})
	}
}

func readLine(path string, li lineInfo) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	buf := make([]byte, li.length)
	f.ReadAt(buf, li.offset)
	return buf
}

// compareFiles compares a source with its export, line by line. An export
// that is the source byte for byte (a source without a torn last line) is
// found so first, holding nothing of either: the lines' digests of a
// session of a million lines are 160 MB.
func compareFiles(rep *Report, src, exp string) error {
	if !rep.hasTorn() {
		if same, err := sameBytes(src, exp); err == nil && same {
			return nil
		}
	}
	a, err := scanLines(src)
	if err != nil {
		return err
	}
	b, err := scanLines(exp)
	if err != nil {
		rep.add(Finding{Kind: Error, File: exp, Msg: "read the export: " + err.Error()})
		return nil
	}
	// A torn last line is never inscribed; it is not a loss.
	if rep.hasTorn() && len(a) > 0 {
		a = a[:len(a)-1]
	}
	if equalInfos(a, b) {
		return nil
	}
	var ta, tb strings.Builder
	for _, l := range a {
		ta.WriteString(l.sum + "\n")
	}
	for _, l := range b {
		tb.WriteString(l.sum + "\n")
	}
	dmp := diffmatchpatch.New()
	ca, cb, lines := dmp.DiffLinesToChars(ta.String(), tb.String())
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(ca, cb, false), lines)
	// Walk the line diff. A run of source lines replaced by a run of export
	// lines is paired entry by entry where the identities agree (the same
	// uuid, or neither has one and they have the same type): such an entry
	// was transformed, not lost and added.
	ia, ib := 0, 0
	var lost, added []int
	settle := func() {
		k := 0
		for ; k < len(lost) && k < len(added); k++ {
			la, lb := readLine(src, a[lost[k]]), readLine(exp, b[added[k]])
			if !sameEntry(la, lb) {
				break
			}
			rep.add(transformed(src, lost[k]+1, entryID(la), la, lb, a[lost[k]].sum, b[added[k]].sum))
		}
		for _, i := range lost[k:] {
			rep.add(Finding{Kind: Lost, File: src, Line: i + 1, UUID: entryID(readLine(src, a[i])), Msg: "in the source, missing from the export"})
		}
		for _, j := range added[k:] {
			rep.add(Finding{Kind: Added, File: src, Line: ia + 1, UUID: entryID(readLine(exp, b[j])),
				Msg: fmt.Sprintf("the export has an entry here (its line %d) that the source does not", j+1)})
		}
		lost, added = lost[:0], added[:0]
	}
	for _, d := range diffs {
		n := strings.Count(d.Text, "\n")
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			settle()
			ia, ib = ia+n, ib+n
		case diffmatchpatch.DiffDelete:
			for k := 0; k < n; k++ {
				lost = append(lost, ia+k)
			}
			ia += n
		case diffmatchpatch.DiffInsert:
			for k := 0; k < n; k++ {
				added = append(added, ib+k)
			}
			ib += n
		}
	}
	settle()
	sort.SliceStable(rep.Findings, func(x, y int) bool { return rep.Findings[x].Line < rep.Findings[y].Line })
	return nil
}

// sameBytes reports whether two files hold the same bytes.
func sameBytes(a, b string) (bool, error) {
	fa, err := os.Open(a)
	if err != nil {
		return false, err
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		return false, err
	}
	defer fb.Close()
	ia, errA := fa.Stat()
	ib, errB := fb.Stat()
	if errA != nil || errB != nil || ia.Size() != ib.Size() {
		return false, errors.Join(errA, errB)
	}
	return atomicfile.SameReader(fa, fb)
}

// sameEntry reports whether two lines are versions of one entry: the same
// uuid, or no uuid and the same type.
func sameEntry(a, b []byte) bool {
	var x, y struct {
		UUID string `json:"uuid"`
		Type string `json:"type"`
	}
	errA, errB := json.Unmarshal(a, &x), json.Unmarshal(b, &y)
	if errA != nil || errB != nil {
		return errA != nil && errB != nil // two lines that are not JSON: compare as text
	}
	if x.UUID != "" || y.UUID != "" {
		return x.UUID == y.UUID
	}
	return x.Type == y.Type
}

func (r *Report) hasTorn() bool {
	for _, f := range r.Findings {
		if f.Kind == Torn {
			return true
		}
	}
	return false
}

func equalInfos(a, b []lineInfo) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].sum != b[i].sum {
			return false
		}
	}
	return true
}

// entryID returns an entry's identity: its uuid, or for bookkeeping entries
// without one, its type and line content digest is not stable enough, so
// only uuids pair entries.
func entryID(line []byte) string {
	var e struct {
		UUID string `json:"uuid"`
	}
	json.Unmarshal(line, &e)
	return e.UUID
}

// transformed describes an entry whose bytes changed.
func transformed(file string, line int, id string, a, b []byte, sumA, sumB string) Finding {
	f := Finding{Kind: Transformed, File: file, Line: line, UUID: id}
	var va, vb any
	if json.Unmarshal(a, &va) == nil && json.Unmarshal(b, &vb) == nil {
		if reflect.DeepEqual(va, vb) {
			f.Semantic = true
			f.Msg = "the same JSON value in other bytes"
			if sumA[len(sumA)-1] != sumB[len(sumB)-1] {
				f.Msg = "the same entry, but the line's newline differs"
			}
			return f
		}
		if fields, markers, ok := redactedOnly(va, vb, ""); ok {
			return redactedFinding(f, fields, markers)
		}
		path, x, y := firstDifference(va, vb, "")
		f.Field = path
		f.Diff = textDiff(render(x), render(y))
		if raw, masked := removedText(x, y); raw != "" {
			// What a person deleted may be a secret: never show it.
			f.Removed = masked
			f.Diff = strings.ReplaceAll(f.Diff, raw, masked)
		}
		f.Msg = "the entry's " + path + " differs"
		return f
	}
	f.Diff = textDiff(string(a), string(b))
	f.Msg = "the line differs"
	return f
}

// firstDifference finds the first differing value of two JSON values.
func firstDifference(a, b any, path string) (string, any, any) {
	switch x := a.(type) {
	case map[string]any:
		if y, ok := b.(map[string]any); ok {
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			for k := range y {
				if _, ok := x[k]; !ok {
					keys = append(keys, k)
				}
			}
			sort.Strings(keys)
			for _, k := range keys {
				if !reflect.DeepEqual(x[k], y[k]) {
					return firstDifference(x[k], y[k], join(path, k))
				}
			}
		}
	case []any:
		if y, ok := b.([]any); ok && len(x) == len(y) {
			for i := range x {
				if !reflect.DeepEqual(x[i], y[i]) {
					return firstDifference(x[i], y[i], join(path, fmt.Sprint(i)))
				}
			}
		}
	}
	if path == "" {
		path = "(entry)"
	}
	return path, a, b
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func render(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// textDiff is a short line diff of two texts ("-" old, "+" new), with at
// most a few lines of context around each change.
func textDiff(a, b string) string {
	dmp := diffmatchpatch.New()
	ca, cb, lines := dmp.DiffLinesToChars(a, b)
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(ca, cb, false), lines)
	var out strings.Builder
	const context, limit = 2, 40
	written := 0
	for i, d := range diffs {
		ls := strings.SplitAfter(d.Text, "\n")
		if ls[len(ls)-1] == "" {
			ls = ls[:len(ls)-1]
		}
		prefix := " "
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			prefix = "-"
		case diffmatchpatch.DiffInsert:
			prefix = "+"
		case diffmatchpatch.DiffEqual:
			if len(ls) > 2*context {
				keep := ls[:0:0]
				if i > 0 {
					keep = append(keep, ls[:context]...)
				}
				keep = append(keep, "…\n")
				if i < len(diffs)-1 {
					keep = append(keep, ls[len(ls)-context:]...)
				}
				ls = keep
			}
		}
		for _, l := range ls {
			if written == limit {
				out.WriteString("…\n")
				return out.String()
			}
			out.WriteString(prefix + strings.TrimSuffix(l, "\n") + "\n")
			written++
		}
	}
	return out.String()
}

// compareDocs compares the document inscribed from the source with the one
// inscribed from the export. Only the recorded source path may differ (and
// a fork's origin, found among the source's sibling files, which the export
// lacks).
func compareDocs(rep *Report, first, second *inscribe.Doc) {
	diff, err := diffDocs(first, second, func(d *session.Document) {
		d.Meta.Source, d.Meta.ForkedFrom, d.Meta.RedactKey = "", nil, "" // (an export holds markers already)
	})
	switch {
	case err != nil:
		rep.add(Finding{Kind: Error, File: first.Path(), Msg: fmt.Sprintf("read the documents: %v", err)})
	case diff != "":
		rep.add(Finding{Kind: Document, File: first.Path(), Msg: "inscribing the export gives another document", Diff: diff})
	}
}

// diffDocs compares two documents a message at a time, after normalize has
// cleared in each head what may differ. It returns "" when they agree, else
// a diff of the first part that differs: the heads, or a message.
func diffDocs(first, second *inscribe.Doc, normalize func(*session.Document)) (string, error) {
	a, err := first.Items()
	if err != nil {
		return "", err
	}
	defer a.Close()
	b, err := second.Items()
	if err != nil {
		return "", err
	}
	defer b.Close()
	ha := &session.Document{Meta: *a.Meta, Summary: a.Summary}
	hb := &session.Document{Meta: *b.Meta, Summary: b.Summary}
	normalize(ha)
	normalize(hb)
	if !document.Equal(ha, hb) {
		return textDiff(string(document.RenderHead(&ha.Meta, ha.Summary)), string(document.RenderHead(&hb.Meta, hb.Summary))), nil
	}
	// Messages byte for byte the same are read once, for a body that
	// does not parse: two long messages are not held side by side (a
	// prompt of 100 MB was held twice, issue 33).
	if same, err := sameBodies(first, second); err != nil {
		return "", err
	} else if same {
		for {
			if _, err := a.Next(); err != nil {
				return "", ignoreEOF(err)
			}
		}
	}
	render := func(it *session.Item) string {
		if it == nil {
			return ""
		}
		var buf bytes.Buffer
		document.RenderItem(&buf, it)
		return buf.String()
	}
	for {
		ia, errA := a.Next()
		ib, errB := b.Next()
		if errA == io.EOF && errB == io.EOF {
			return "", nil
		}
		if err := errors.Join(ignoreEOF(errA), ignoreEOF(errB)); err != nil {
			return "", err
		}
		if ia == nil || ib == nil || !document.Equal(&session.Document{Items: []session.Item{*ia}}, &session.Document{Items: []session.Item{*ib}}) {
			return textDiff(render(ia), render(ib)), nil
		}
	}
}

// sameBodies reports whether two documents' messages (all that follows
// their heads) are the same bytes, reading both a piece at a time.
func sameBodies(first, second *inscribe.Doc) (bool, error) {
	var rs [2]io.Reader
	for i, d := range []*inscribe.Doc{first, second} {
		f, err := d.Open()
		if err != nil {
			return false, err
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return false, err
		}
		h, err := document.ReadHead(f, fi.Size(), d.Path())
		if err != nil {
			return false, err
		}
		rs[i] = io.NewSectionReader(f, h.BodyAt, fi.Size()-h.BodyAt)
	}
	return atomicfile.SameReader(rs[0], rs[1])
}

func ignoreEOF(err error) error {
	if err == io.EOF {
		return nil
	}
	return err
}

// Stored checks documents already in a store against their sources: the
// export from the store must equal the source, and inscribing the export
// must give the stored document back (its summary and engagements, which a
// person owns, aside). A document whose source is gone is reported as such:
// the archive now holds the only copy.
func Stored(d *inscribe.Doc, f Format) (*Report, error) {
	md := d.Path()
	m, err := d.Meta()
	if err != nil {
		return &Report{Doc: md, Findings: []Finding{{Kind: Error, File: md, Msg: err.Error()}}}, nil
	}
	rep := &Report{Doc: md, Source: d.Source()}
	// What scribe wrote is checked against what it recorded: damage is
	// reported as such, with what mends it, and then what it does to the
	// export.
	for _, err := range d.Verify(f.Source, rep.Source) {
		rep.add(DamageFinding(err))
	}
	if _, err := os.Stat(rep.Source); errors.Is(err, fs.ErrNotExist) {
		rep.add(Finding{Kind: Gone, File: rep.Source, Msg: "the source is gone: the archive holds the only copy"})
		return rep, nil
	}
	// A source that no longer held what was inscribed from it (the client
	// wrote it again) feeds a continuation of the session now: the
	// continuation is checked against it, and the archive holds the only
	// copy of what this document was inscribed from.
	if conts, err := d.Continuations(); err == nil {
		for _, c := range conts {
			if c.Source() == rep.Source {
				rep.add(Finding{Kind: Gone, File: rep.Source, Msg: fmt.Sprintf("the source was written again and goes on as %s: the archive holds the only copy of what was inscribed here", c.Path())})
				return rep, nil
			}
		}
	}
	tmp, err := os.MkdirTemp("", "scribe-check-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	exp := filepath.Join(tmp, "export.jsonl")
	out, err := os.Create(exp)
	if err != nil {
		return nil, err
	}
	bw := bufio.NewWriter(out)
	_, xerr := f.Transcript(d, bw)
	bw.Flush()
	out.Close()
	if xerr != nil {
		if len(rep.Findings) == 0 { // else the damage found says why
			rep.add(Finding{Kind: Error, File: md, Msg: "export: " + xerr.Error()})
		}
		return rep, nil
	}
	if last, ok := tornTail(rep.Source); ok {
		rep.add(Finding{Kind: Torn, File: rep.Source, Line: last, Msg: "the source ends in a torn line (a crash mid-write): it is not inscribed, so the export ends before it"})
	}
	if err := compareInscribed(rep, d, exp); err != nil {
		return nil, err
	}
	return rep, compareStoredDoc(rep, d, exp, m, f.Source, f.Redact, filepath.Join(tmp, "second"))
}

// compareInscribed compares the export with the source. The lines the
// source gained since the last append (past the read note's seen) are not
// inscribed yet: one Pending finding, not lost lines.
func compareInscribed(rep *Report, d *inscribe.Doc, exp string) error {
	src := rep.Source
	at := len(rep.Findings)
	if err := compareFiles(rep, src, exp); err != nil {
		return err
	}
	seen, err := d.Seen()
	fi, serr := os.Stat(src)
	if err != nil || serr != nil || seen < 0 || fi.Size() <= seen {
		return nil
	}
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	before, err := countLines(io.NewSectionReader(f, 0, seen))
	if err != nil {
		return err
	}
	after, err := countLines(io.NewSectionReader(f, seen, fi.Size()-seen))
	if err != nil || after == 0 {
		return err
	}
	from := before + 1
	kept := rep.Findings[:at]
	for _, g := range rep.Findings[at:] {
		if g.Kind == Lost && g.File == src && g.Line >= from {
			continue // not appended yet
		}
		kept = append(kept, g)
	}
	rep.Findings = append(kept, Finding{Kind: Pending, File: src, Line: from, Msg: fmt.Sprintf("%d %s the source gained since the last append, not appended yet: scribe append %s inscribes them", after, plural(after, "line", "lines"), src)})
	return nil
}

// countLines counts the line ends r gives.
func countLines(r io.Reader) (int, error) {
	buf := make([]byte, 64<<10)
	n := 0
	for {
		k, err := r.Read(buf)
		n += bytes.Count(buf[:k], []byte("\n"))
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// tornTail reports whether a file ends in an unterminated line that is not
// JSON (a torn write), and that line's number. A file that ends in a line
// end is not read; one that does not is read a line at a time, keeping
// where the last one is, no digest of each (scanLines' digests of a
// session of a million lines, over 50 MB live, were check --store's peak:
// issue 33).
func tornTail(p string) (int, bool) {
	f, err := os.Open(p)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	var end [1]byte
	if fi, err := f.Stat(); err != nil || fi.Size() == 0 {
		return 0, false
	} else if _, err := f.ReadAt(end[:], fi.Size()-1); err != nil || end[0] == '\n' {
		return 0, false
	}
	lr := source.NewLineReader(f, 1, 0)
	n, terminated := 0, true
	var last lineInfo
	for {
		l, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, false
		}
		n++
		last, terminated = lineInfo{offset: l.Offset, length: len(l.Raw)}, l.Terminated
	}
	if n == 0 || terminated {
		return 0, false
	}
	return n, !json.Valid(readLine(p, last))
}

// compareStoredDoc inscribes an export and compares the result with the
// stored document.
func compareStoredDoc(rep *Report, d *inscribe.Doc, exp string, m *session.Meta, a source.Adapter, red inscribe.Redactor, root string) error {
	md := d.Path()
	second, err := inscribe.OpenStore(root)
	if err != nil {
		return err
	}
	second.Redact = red
	id := m.SessionID
	if m.SidechainOf != nil {
		id = "agent-" + m.SidechainOf.AgentID
	}
	dir := filepath.Join(filepath.Dir(exp), "t")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	p := filepath.Join(dir, id+".jsonl")
	if err := os.Rename(exp, p); err != nil {
		return err
	}
	t := source.Session{Adapter: a, Path: p, ID: m.SessionID, Dir: dir, Rel: filepath.Base(p)}
	var res []inscribe.Result
	if m.SidechainOf != nil {
		t.Path = ""
		t.Sidechains = []source.Sidechain{{Path: p, ID: m.SidechainOf.AgentID, Rel: filepath.Base(p)}}
	}
	res = second.Update(t, inscribe.Options{Agent: m.AgentID, Verify: true})
	for _, r := range res {
		if r.Err != nil {
			rep.add(Finding{Kind: Error, File: exp, Msg: "inscribe the export: " + r.Err.Error()})
			return nil
		}
		if r.Source != p {
			continue
		}
		// What a person owns, where the source was, and what lay beside it
		// (sibling sessions, a sidechain's meta file) may differ.
		back, err := second.Doc(r.Doc)
		if err != nil {
			return err
		}
		// (The role comes from the store's roles registry, not from the
		// source: the scratch store has none.)
		diff, err := diffDocs(d, back, func(d *session.Document) {
			d.Meta.Source, d.Summary, d.Meta.Engagements, d.Meta.Role = "", "", nil, nil
			d.Meta.ContinuationOf, d.Meta.Continuations = nil, nil // where the store files it
			d.Meta.RedactKey = ""                                  // the export holds the markers already
			d.Meta.Sidechains, d.Meta.ForkedFrom = nil, nil
			if of := d.Meta.SidechainOf; of != nil {
				d.Meta.SidechainOf = &session.SidechainOf{SessionID: of.SessionID, AgentID: of.AgentID}
			}
		})
		switch {
		case err != nil:
			rep.add(Finding{Kind: Error, File: md, Msg: fmt.Sprintf("read the documents: %v", err)})
			return nil
		case diff != "":
			rep.add(Finding{Kind: Document, File: md, Msg: "inscribing the export gives another document than the stored one", Diff: diff})
		}
	}
	return nil
}

// DamageFinding is a finding of damage to the store (an
// *inscribe.DamageError, an *inscribe.MissingNoteError), saying what
// mends it, or of a document an inscription was stopped before it wrote
// (an *inscribe.UnfinishedError: pending, nothing to mend).
func DamageFinding(err error) Finding {
	var de *inscribe.DamageError
	var mn *inscribe.MissingNoteError
	var un *inscribe.UnfinishedError
	switch {
	case errors.As(err, &un):
		return Finding{Kind: Pending, File: un.Folder, Msg: un.Why()}
	case errors.As(err, &de):
		return Finding{Kind: Damaged, File: de.File, Msg: de.Why + "; " + RepairAdvice(de.Session)}
	case errors.As(err, &mn):
		return Finding{Kind: Damaged, File: mn.Note, Msg: "the read note is missing or unreadable; " + RepairAdvice(mn.Session)}
	}
	return Finding{Kind: Error, Msg: err.Error()}
}

// RepairAdvice says how to mend the damage of a session's files ("" for the
// store's own).
func RepairAdvice(session string) string {
	switch {
	case session == "":
		return "run scribe repair"
	case strings.HasPrefix(session, "-"):
		return "run scribe repair -- " + session
	}
	return "run scribe repair " + session
}

// CrossFormat is a client as a cross-agent check needs it: its adapter,
// and the conversion of another client's session into its files.
type CrossFormat struct {
	// Name names the client ("codex", "claude").
	Name   string
	Target source.Adapter
	// Convert writes the conversion of session document md into dir,
	// laid out as the client lays out its sessions, and returns what it
	// could not carry.
	Convert func(d *inscribe.Doc, dir string) (*exportcore.Losses, error)
}

// Cross checks the conversion of a session document to another client: it
// converts the session into a scratch folder and compares what the target
// client will send its model when it resumes the conversion (the target's
// source.Resumer) with what the source client sends when it resumes the
// original (from: the source file written back from the store, rebuilt by
// the source's Resumer; the tests hold each Resumer to its real client).
// The report lists what the conversion could not carry, each loss a
// finding (dropped or transformed, with counts: known losses, not
// failures), and as a failure (document) every prompt, reply, image, call
// or result the target would not send that no loss accounts for. The
// conversion is also inscribed with the target's adapter into a scratch
// store: its session id, working directory, title and model must come
// back. It writes nothing to the store d is in.
func Cross(d *inscribe.Doc, from exportcore.Source, to CrossFormat) (*Report, error) {
	md := d.Path()
	rep := &Report{Source: md, Doc: md}
	orig, err := exportcore.Resume(d, from)
	if err != nil {
		rep.add(Finding{Kind: Error, File: md, Msg: err.Error()})
		return rep, nil
	}
	tmp, err := os.MkdirTemp("", "scribe-check-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "export")
	losses, err := to.Convert(d, out)
	if err != nil {
		rep.add(Finding{Kind: Error, File: md, Msg: "convert: " + err.Error()})
		return rep, nil
	}
	for _, l := range losses.List() {
		kind := Transformed
		if l.Kind == exportcore.Dropped {
			kind = Dropped
		}
		rep.add(Finding{Kind: kind, File: md, What: l.What, Count: l.Count, Unit: l.Unit, Detail: l.Detail, Msg: l.Why})
	}
	store, err := inscribe.OpenStore(filepath.Join(tmp, "back"))
	if err != nil {
		return nil, err
	}
	ts, err := to.Target.Discover(out)
	if err != nil || len(ts) != 1 {
		rep.add(Finding{Kind: Error, File: out, Msg: fmt.Sprintf("the conversion is not one %s session (%d found): %v", to.Name, len(ts), err)})
		return rep, nil
	}
	// What the source client sends on resume, against what the target
	// client will send when it resumes the conversion.
	r, ok := to.Target.(source.Resumer)
	if !ok {
		rep.add(Finding{Kind: Error, File: md, Msg: "scribe cannot tell what " + to.Name + " sends its model on resume: the conversion is not checked"})
		return rep, nil
	}
	f, err := os.Open(ts[0].Path)
	if err != nil {
		return nil, err
	}
	resumed, err := r.Resume(f, nil)
	f.Close()
	if err != nil {
		rep.add(Finding{Kind: Error, File: ts[0].Path, Msg: "read the conversion as its client resumes it: " + err.Error()})
		return rep, nil
	}
	want := exportcore.SentUnits(&source.Resumed{Items: orig.Items})
	for _, p := range exportcore.Received(want, exportcore.SentUnits(resumed), losses, orig.Meta.AgentName, to.Name) {
		rep.add(Finding{Kind: Document, File: md, Msg: "converted to " + to.Name + ": " + p})
	}
	var back string
	for _, r := range store.Update(ts[0], inscribe.Options{Agent: to.Target.Agent()}) {
		if r.Err != nil {
			rep.add(Finding{Kind: Error, File: r.Source, Msg: "inscribe the conversion: " + r.Err.Error()})
			return rep, nil
		}
		back = r.Doc
	}
	if back == "" {
		// A conversion of nothing the target's model receives: there is
		// no document to read back (an empty session of the source).
		if len(want) > 0 {
			rep.add(Finding{Kind: Document, File: md, Msg: fmt.Sprintf("converted to %s, the conversion holds no session the target's adapter inscribes", to.Name)})
		}
		return rep, nil
	}
	bd, err := store.Doc(back)
	if err != nil {
		return nil, err
	}
	bc, err := exportcore.Live(bd)
	if err != nil {
		rep.add(Finding{Kind: Error, File: back, Msg: "read the conversion back: " + err.Error()})
		return rep, nil
	}
	om, bm := orig.Meta, bc.Meta
	for _, f := range []struct {
		name string
		a, b *string
	}{{"working directory", om.Project, bm.Project}, {"title", om.Title, bm.Title}, {"model", om.Model, bm.Model}} {
		if session.Str(f.a) != session.Str(f.b) {
			rep.add(Finding{Kind: Document, File: md, Msg: fmt.Sprintf("converted to %s and read back, the %s is %q, not %q", to.Name, f.name, session.Str(f.b), session.Str(f.a))})
		}
	}
	if om.SessionID != bm.SessionID {
		rep.add(Finding{Kind: Document, File: md, Msg: fmt.Sprintf("converted to %s and read back, the session id is %s, not %s", to.Name, bm.SessionID, om.SessionID)})
	}
	return rep, nil
}
