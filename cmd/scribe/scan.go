package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/inscribe/redact"
	"github.com/scribe-archive/scribe/session/source"
)

type scanOptions struct {
	sources []string
	store   bool
}

func newScanCmd(e *env) *cobra.Command {
	var o scanOptions
	cmd := &cobra.Command{
		Use:   "scan [SOURCE...] | scan --store [SESSION...]",
		Short: "List the secrets in sessions (what inscribe would redact), or in the store",
		Long: `scan looks for secrets, with the rules inscribe redacts with (gitleaks'
default rules and the store's own, in its redact.toml), and lists each one:
its kind (the rule that found it), the session, the round, where it is, and
an excerpt with the secret masked. It writes nothing.

SOURCE is what inscribe takes: a session file, a project folder, a folder
of sessions; with none, the folders where the clients keep their sessions.
This lists what inscribing them into a redacting store would replace.

With --store, scan the store instead (every session, or each SESSION
given): its round files, its documents (where a person may have pasted a
secret by hand) and the files kept beside them. A store that redacts holds
no secret this finds; one that does not, or that a person edited, may.
This is the gate for CI or a pre-commit hook: it exits with status 1 when
the store holds a secret.

EXIT STATUS
  0  no secret found
  1  some secret found
  2  the scan could not run`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.sources = args
			return runScan(e, o)
		},
	}
	cmd.Flags().BoolVar(&o.store, "store", false, "scan the store's files instead of sources")
	cmd.Flags().BoolVar(&e.json, "json", false, "print the findings as JSON")
	return cmd
}

// secretJSON is one secret scan found.
type secretJSON struct {
	Kind    string `json:"kind"`    // the rule that found it
	Session string `json:"session"` // the session id (a sidechain: <session>/agent-<id>)
	Round   int    `json:"round"`   // 0 when not in a round
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"` // 1-based, in a source or a round file's entries
	Path    string `json:"path,omitempty"` // the JSON path of the value
	Excerpt string `json:"excerpt"`        // the text around it, the secret masked
}

func runScan(e *env, o scanOptions) error {
	root, named, err := e.storeRoot()
	if err != nil {
		return err
	}
	var found []secretJSON
	if o.store {
		if err := requireStore(root, named); err != nil {
			return err
		}
		store, err := openStore(root)
		if err != nil {
			return err
		}
		red, err := scanRedactor(root)
		if err != nil {
			return err
		}
		var docs []*inscribe.Doc
		if len(o.sources) > 0 {
			docs, err = sessionsToCheck(e, o.sources)
		} else {
			docs, err = storedDocs(store)
		}
		if err != nil {
			return err
		}
		for _, md := range docs {
			fs, err := scanDoc(red, md)
			if err != nil {
				return err
			}
			found = append(found, fs...)
		}
	} else {
		red, err := scanRedactor(root)
		if err != nil {
			return err
		}
		sources := o.sources
		if len(sources) == 0 {
			if sources, _, err = defaultSource(false); err != nil {
				return err
			}
		}
		err = forEachSession(e, sources, func(t source.Session) error {
			fs, err := scanSession(red, t)
			found = append(found, fs...)
			return err
		})
		if err != nil {
			return err
		}
	}
	if e.json {
		if found == nil {
			found = []secretJSON{}
		}
		if err := writeJSON(e.stdout, found); err != nil {
			return err
		}
	} else {
		for _, f := range found {
			where := f.File
			if f.Line > 0 {
				where += ":" + strconv.Itoa(f.Line)
			}
			round := "-"
			if f.Round > 0 {
				round = "round " + strconv.Itoa(f.Round)
			}
			path := ""
			if f.Path != "" {
				path = " " + f.Path
			}
			fmt.Fprintf(e.stdout, "%s\t%s\t%s\t%s%s\n\t%s\n", f.Kind, f.Session, round, where, path, f.Excerpt)
		}
		fmt.Fprintf(e.stdout, "%d %s found\n", len(found), plural(len(found), "secret", "secrets"))
	}
	if len(found) > 0 {
		return &statusError{exitChanges}
	}
	return nil
}

// scanRedactor is the store's detector (its own rules too), whether or not
// the store redacts, or gitleaks' defaults where there is no store.
func scanRedactor(root string) (*redact.Redactor, error) {
	st, err := redact.Load(root)
	if err != nil {
		return nil, err
	}
	if st == nil {
		st = redact.New()
	}
	return st.Redactor()
}

// scanSession lists the secrets of a session's files, as inscribing them
// would find them.
func scanSession(red *redact.Redactor, t source.Session) ([]secretJSON, error) {
	var out []secretJSON
	if t.Path != "" {
		fs, err := scanTranscript(red, t.Adapter, t.Path, t.ID, source.Config{File: t.Path})
		if err != nil {
			return nil, err
		}
		out = append(out, fs...)
	}
	for _, sc := range t.Sidechains {
		fs, err := scanTranscript(red, t.Adapter, sc.Path, t.ID+"/agent-"+sc.ID, source.Config{File: sc.Path, Sidechain: true})
		if err != nil {
			return nil, err
		}
		out = append(out, fs...)
		// The client's note on the subagent: its description reaches the
		// session's document, the note is kept beside the subagent's.
		if sc.MetaFile != "" {
			if data, err := os.ReadFile(sc.MetaFile); err == nil {
				_, reps := red.File(data)
				out = append(out, found(reps, t.ID+"/agent-"+sc.ID, 0, sc.MetaFile, 0)...)
			}
		}
	}
	for _, rel := range t.Files {
		p := filepath.Join(t.FilesDir, filepath.FromSlash(rel))
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		_, reps := red.File(data)
		out = append(out, found(reps, t.ID, 0, p, 0)...)
	}
	return out, nil
}

