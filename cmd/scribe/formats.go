package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/scribe-archive/scribe/adapters/claude"
	"github.com/scribe-archive/scribe/adapters/codex"
	"github.com/scribe-archive/scribe/adapters/gemini"
	"github.com/scribe-archive/scribe/check"
	"github.com/scribe-archive/scribe/exportclaude"
	"github.com/scribe-archive/scribe/exportcodex"
	"github.com/scribe-archive/scribe/exportcore"
	"github.com/scribe-archive/scribe/exportgemini"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
)

// A format is one source format scribe knows: the adapter that reads the
// client's files, and the export that writes a document back as the client
// keeps it. This file is the one place that names the concrete adapters and
// exporters; everything else takes them as values.
type format struct {
	adapter source.Adapter
	// transcript writes one document's file (a session's or a sidechain's).
	transcript func(d *inscribe.Doc, w io.Writer) ([]error, error)
	// exportSession writes a session, its sidechains and the files kept
	// beside it into dir, laid out as the client lays them out.
	exportSession func(d *inscribe.Doc, dir string, force bool) ([]exportclaude.File, []error, error)
	// exportDir is where the client would look for a session's files.
	exportDir func(m *session.Meta) (string, error)
	// client names the client, and command the export that writes its
	// files.
	client, command string
	// convert writes, as this client's file, a session inscribed from
	// another format (a cross-agent export), and says what it could not
	// carry; convertSession writes it into dir, where the client looks.
	convert        func(d *inscribe.Doc, from exportcore.Source, w io.Writer) (*exportclaude.Losses, error)
	convertSession func(d *inscribe.Doc, from exportcore.Source, dir string, force bool) ([]exportclaude.File, *exportclaude.Losses, error)
}

// source is the format as a conversion from it reads a document: its
// source file written back, and what its client sends on resume.
func (f *format) source() exportcore.Source {
	r, _ := f.adapter.(source.Resumer)
	return exportcore.Source{Transcript: f.transcript, Resumer: r}
}

// formats are the source formats, in the order their default folders are
// read.
var formats = []*format{claudeFormat(), codexFormat(), geminiFormat()}

func claudeFormat() *format {
	a := claude.New()
	return &format{
		adapter: a,
		client:  "Claude Code",
		command: "export-claude",
		convert: exportclaude.Convert,
		convertSession: func(d *inscribe.Doc, from exportcore.Source, dir string, force bool) ([]exportclaude.File, *exportclaude.Losses, error) {
			return exportclaude.ConvertSession(d, from, dir, exportclaude.Options{Force: force})
		},
		transcript: func(d *inscribe.Doc, w io.Writer) ([]error, error) {
			return exportclaude.Transcript(d, a, w)
		},
		exportSession: func(d *inscribe.Doc, dir string, force bool) ([]exportclaude.File, []error, error) {
			return exportclaude.Session(d, a, dir, exportclaude.Options{Force: force})
		},
		exportDir: func(m *session.Meta) (string, error) {
			projects, err := claude.DefaultProjectsDir()
			if err != nil {
				return "", err
			}
			return exportclaude.ProjectDir(projects, m)
		},
	}
}

func codexFormat() *format {
	a := codex.New()
	return &format{
		adapter: a,
		client:  "Codex",
		command: "export-codex",
		convert: exportcodex.Convert,
		convertSession: func(d *inscribe.Doc, from exportcore.Source, dir string, force bool) ([]exportclaude.File, *exportclaude.Losses, error) {
			return exportcodex.ConvertSession(d, from, dir, exportcodex.Options{Force: force})
		},
		transcript: func(d *inscribe.Doc, w io.Writer) ([]error, error) {
			return exportcodex.Transcript(d, a, w)
		},
		exportSession: func(d *inscribe.Doc, dir string, force bool) ([]exportclaude.File, []error, error) {
			return exportcodex.Session(d, a, dir, exportcodex.Options{Force: force})
		},
		exportDir: func(*session.Meta) (string, error) { return exportcodex.DefaultDir() },
	}
}

func geminiFormat() *format {
	a := gemini.New()
	return &format{
		adapter: a,
		client:  "Gemini CLI",
		command: "export-gemini",
		convert: exportgemini.Convert,
		convertSession: func(d *inscribe.Doc, from exportcore.Source, dir string, force bool) ([]exportclaude.File, *exportclaude.Losses, error) {
			return exportgemini.ConvertSession(d, from, dir, exportgemini.Options{Force: force})
		},
		transcript: func(d *inscribe.Doc, w io.Writer) ([]error, error) {
			return exportgemini.Transcript(d, a, w)
		},
		exportSession: func(d *inscribe.Doc, dir string, force bool) ([]exportclaude.File, []error, error) {
			return exportgemini.Session(d, a, dir, exportgemini.Options{Force: force})
		},
		exportDir: func(m *session.Meta) (string, error) {
			tmp, err := exportgemini.DefaultDir()
			if err != nil {
				return "", err
			}
			return exportgemini.Dir(tmp, m)
		},
	}
}

// adapters are the adapters of the formats, as the store takes them
// (inscribe.Store.Formats).
func adapters() []source.Adapter {
	out := make([]source.Adapter, len(formats))
	for i, f := range formats {
		out[i] = f.adapter
	}
	return out
}

