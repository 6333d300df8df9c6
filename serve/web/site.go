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
	"github.com/scribe-archive/scribe/inscribe/document"
	"github.com/scribe-archive/scribe/session"
)

// WriteSite writes the archive into dir as a static site: the pages the
// server shows, with the same URLs but for the sessions list (index.html
// and page-N.html for every agent, agents/<agent>/… for each), and
// without the search page. It returns how many pages it wrote.
//
// Each document is read twice, once to learn on which page each message
// is (links to a message on another page go straight to it, where the
// server redirects) and once to write its pages.
func (s *Server) WriteSite(ctx context.Context, dir string) (int, error) {
	w := &siteWriter{s: s, dir: dir}
	if err := w.assets(); err != nil {
		return w.pages, err
	}
	agents, _, err := s.store.counts(ctx)
	if err != nil {
		return w.pages, err
	}
	if err := w.lists(ctx, ""); err != nil {
		return w.pages, err
	}
	for _, a := range agents {
		if !validID(a.Value) {
			continue
		}
		if err := w.lists(ctx, a.Value); err != nil {
			return w.pages, err
		}
	}
	rows, _, err := s.store.sessions(ctx, index.ListQuery{})
	if err != nil {
		return w.pages, err
	}
	for _, row := range rows {
		if err := ctx.Err(); err != nil {
			return w.pages, err
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
		m, err := w.doc(ref)
		if err != nil {
			return w.pages, err
		}
		v := newDocView(ref, linker{}, m)
		for _, sc := range m.Sidechains {
			key, ok := v.sidechainKey(sc.Path)
			if !ok {
				continue
			}
			sref, ok := s.findDoc(ref.sid, strings.TrimPrefix(key, ref.sid+"/agent-"))
			if !ok {
				continue
			}
			if _, err := w.doc(sref); err != nil {
				return w.pages, err
			}
		}
	}
	return w.pages, nil
}

type siteWriter struct {
	s     *Server
	dir   string
	pages int
}

// chrome is the frame of a static page at rel (slash separated, below
// the site's root).
func (w *siteWriter) chrome(rel, title string) chrome {
	return chrome{Title: title, CSP: metaCSP, L: linker{static: true, base: strings.Repeat("../", strings.Count(rel, "/"))}}
}

func (w *siteWriter) write(rel string, data []byte) error {
	p := filepath.Join(w.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, data, 0o644)
}

func (w *siteWriter) page(rel, name string, data any) error {
	var sb strings.Builder
	if err := pages().ExecuteTemplate(&sb, name, data); err != nil {
		return fmt.Errorf("%s: %w", rel, err)
	}
	w.pages++
	return w.write(rel, []byte(sb.String()))
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
		return w.write(p, data)
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
func (w *siteWriter) doc(ref docRef) (*session.Meta, error) {
	n := w.s.opts.PageItems
	ps := &pageSet{page: map[string]int{}}
	rd, err := document.OpenItems(ref.md)
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
	}
	rd.Close()

	if rd, err = document.OpenItems(ref.md); err != nil {
		return nil, err
	}
	defer rd.Close()
	src := &itemSource{rd: rd}
	folder := "s/" + ref.key + "/"
	exported := false
	if w.s.store.Transcript != nil {
		if exported, err = w.transcript(ref, folder+"transcript.jsonl"); err != nil {
			return nil, err
		}
	}
	for page := 1; ; page++ {
		rel := folder + pageFile(page)
		p, err := w.s.renderDocPage(w.chrome(rel, ""), ref, page, ps, src)
		if errors.Is(err, errNoPage) {
			break
		}
		if err != nil {
			return nil, err
		}
		if !exported {
			p.Transcript = ""
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
	md, err := os.ReadFile(ref.md)
	if err != nil {
		return nil, err
	}
	if err := w.write(folder+"document.md", md); err != nil {
		return nil, err
	}
	return rd.Meta, nil
}

// files copies the document's files/ folder.
func (w *siteWriter) files(ref docRef, rel string) error {
	ents, err := os.ReadDir(filepath.Join(ref.folder(), "files"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !e.Type().IsRegular() || !validName(e.Name()) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(ref.folder(), "files", e.Name()))
		if err != nil {
			return err
		}
		if err := w.write(rel+e.Name(), data); err != nil {
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
	warnings, err := w.s.store.Transcript(ref.md, f)
	for _, wn := range warnings {
		w.s.opts.Logf("web: export %s: %v", ref.md, wn)
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		return false, cerr
	}
	if err != nil {
		w.s.opts.Logf("web: export %s: %v; the site has no transcript of it", ref.md, err)
		os.Remove(p)
		return false, nil
	}
	return true, nil
}