// scanTranscript reads a source the way an update reads it, and lists the
// secrets of each line with the round the line falls in.
func scanTranscript(red *redact.Redactor, a source.Adapter, path, session string, cfg source.Config) ([]secretJSON, error) {
	tf, ok := a.(source.TextFinder)
	if !ok {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cfg.RawInSource = true
	b, err := a.NewBuilder(cfg, nil, nil)
	if err != nil {
		return nil, err
	}
	var out, pending []secretJSON
	settle := func(last, round int) {
		keep := pending[:0]
		for _, p := range pending {
			if last < 0 || p.Line <= last {
				p.Round = round
				out = append(out, p)
			} else {
				keep = append(keep, p)
			}
		}
		pending = keep
	}
	joint := newJointScan(red, a)
	lr := source.NewLineReader(f, 1, 0)
	for {
		l, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if l.Torn() {
			break
		}
		fields := tf.TextFields(l.Raw)
		if _, reps := red.Line(l.Raw, fields); len(reps) > 0 {
			pending = append(pending, found(reps, session, 0, path, l.No)...)
		}
		if reps := joint.next(l.Raw, fields); len(reps) > 0 {
			pending = append(pending, found(reps, session, 0, path, l.No)...)
		}
		if r := b.Add(l); r != nil && len(r.Entries) > 0 {
			settle(r.Entries[len(r.Entries)-1].Line, r.N)
		}
	}
	b.Finish()
	settle(-1, b.Rounds()+1)
	return out, nil
}

func found(reps []redact.Replacement, session string, round int, file string, line int) []secretJSON {
	var out []secretJSON
	for _, r := range reps {
		out = append(out, secretJSON{Kind: r.Rule, Session: session, Round: round, File: file, Line: line, Path: r.Path, Excerpt: r.Excerpt})
	}
	return out
}

// A jointScan finds the secrets cut between two lines of one message,
// as the store does when it inscribes (source.TextJoiner): it is given
// the lines in order.
type jointScan struct {
	red       *redact.Redactor
	tf        source.TextJoiner // nil: the format writes no message in parts
	ok        bool
	msg, text string // the last line's message and last text block
}

func newJointScan(red *redact.Redactor, a source.Adapter) *jointScan {
	tj, _ := a.(source.TextJoiner)
	return &jointScan{red: red, tf: tj}
}

// next returns the secrets cut between the last line given and line.
func (j *jointScan) next(line []byte, fields []source.TextField) []redact.Replacement {
	if j.tf == nil {
		return nil
	}
	msg, first, last, part := j.tf.MessagePart(line, fields)
	var reps []redact.Replacement
	if part && j.ok && msg == j.msg {
		_, _, reps = j.red.Joint(j.text, redact.FieldText(line, fields[first]))
	}
	j.ok, j.msg = part, msg
	if part {
		j.text = redact.FieldText(line, fields[last])
	}
	return reps
}

// scanDoc lists the secrets a document of the store holds: in its round
// files, in its markdown, and in the files kept beside it.
func scanDoc(red *redact.Redactor, d *inscribe.Doc) ([]secretJSON, error) {
	md := d.Path()
	m, err := d.Meta()
	if err != nil {
		return nil, err
	}
	session := m.SessionID
	if m.SidechainOf != nil {
		session += "/agent-" + m.SidechainOf.AgentID
	}
	f, err := formatOf(m)
	if err != nil {
		return nil, err
	}
	tf, _ := f.adapter.(source.TextFinder)
	var out []secretJSON
	rounds, err := d.Rounds()
	if err != nil {
		return nil, err
	}
	joint := newJointScan(red, f.adapter)
	for _, n := range rounds {
		p := d.RoundName(n)
		rf, err := d.Round(n)
		if err != nil {
			return nil, err
		}
		for _, re := range rf.Entries {
			raw, err := re.Bytes()
			if err != nil {
				continue
			}
			var reps []redact.Replacement
			if re.JSON != nil && tf != nil {
				fields := tf.TextFields(raw)
				_, reps = red.Line(raw, fields)
				reps = append(reps, joint.next(raw, fields)...)
			} else if re.Text != nil {
				_, reps = red.Text(*re.Text)
			}
			out = append(out, found(reps, session, n, p, re.Line)...)
		}
	}
	df, err := d.Open()
	if err != nil {
		return nil, err
	}
	doc, err := io.ReadAll(df)
	df.Close()
	if err != nil {
		return nil, err
	}
	text := string(doc)
	for _, fd := range red.Find(text) {
		i := strings.Index(text, fd.Secret)
		out = append(out, secretJSON{Kind: fd.Rule, Session: session, Round: roundAt(text, i), File: md,
			Line: strings.Count(text[:i], "\n") + 1, Excerpt: redact.Excerpt(text, i, i+len(fd.Secret))})
	}
	if meta, ok, _ := d.SidechainMeta(); ok {
		_, reps := red.File(meta)
		out = append(out, found(reps, session, 0, d.SidechainMetaName(), 0)...)
	}
	kept, _ := d.SourceFiles()
	for _, rel := range kept {
		f, err := d.OpenSourceFile(rel)
		if err != nil {
			continue
		}
		data, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			continue
		}
		_, reps := red.File(data)
		out = append(out, found(reps, session, 0, f.Name(), 0)...)
	}
	return out, nil
}

var roundAnchor = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`<a id="round-([0-9]+)"></a>`) })

// roundAt is the round of the document's text at offset i: the last round
// anchor before it.
func roundAt(text string, i int) int {
	n := 0
	for _, m := range roundAnchor().FindAllStringSubmatchIndex(text[:i], -1) {
		n, _ = strconv.Atoi(text[m[2]:m[3]])
	}
	return n
}