// formatOf returns the format a document was inscribed from. A document
// without source_format (format scribe/1) came from Claude Code.
func formatOf(m *session.Meta) (*format, error) {
	name := m.SourceFormat
	if name == "" {
		name = claude.Format
	}
	for _, f := range formats {
		if f.adapter.Format() == name {
			return f, nil
		}
	}
	return nil, fmt.Errorf("session %s was inscribed from %s, a source format this scribe does not know (it knows %s): use a newer scribe", m.SessionID, name, formatNames())
}

// formatNamed returns the format of a source_format name.
func formatNamed(name string) *format {
	for _, f := range formats {
		if f.adapter.Format() == name {
			return f
		}
	}
	panic("scribe: no format " + name)
}

// formatFor returns the format of an adapter.
func formatFor(a source.Adapter) *format {
	for _, f := range formats {
		if f.adapter == a {
			return f
		}
	}
	panic("scribe: an adapter without its format")
}

func formatNames() string {
	var names []string
	for _, f := range formats {
		names = append(names, f.adapter.Format())
	}
	return strings.Join(names, ", ")
}

// checkFormat is f as package check takes it.
func (f *format) checkFormat() check.Format {
	return check.Format{
		Source: f.adapter,
		Export: func(d *inscribe.Doc, dir string) error {
			_, _, err := f.exportSession(d, dir, false)
			return err
		},
		Transcript: f.transcript,
	}
}

// discover finds the sessions at path, in every format whose files it
// holds. A file is recognised by its content; a folder that holds no
// sessions (a client's emptied folder) holds none, and that is no error.
// What a folder holds that was left out (a file that is not a session, a
// folder that cannot be read, a link that leads out of it) comes back in
// skipped, each to be reported: a file another format reads is not.
func discover(path string) (out []source.Session, skipped []*source.SkipError, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	// Each format reads the folder on its own (its detection opens every
	// file it might read): they look at once, and their findings are
	// taken in the formats' order.
	type found struct {
		ok      bool
		ss      []source.Session
		skipped []*source.SkipError
		err     error
	}
	finds := make([]found, len(formats))
	var wg sync.WaitGroup
	for i, f := range formats {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !f.adapter.Detect(path) {
				return
			}
			ss, err := f.adapter.Discover(path)
			skips, err := source.Skips(err)
			finds[i] = found{true, ss, skips, err}
		}()
	}
	wg.Wait()
	detected := false
	for _, fd := range finds {
		if !fd.ok {
			continue
		}
		detected = true
		out = append(out, fd.ss...)
		skipped = append(skipped, fd.skipped...)
		if fd.err != nil {
			return out, skipped, fd.err
		}
	}
	if !detected && !fi.IsDir() {
		return nil, nil, &notSessionsError{path}
	}
	return out, readElsewhere(out, skipped), nil
}

// forEachSession calls fn with every session found in sources, in order,
// warning on stderr about the files it skipped; a source that cannot be
// read ends it with an error that says what to do.
func forEachSession(e *env, sources []string, fn func(source.Session) error) error {
	for _, src := range sources {
		ts, skipped, err := discover(src)
		for _, sk := range skipped {
			fmt.Fprintf(e.stderr, "scribe: warning: %v\n", sk)
		}
		if err != nil {
			return describeOpenError(src, err)
		}
		for _, t := range ts {
			if err := fn(t); err != nil {
				return err
			}
		}
	}
	return nil
}

// readElsewhere drops from skipped the files that another format read as
// sessions: each format skips the others' files.
func readElsewhere(ss []source.Session, skipped []*source.SkipError) []*source.SkipError {
	read := map[string]bool{}
	for _, s := range ss {
		read[s.Path] = true
		for _, sc := range s.Sidechains {
			read[sc.Path] = true
		}
	}
	out := skipped[:0]
	seen := map[string]bool{}
	for _, sk := range skipped {
		if !read[sk.Path] && !seen[sk.Path] {
			seen[sk.Path] = true
			out = append(out, sk)
		}
	}
	return out
}

// notSessionsError is a path that holds no session of any known format.
type notSessionsError struct{ path string }

func (e *notSessionsError) Error() string {
	return fmt.Sprintf("%s: not a session file, or a folder of sessions, of any client scribe reads (%s)", e.path, formatNames())
}

// sessionsBelow returns the folders inside dir that hold sessions where a
// client keeps them (dir/projects for Claude Code, dir/sessions for Codex):
// given ~/.claude or a copy of it, scribe finds none in dir itself.
func sessionsBelow(dir string) []string {
	var out []string
	for _, f := range formats {
		def, err := f.adapter.DefaultDir()
		if err != nil {
			continue
		}
		sub := filepath.Join(dir, filepath.Base(def))
		if fi, err := os.Stat(sub); err != nil || !fi.IsDir() {
			continue
		}
		if ss, _, err := discover(sub); err == nil && len(ss) > 0 {
			out = append(out, sub)
		}
	}
	return out
}

// defaultSources are the folders where the clients keep their sessions on
// this machine, those that hold any.
func defaultSources() ([]string, []string) {
	var have, looked []string
	for _, f := range formats {
		dir, err := f.adapter.DefaultDir()
		if err != nil {
			continue
		}
		looked = append(looked, dir)
		if ss, _, err := discover(dir); err == nil && len(ss) > 0 {
			have = append(have, dir)
		}
	}
	return have, looked
}
