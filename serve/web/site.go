package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/scribe-archive/scribe/index"
	"github.com/scribe-archive/scribe/session"
)

// WriteSite writes the archive into dir as a static site: the pages the
// server shows, with the same URLs but for the sessions list (index.html
// and page-N.html for every agent, agents/<agent>/… for each), and
// without the search page. It reports what it wrote (Options.NoTranscripts
// leaves out the downloads, which are most of a site's size).
//
// Each document is read twice, once to learn on which page each message
// is (links to a message on another page go straight to it, where the
// server redirects) and once to write its pages.
func (s *Server) WriteSite(ctx context.Context, dir string) (SiteReport, error) {
	w := &siteWriter{s: s, dir: dir}
	if err := w.assets(); err != nil {
		return w.report, err
	}
	agents, _, err := s.store.counts(ctx)
	if err != nil {
		return w.report, err
	}
	if err := w.lists(ctx, ""); err != nil {
		return w.report, err
	}
	for _, a := range agents {
		if !validID(a.Value) {
			continue
		}
		if err := w.lists(ctx, a.Value); err != nil {
			return w.report, err
		}
	}
	rows, _, err := s.store.sessions(ctx, index.ListQuery{})
	if err != nil {
		return w.report, err
	}
	for _, row := range rows {
		if err := ctx.Err(); err != nil {
			return w.report, err
		}
		key, ok := docKey(row.Doc)
		var ref docRef
		if ok && !strings.Contains(key, "/") {
			ref, ok = s.findDoc(key, "")
		}
		if !ok {
			s.opts.Logf("web: %s: no document in the store; left out", row.Doc)
			continue
		}
		m, err := w.doc(ctx, ref)
		if err != nil {
			return w.report, err
		}
		v := newDocView(ref, chrome{}, m)
		for _, sc := range m.Sidechains {
			key, ok := v.sidechainKey(sc.Path)
			if !ok {
				continue
			}
			sref, ok := s.findDoc(ref.sid, strings.TrimPrefix(key, ref.sid+"/agent-"))
			if !ok {
				continue
			}
			if _, err := w.doc(ctx, sref); err != nil {
				return w.report, err
			}
		}
	}
	return w.report, nil
}

type siteWriter struct {
	s      *Server
	dir    string
	report SiteReport
}

// SiteReport says what WriteSite wrote: how many files of each kind, and
// their bytes.
type SiteReport struct {
	Pages, Documents, Transcripts, Files, Assets Tally
}

// Tally is how many files of a kind, and their bytes.
type Tally struct {
	N     int
	Bytes int64
}

func (t *Tally) add(n int64) { t.N++; t.Bytes += n }

// Total is every file of the site.
func (r SiteReport) Total() Tally {
	var t Tally
	for _, k := range []Tally{r.Pages, r.Documents, r.Transcripts, r.Files, r.Assets} {
		t.N += k.N
		t.Bytes += k.Bytes
	}
	return t
}

// chrome is the frame of a static page at rel (slash separated, below
// the site's root).
func (w *siteWriter) chrome(rel, title string) chrome {
	return chrome{Title: title, CSP: metaCSP, L: linker{static: true, base: strings.Repeat("../", strings.Count(rel, "/"))}, zone: w.s.opts.Zone}
}

// write writes a file of the site, and counts it in t.
func (w *siteWriter) write(t *Tally, rel string, data []byte) error {
	p := filepath.Join(w.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		return err
	}
	t.add(int64(len(data)))
	return nil
}

// copy copies a file into the site as it streams, and counts it in t.
func (w *siteWriter) copy(t *Tally, rel string, open func() (*os.File, error)) error {
	p := filepath.Join(w.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	in, err := open()
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(p)
	if err != nil {
		return err
	}
	n, err := io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	t.add(n)
	return nil
}

func (w *siteWriter) page(rel, name string, data any) error {
	var sb strings.Builder
	if err := pages().ExecuteTemplate(&sb, name, data); err != nil {
		return fmt.Errorf("%s: %w", rel, err)
	}
	return w.write(&w.report.Pages, rel, []byte(sb.String()))
}

func (w *siteWriter) assets() error {
	return fs.WalkDir(assets, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(assets, p)
		if err != nil {
			return err
		}
		return w.write(&w.report.Assets, p, data)
	})
}

