package document

import (
	"bytes"
	"html"
	"io"
	"strings"
	"sync"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/scribe-archive/scribe/inscribe/document/internal/gfm"
)

// TextHTML writes a text of a message as HTML for a browser, in the form
// the document gives it: a text the document holds as plain markdown
// (markdown true and [Render] would write it plain) is rendered as
// markdown ([MarkdownHTML]); any other text, one the document fences, is
// a <pre> block that shows it character for character, with control
// characters other than tab and line feed shown as their Unicode pictures
// (a CR as ␍).
//
// Nothing a session holds can become markup: see [MarkdownHTML].
func TextHTML(w io.Writer, s string, markdown bool) error {
	if markdown && pickForm(s, true) == formPlain {
		return MarkdownHTML(w, s)
	}
	var b strings.Builder
	b.WriteString(`<pre class="text">`)
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20:
			b.WriteRune(0x2400 + r)
		case r == 0x7f:
			b.WriteRune('\u2421')
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		default:
			b.WriteRune(r)
		}
	}
	b.WriteString("</pre>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// MarkdownHTML writes markdown (a summary, a plain text) as HTML for a
// browser, as GitHub shows it (CommonMark with tables, strikethrough, task
// lists and bare links), except that nothing in it can run or fetch
// anything:
//
//   - raw HTML, inline or a block, is shown as the text it is (escaped),
//     never passed through: a <script> reads as "<script>";
//   - a link whose scheme is not http, https or mailto (javascript:,
//     data:, vbscript:, file:, …) loses its link and keeps its text;
//   - an image is shown as a link to it (its alt text, or "image"), so a
//     message cannot make the reader's browser fetch anything.
func MarkdownHTML(w io.Writer, src string) error {
	return htmlMarkdown().Convert([]byte(src), w)
}

// htmlMarkdown renders markdown for a browser. It is safe for concurrent
// use. Raw HTML is off (html.WithUnsafe is not set), and the renderer
// below shows it as text rather than dropping it. It is made when first
// used.
var htmlMarkdown = sync.OnceValue(func() goldmark.Markdown {
	return goldmark.New(
		goldmark.WithExtensions(gfm.GFM),
		goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(linkGuard{}, 100))),
		goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(rawHTMLAsText{}, 100))),
	)
})

// rawHTMLAsText renders raw HTML as escaped text.
type rawHTMLAsText struct{}

func (rawHTMLAsText) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindRawHTML, func(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			segs := n.(*ast.RawHTML).Segments
			for i := 0; i < segs.Len(); i++ {
				seg := segs.At(i)
				w.WriteString(html.EscapeString(string(seg.Value(src))))
			}
		}
		return ast.WalkSkipChildren, nil
	})
	reg.Register(ast.KindHTMLBlock, func(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		b := n.(*ast.HTMLBlock)
		var buf bytes.Buffer
		lines := b.Lines()
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			buf.Write(seg.Value(src))
		}
		if b.HasClosure() {
			buf.Write(b.ClosureLine.Value(src))
		}
		w.WriteString(`<pre class="html">`)
		w.WriteString(html.EscapeString(strings.TrimRight(buf.String(), "\n")))
		w.WriteString("</pre>\n")
		return ast.WalkSkipChildren, nil
	})
}

// linkGuard takes the link off links with a scheme a browser could run or
// that reads local files, and turns images into links.
type linkGuard struct{}

func (linkGuard) Transform(doc *ast.Document, reader text.Reader, pc parser.Context) {
	src := reader.Source()
	var links []ast.Node
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			switch n.Kind() {
			case ast.KindLink, ast.KindImage, ast.KindAutoLink:
				links = append(links, n)
			}
		}
		return ast.WalkContinue, nil
	})
	for _, n := range links {
		parent := n.Parent()
		if parent == nil {
			continue
		}
		switch n := n.(type) {
		case *ast.Link:
			if !SafeURL(destination(n.Destination)) {
				unwrap(n)
			}
		case *ast.Image:
			if !SafeURL(destination(n.Destination)) {
				unwrap(n)
				continue
			}
			l := ast.NewLink()
			l.Destination = n.Destination
			l.Title = n.Title
			if n.ChildCount() == 0 {
				l.AppendChild(l, ast.NewString([]byte("image")))
			}
			for c := n.FirstChild(); c != nil; {
				next := c.NextSibling()
				l.AppendChild(l, c)
				c = next
			}
			parent.ReplaceChild(parent, n, l)
		case *ast.AutoLink:
			if !SafeURL(string(n.URL(src))) {
				parent.ReplaceChild(parent, n, ast.NewString(n.Label(src)))
			}
		}
	}
}

// destination is a link's destination as the renderer writes it: with
// its backslash escapes and character references resolved.
func destination(d []byte) string {
	return string(util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(d))))
}

// unwrap replaces a node by its children.
func unwrap(n ast.Node) {
	parent := n.Parent()
	for c := n.FirstChild(); c != nil; {
		next := c.NextSibling()
		parent.InsertBefore(parent, n, c)
		c = next
	}
	parent.RemoveChild(parent, n)
}

// SafeURL reports whether a link's destination may be followed from an
// archived message: a relative reference, or an http, https or mailto URL.
// It reads the destination as a browser does (leading and trailing
// spaces and control characters dropped, tabs and line breaks removed),
// and any scheme it does not know is unsafe.
func SafeURL(u string) bool {
	u = strings.TrimFunc(u, func(r rune) bool { return r <= ' ' })
	u = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, u)
	i := strings.IndexAny(u, ":/?#")
	if i < 0 || u[i] != ':' {
		return true // relative
	}
	switch strings.ToLower(u[:i]) {
	case "http", "https", "mailto":
		return true
	}
	return false
}