// lists writes the pages of the sessions list, of one agent or of all.
func (w *siteWriter) lists(ctx context.Context, agent string) error {
	dir := ""
	if agent != "" {
		dir = "agents/" + agent + "/"
	}
	for page := 1; ; page++ {
		rel := dir + pageFile(page)
		p, err := w.s.listPage(ctx, w.chrome(rel, "Sessions"), agent, "", page)
		if err != nil {
			return err
		}
		if err := w.page(rel, "list.html", p); err != nil {
			return err
		}
		if page >= p.Pager.Pages {
			return nil
		}
	}
}

// doc writes a document's pages, files and downloads, and returns its
// frontmatter.
func (w *siteWriter) doc(ctx context.Context, ref docRef) (*session.Meta, error) {
	n := w.s.opts.PageItems
	ps := &pageSet{page: map[string]int{}, round: map[int]int{}}
	rd, err := ref.doc.Items()
	if err != nil {
		return nil, err
	}
	for i := 0; ; i++ {
		it, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			rd.Close()
			return nil, err
		}
		if len(it.IDs) > 0 {
			if _, ok := ps.page[it.IDs[0]]; !ok {
				ps.page[it.IDs[0]] = i/n + 1
			}
		}
		if it.Round > 0 {
			ps.round[it.Round] = i/n + 1
		}
	}
	rd.Close()

	if rd, err = ref.doc.Items(); err != nil {
		return nil, err
	}
	defer rd.Close()
	src := &itemSource{rd: rd}
	folder := "s/" + ref.key + "/"
	exported := false
	if w.s.store.Transcript != nil && !w.s.opts.NoTranscripts {
		if exported, err = w.transcript(ref, folder+"transcript.jsonl"); err != nil {
			return nil, err
		}
	}
	for page := 1; ; page++ {
		rel := folder + pageFile(page)
		p, err := w.s.renderDocPage(ctx, w.chrome(rel, ""), ref, page, ps, src)
		if errors.Is(err, errNoPage) {
			break
		}
		if err != nil {
			return nil, err
		}
		if !exported {
			p.Transcript = ""
		}
		if w.s.opts.NoTranscripts {
			p.Markdown = ""
		}
		if err := w.page(rel, "doc.html", p); err != nil {
			return nil, err
		}
		if page >= p.Pager.Pages {
			break
		}
	}
	if err := w.files(ref, folder+"files/"); err != nil {
		return nil, err
	}
	if !w.s.opts.NoTranscripts {
		if err := w.copy(&w.report.Documents, folder+"document.md", ref.doc.Open); err != nil {
			return nil, err
		}
	}
	return rd.Meta, nil
}

// files copies the document's files/ folder.
func (w *siteWriter) files(ref docRef, rel string) error {
	names, err := ref.doc.Shown()
	if err != nil {
		return err
	}
	for _, name := range names {
		if !validName(name) {
			continue
		}
		if err := w.copy(&w.report.Files, rel+name, func() (*os.File, error) { return ref.doc.OpenShown(name) }); err != nil {
			return err
		}
	}
	return nil
}

// transcript writes the exported transcript of a document, and reports
// whether it could. A document that does not export is reported and left
// without one; its pages do not offer it.
func (w *siteWriter) transcript(ref docRef, rel string) (bool, error) {
	p := filepath.Join(w.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return false, err
	}
	f, err := os.Create(p)
	if err != nil {
		return false, err
	}
	cw := &countingWriter{w: f}
	warnings, err := w.s.store.Transcript(ref.doc, cw)
	for _, wn := range warnings {
		w.s.opts.Logf("web: export %s: %v", ref.doc, wn)
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		return false, cerr
	}
	if err != nil {
		w.s.opts.Logf("web: export %s: %v; the site has no transcript of it", ref.doc, err)
		os.Remove(p)
		return false, nil
	}
	w.report.Transcripts.add(cw.n)
	return true, nil
}
