package document

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
	"gopkg.in/yaml.v3"

	"github.com/scribe-archive/scribe/session"
)

// FormatError is a document that does not follow the format. Line is
// 1-based, counted in the whole file.
type FormatError struct {
	File string
	Line int
	Msg  string
}

func (e *FormatError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Parse reads a document. name is used in errors.
func Parse(src []byte, name string) (*session.Document, error) {
	fm, body, bodyLine, err := splitFrontmatter(src, name)
	if err != nil {
		return nil, err
	}
	d := &session.Document{}
	if err := decodeFrontmatter(fm, &d.Meta, name); err != nil {
		return nil, err
	}
	p := &docParser{src: body, name: name, lineBase: bodyLine - 1}
	if i := invalidUTF8(body); i >= 0 {
		return nil, p.errorf(i, invalidText)
	}
	if err := p.parse(d); err != nil {
		return nil, err
	}
	return d, nil
}

// ParseMeta reads only a document's frontmatter. name is used in errors.
func ParseMeta(src []byte, name string) (*session.Meta, error) {
	fm, _, _, err := splitFrontmatter(src, name)
	if err != nil {
		return nil, err
	}
	var m session.Meta
	if err := decodeFrontmatter(fm, &m, name); err != nil {
		return nil, err
	}
	return &m, nil
}

// splitFrontmatter returns the YAML between the "---" lines, the body after
// them, and the body's first line number.
func splitFrontmatter(src []byte, name string) (fm, body []byte, bodyLine int, err error) {
	if !bytes.HasPrefix(src, []byte("---\n")) {
		msg := "not a scribe document: no frontmatter (the file must start with a \"---\" line)"
		switch {
		case bytes.HasPrefix(src, []byte("\uFEFF")):
			msg = "the file starts with a byte order mark (U+FEFF): a scribe document starts with a \"---\" line"
		case bytes.HasPrefix(src, []byte("---\r\n")):
			msg = "the lines end in CRLF (\"\\r\\n\"), not \"\\n\": was the file converted (by Git's autocrlf, say)?"
		}
		return nil, nil, 0, &FormatError{File: name, Line: 1, Msg: msg}
	}
	end := bytes.Index(src[4:], []byte("\n---\n"))
	if end < 0 {
		return nil, nil, 0, &FormatError{File: name, Line: 1, Msg: "frontmatter is not closed by a \"---\" line"}
	}
	fm = src[4 : 4+end+1]
	if i := invalidUTF8(fm); i >= 0 {
		return nil, nil, 0, &FormatError{File: name, Line: lineAt(src, 4+i), Msg: invalidText}
	}
	body = src[4+end+5:]
	return fm, body, bytes.Count(src[:4+end+5], []byte("\n")) + 1, nil
}

func decodeFrontmatter(fm []byte, m *session.Meta, name string) error {
	if err := DecodeYAML(fm, m); err != nil {
		return frontmatterError(fm, err, name)
	}
	if m.Format != session.FormatVersion && m.Format != session.FormatVersion1 {
		return &FormatError{File: name, Line: 2, Msg: fmt.Sprintf("format %q is not %q: this document was written by another version of scribe", m.Format, session.FormatVersion)}
	}
	return nil
}

// frontmatterError reports an error of the YAML decoder on the line of the
// file it names (the frontmatter starts on line 2).
func frontmatterError(fm []byte, err error, name string) error {
	// A frontmatter whose closing "---" is gone runs on to the first
	// separator of the body: the title is inside it (YAML reads it as a
	// comment), and what follows it is not YAML.
	if i := bytes.Index(fm, []byte("\n\n# ")); i >= 0 {
		return &FormatError{File: name, Line: 2 + bytes.Count(fm[:i+2], []byte("\n")), Msg: "the frontmatter is not closed: a \"---\" line must come before the title"}
	}
	var te *yaml.TypeError
	if !errors.As(err, &te) || len(te.Errors) == 0 {
		// A syntax error. The YAML library counts the lines of some from
		// 0 and of others from 1; the first run of whole lines that does
		// not parse ends on the line at fault.
		line, n := 2, 2
		for end := 0; end < len(fm); n++ {
			nl := bytes.IndexByte(fm[end:], '\n')
			if nl < 0 {
				break
			}
			end += nl + 1
			var node yaml.Node
			if yaml.Unmarshal(fm[:end], &node) != nil {
				line = n
				break
			}
		}
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		if _, rest, ok := yamlLine(msg, "line ", ": "); ok {
			msg = rest
		}
		return &FormatError{File: name, Line: line, Msg: "frontmatter: " + msg}
	}
	// A value that does not fit its field: the library's line numbers
	// count from the frontmatter's first line, the file's second.
	line, msg := 2, te.Errors[0]
	if l, rest, ok := yamlLine(msg, "line ", ": "); ok {
		line, msg = l+1, rest
	}
	if field, ok := strings.CutPrefix(msg, "field "); ok {
		if f, _, ok := strings.Cut(field, " not found in type "); ok {
			msg = fmt.Sprintf("unknown field %q", f)
		}
	}
	if before, after, ok := strings.Cut(msg, " already defined at line "); ok {
		if n, err := strconv.Atoi(after); err == nil {
			msg = fmt.Sprintf("%s already defined at line %d", before, n+1)
		}
	}
	if len(te.Errors) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(te.Errors)-1)
	}
	return &FormatError{File: name, Line: line, Msg: "frontmatter: " + msg}
}

// yamlLine reads a line number that follows prefix in msg, up to sep.
func yamlLine(msg, prefix, sep string) (line int, rest string, ok bool) {
	after, ok := strings.CutPrefix(msg, prefix)
	if !ok {
		return 0, msg, false
	}
	num, rest, ok := strings.Cut(after, sep)
	n, err := strconv.Atoi(num)
	if !ok || err != nil {
		return 0, msg, false
	}
	return n, rest, true
}

// DecodeYAML decodes the first YAML document in data into v as the
// frontmatter is decoded: a field v does not have is an error. It returns
// io.EOF when data holds no YAML document. The store reads its other YAML
// file, the roles registry, with it, so that one package imports the YAML
// library.
func DecodeYAML(data []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	return dec.Decode(v)
}

// token is a top-level node of the body.
type token struct {
	node  ast.Node
	start int // offset of the node's first line
	end   int // offset just past the node's last line (structural tokens only)
	kind  tokKind
	// For HTML blocks: the scribe marker kind and its JSON ("" for the item
	// identity, "details" for a details opening, "/details" for its end).
	mark string
	data []byte
	// For fences: the info string.
	info string
}

type tokKind int

const (
	tokOther tokKind = iota // part of a plain text
	tokHTML                 // one of scribe's HTML blocks
	tokFence                // one of scribe's fenced blocks
	tokBreak                // a thematic break
	tokH1
	tokH3
)

type docParser struct {
	src      []byte
	name     string
	lineBase int
	toks     []token
	// share lets a long text be a string over src's bytes rather than a
	// copy of them (an ItemReader's window, never written once parsed);
	// shared tells that one was.
	share, shared bool
}

// text returns b, which lies in src, as a string: one of shareMin bytes
// or more shares src's bytes when the parser may (a 100 MB message was
// held twice, its window and its text; issue 33).
func (p *docParser) text(b []byte) string {
	if p.share && len(b) >= shareMin {
		p.shared = true
		return unsafe.String(unsafe.SliceData(b), len(b))
	}
	return string(b)
}

// shareMin is the least a text shares of its window.
const shareMin = 1 << 20

func (p *docParser) errorf(off int, format string, args ...any) error {
	line := p.lineBase + bytes.Count(p.src[:min(max(off, 0), len(p.src))], []byte("\n")) + 1
	return &FormatError{File: p.name, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// lineEnd returns the offset just past the line holding off.
func (p *docParser) lineEnd(off int) int {
	if i := bytes.IndexByte(p.src[off:], '\n'); i >= 0 {
		return off + i + 1
	}
	return len(p.src)
}

func (p *docParser) tokenize() {
	doc := goldmarkParser().Parse(text.NewReader(p.src))
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		t := token{node: n, start: lineStart(p.src, n.Pos())}
		switch n := n.(type) {
		case *ast.HTMLBlock:
			first := p.src[t.start:p.lineEnd(t.start)]
			if mark, data, ok := ParseMarker(first); ok {
				t.kind, t.mark, t.data = tokHTML, mark, data
			} else if bytes.HasPrefix(first, []byte("<details><summary>")) {
				t.kind, t.mark = tokHTML, "details"
			} else if bytes.HasPrefix(first, []byte("</details>")) {
				t.kind, t.mark = tokHTML, "/details"
			}
			if t.kind == tokHTML {
				t.end = p.htmlEnd(n, t.start)
			}
		case *ast.FencedCodeBlock:
			if n.Info != nil {
				t.info = string(n.Info.Value(p.src))
			}
			if strings.Contains(t.info, "scribe:") {
				t.kind = tokFence
			}
		case *ast.ThematicBreak:
			t.kind = tokBreak
			t.end = p.lineEnd(t.start)
		case *ast.Heading:
			if n.Level == 1 {
				t.kind = tokH1
			} else if n.Level == 3 {
				t.kind = tokH3
			}
			t.end = p.lineEnd(t.start)
		}
		p.toks = append(p.toks, t)
	}
}

// htmlEnd returns the offset just past an HTML block.
func (p *docParser) htmlEnd(n *ast.HTMLBlock, start int) int {
	end := p.lineEnd(start)
	if l := n.Lines(); l.Len() > 0 {
		end = max(end, p.lineEnd(max(l.At(l.Len()-1).Stop-1, start)))
	}
	if n.HasClosure() {
		end = max(end, p.lineEnd(max(n.ClosureLine.Stop-1, start)))
	}
	return end
}

// ParseMarker reads a marker, "<!-- scribe[:kind][ json] -->", at the
// start of a line; what follows " -->" is not read. kind is "" for a
// message's identity.
func ParseMarker(line []byte) (kind string, data []byte, ok bool) {
	const open = "<!-- scribe"
	if !bytes.HasPrefix(line, []byte(open)) {
		return "", nil, false
	}
	rest := line[len(open):]
	end := bytes.Index(rest, []byte(" -->"))
	if end < 0 {
		return "", nil, false
	}
	rest = rest[:end]
	if len(rest) > 0 && rest[0] == ':' {
		i := bytes.IndexByte(rest, ' ')
		if i < 0 {
			return string(rest[1:]), nil, true
		}
		return string(rest[1:i]), rest[i+1:], true
	}
	if len(rest) > 0 && rest[0] == ' ' {
		return "", rest[1:], true
	}
	if len(rest) == 0 {
		return "", nil, true
	}
	return "", nil, false
}

// invalidUTF8 returns the offset of the first byte of b that is not UTF-8,
// or -1. A document is UTF-8 text: a text that is not could not be written
// back (a quoted text is a JSON string), so it is not read either.
func invalidUTF8(b []byte) int {
	if utf8.Valid(b) {
		return -1
	}
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

const (
	invalidText  = "this line is not UTF-8 text, as a scribe document is"
	titleMissing = "expected the title (a \"# \" heading) after the frontmatter and a blank line"
	cutShort     = "the document does not end with a line end (was it cut short?)"
)

// isIdentity reports whether t is a message's identity.
func (t *token) isIdentity() bool { return t.kind == tokHTML && t.mark == "" && t.data != nil }

// misplacedIdentity says what is wrong with an identity that does not start
// a message.
const misplacedIdentity = "a message's identity must come right under its \"### \" heading, and a message must start with a blank line, a \"---\" line and a blank line"

// isItemStart reports whether tokens i, i+1, i+2 are a separator, a level-3
// heading and an item identity: the start of an item. They must also be
// what the renderer writes, byte for byte, as findItem reads a message start
// by its bytes: a blank line, "---", a blank line, "### " and the heading,
// and the identity on the next line.
func (p *docParser) isItemStart(i int) bool {
	if i+2 >= len(p.toks) || p.toks[i].kind != tokBreak || p.toks[i+1].kind != tokH3 || !p.toks[i+2].isIdentity() {
		return false
	}
	sep, h, id := p.toks[i].start, p.toks[i+1], p.toks[i+2]
	return (sep < 2 || p.src[sep-2] == '\n') && bytes.HasPrefix(p.src[sep:], []byte(ItemOpen[1:])) &&
		h.start == sep+len(ItemOpen)-len("\n### ") && id.start == h.end && isIdentityLine(p.src[id.start:p.lineEnd(id.start)])
}

func (p *docParser) parse(d *session.Document) error {
	p.tokenize()
	// The title is the line after a blank line, as ReadHead reads it.
	if !bytes.HasPrefix(p.src, []byte("\n# ")) || len(p.toks) == 0 || p.toks[0].kind != tokH1 {
		return p.errorf(1, titleMissing)
	}
	// The summary is framed as a plain text is: a blank line after the
	// title, and its line end and a blank line before the first message
	// (or its line end at the end of the document).
	title := p.toks[0].end
	if p.src[title-1] != '\n' {
		return p.errorf(title-1, cutShort)
	}
	if title < len(p.src) && p.src[title] != '\n' {
		return p.errorf(title, "a blank line must follow the title")
	}
	summaryStart := title + 1
	var starts []int
	for i := 1; i < len(p.toks); i++ {
		if p.isItemStart(i) {
			starts = append(starts, i)
		}
	}
	// An identity in the summary is a message start gone wrong.
	for i := 1; i < len(p.toks) && (len(starts) == 0 || i < starts[0]); i++ {
		if p.toks[i].isIdentity() {
			return p.errorf(p.toks[i].start, misplacedIdentity)
		}
	}
	summaryEnd := len(p.src) - 1
	if len(starts) > 0 {
		summaryEnd = p.toks[starts[0]].start - 2 // isItemStart saw the blank line
	} else if summaryStart < len(p.src) && p.src[len(p.src)-1] != '\n' {
		return p.errorf(len(p.src)-1, cutShort)
	}
	if summaryStart > summaryEnd {
		d.Summary = ""
	} else {
		d.Summary = string(p.src[summaryStart:summaryEnd])
	}
	for k, s := range starts {
		stop := len(p.toks)
		if k+1 < len(starts) {
			stop = starts[k+1]
		}
		item, err := p.item(s, stop)
		if err != nil {
			return err
		}
		d.Items = append(d.Items, item)
	}
	return nil
}

// item parses tokens [first, stop) as one item.
func (p *docParser) item(first, stop int) (session.Item, error) {
	id := p.toks[first+2]
	var m itemMark
	if err := json.Unmarshal(id.data, &m); err != nil {
		return session.Item{}, p.errorf(id.start, "message identity: %v", err)
	}
	it := session.Item{Round: m.Round, Time: m.Time, Role: m.Role, Note: m.Note, IDs: m.IDs, Parent: m.Parent, ParentMissing: m.ParentMissing}
	end := len(p.src)
	if stop < len(p.toks) {
		end = p.toks[stop].start
	}
	c := &cursor{p: p, i: first + 3, stop: stop, at: id.end, end: end}
	for {
		blk, ok, err := c.block()
		if err != nil {
			return it, err
		}
		if !ok {
			break
		}
		it.Blocks = append(it.Blocks, blk)
	}
	return it, nil
}

// cursor walks the tokens of one item.
type cursor struct {
	p    *docParser
	i    int // next token
	stop int // first token past the item
	at   int // offset just past the last consumed structural token
	end  int // offset where the item ends
}

// peek returns the next structural token, skipping plain content, and
// reports whether plain content lies before it.
func (c *cursor) peek() (t *token, plain bool) {
	for j := c.i; j < c.stop; j++ {
		switch c.p.toks[j].kind {
		case tokHTML, tokFence:
			return &c.p.toks[j], plain
		default:
			plain = true
		}
	}
	return nil, plain
}

// plainText takes the plain text before the next structural token.
func (c *cursor) plainText() (string, error) {
	t, _ := c.peek()
	next := c.end
	trail := 2
	if t != nil {
		next = t.start
	} else if c.end == len(c.p.src) {
		trail = 1
	}
	from, to := c.at+1, next-trail
	switch {
	case c.p.src[c.at] != '\n':
		return "", c.p.errorf(c.at, "a text must be set off by blank lines: add one before this line")
	case t == nil && trail == 1 && c.p.src[len(c.p.src)-1] != '\n':
		return "", c.p.errorf(len(c.p.src)-1, cutShort)
	case from > to || string(c.p.src[to:next]) != strings.Repeat("\n", trail):
		if t != nil && t.isIdentity() {
			return "", c.p.errorf(t.start, misplacedIdentity)
		}
		return "", c.p.errorf(next, "a text must be set off by blank lines: add one before this line")
	}
	for c.i < c.stop && (t == nil || &c.p.toks[c.i] != t) {
		c.i++
	}
	c.at = to // the blank line that follows belongs to the next token
	return c.p.text(c.p.src[from:to]), nil
}

// plainAt returns where the plain content before the next structural token
// starts.
func (c *cursor) plainAt() int {
	for j := c.i; j < c.stop; j++ {
		if k := c.p.toks[j].kind; k != tokHTML && k != tokFence {
			return c.p.toks[j].start
		}
	}
	return c.at
}

// take consumes the next structural token.
func (c *cursor) take() *token {
	t, _ := c.peek()
	for &c.p.toks[c.i] != t {
		c.i++
	}
	c.i++
	c.at = t.end
	return t
}

// block reads the next block of the item; ok is false at the item's end.
func (c *cursor) block() (session.Block, bool, error) {
	t, plain := c.peek()
	if plain {
		s, err := c.plainText()
		return session.Block{Kind: session.KindText, Text: s}, err == nil, err
	}
	if t == nil {
		return session.Block{}, false, nil
	}
	switch {
	case t.kind == tokFence:
		s, err := c.fenced()
		return session.Block{Kind: session.KindText, Text: s}, err == nil, err
	case t.mark == "text":
		c.take()
		return c.block()
	case t.mark == "file":
		c.take()
		f, err := c.p.file(t)
		return session.Block{Kind: session.KindFile, File: f}, err == nil, err
	case t.mark == "compaction":
		return c.compaction()
	case t.mark == "thinking":
		// Thinking that was not recorded: the marker alone.
		c.take()
		m, err := c.mark(t)
		return session.Block{Kind: session.KindThinking, Label: m.Label}, err == nil, err
	case t.mark == "note":
		c.take()
		m, err := c.mark(t)
		if err != nil {
			return session.Block{}, false, err
		}
		text, err := c.p.noteText(t)
		return session.Block{Kind: session.KindNote, Label: m.Label, Entry: m.Entry, Time: m.Time, Text: text}, err == nil, err
	case t.mark == "details":
		return c.details()
	case t.isIdentity():
		return session.Block{}, false, c.p.errorf(t.start, misplacedIdentity)
	}
	return session.Block{}, false, c.p.errorf(t.start, "unexpected %s here", describe(t))
}

func describe(t *token) string {
	switch t.kind {
	case tokFence:
		return "fenced block"
	}
	if t.mark == "" {
		return "marker"
	}
	return "\"" + t.mark + "\" marker"
}

// fenced reads one of scribe's fenced blocks as a text value.
func (c *cursor) fenced() (string, error) {
	t := c.take()
	open := t.start
	openEnd := c.p.lineEnd(open)
	fenceLine := c.p.src[open:openEnd]
	n := 0
	for n < len(fenceLine) && fenceLine[n] == '`' {
		n++
	}
	f := fenceLine[:n]
	if n < 3 {
		return "", c.p.errorf(open, "a scribe fence must open with backticks at the start of its line")
	}
	// The closing fence is the first line that is exactly the fence, within
	// the fenced block as CommonMark reads it: before the next block.
	limit := len(c.p.src)
	if c.i < len(c.p.toks) {
		limit = c.p.toks[c.i].start
	}
	pos := openEnd
	for pos < limit {
		le := c.p.lineEnd(pos)
		line := bytes.TrimRight(c.p.src[pos:le], " \t\n")
		if bytes.Equal(line, f) {
			content := c.p.src[openEnd:pos]
			if len(content) == 0 || content[len(content)-1] != '\n' {
				return "", c.p.errorf(open, "malformed fenced block")
			}
			c.at = le
			content = content[:len(content)-1]
			switch {
			case strings.Contains(t.info, infoQuoted):
				var s string
				if err := json.Unmarshal(content, &s); err != nil {
					return "", c.p.errorf(open, "quoted text is not a JSON string: %v", err)
				}
				return s, nil
			case strings.Contains(t.info, infoInput):
				var buf bytes.Buffer
				if err := json.Compact(&buf, content); err != nil {
					return "", c.p.errorf(open, "tool input is not valid JSON: %v", err)
				}
				return buf.String(), nil
			}
			return c.p.text(content), nil
		}
		pos = le
	}
	if limit < len(c.p.src) {
		return "", c.p.errorf(open, "fenced block is not closed by a line of exactly its %d backticks", n)
	}
	return "", c.p.errorf(open, "fenced block is not closed")
}

// value reads one text value: plain text or a fenced block.
func (c *cursor) value() (string, error) {
	t, plain := c.peek()
	if plain {
		return c.plainText()
	}
	if t != nil && t.kind == tokFence {
		return c.fenced()
	}
	if t != nil && t.mark == "/details" {
		return "", nil
	}
	off := c.at
	if t != nil {
		off = t.start
	}
	return "", c.p.errorf(off, "expected a text")
}

func (c *cursor) mark(t *token) (blockMark, error) {
	var m blockMark
	if t.data != nil {
		if err := json.Unmarshal(t.data, &m); err != nil {
			return m, c.p.errorf(t.start, "marker: %v", err)
		}
	}
	return m, nil
}

// details reads a <details> block.
func (c *cursor) details() (session.Block, bool, error) {
	open := c.take()
	// The marker is the second line of the details block.
	second := c.p.lineEnd(open.start)
	kind, data, ok := ParseMarker(c.p.src[second:c.p.lineEnd(second)])
	if !ok {
		return session.Block{}, false, c.p.errorf(second, "a details block must carry a scribe marker on its second line")
	}
	if err := c.detailsOpened(open); err != nil {
		return session.Block{}, false, err
	}
	var m blockMark
	if data != nil {
		if err := json.Unmarshal(data, &m); err != nil {
			return session.Block{}, false, c.p.errorf(second, "marker: %v", err)
		}
	}
	var blk session.Block
	var err error
	switch kind {
	case "thinking":
		blk = session.Block{Kind: session.KindThinking, Label: m.Label}
		blk.Text, err = c.value()
	case "reminder":
		blk = session.Block{Kind: session.KindReminder, Label: m.Label, Entry: m.Entry, Time: m.Time}
		blk.Text, err = c.value()
	case "raw":
		blk = session.Block{Kind: session.KindRaw, Label: m.Label, Entry: m.Entry, Time: m.Time}
		blk.Text, err = c.value()
	case "tool":
		blk, err = c.tool(m)
	case "result":
		blk = session.Block{Kind: session.KindToolResult, ID: m.ID, Result: &session.Result{Entry: m.Entry, Time: m.Time, Error: m.Error}}
		blk.Result.Parts, err = c.parts()
	default:
		return blk, false, c.p.errorf(second, "unknown details block %q", kind)
	}
	if err != nil {
		return blk, false, err
	}
	return blk, true, c.closeDetails(open)
}

// detailsOpened checks that a details opening is its two lines, the
// <summary> line and the marker: a line right after the marker, with no
// blank line between, would be swallowed by the HTML block.
func (c *cursor) detailsOpened(open *token) error {
	if after := c.p.lineEnd(c.p.lineEnd(open.start)); open.end > after {
		return c.p.errorf(after, "a blank line must come before this line, after the marker of a details block")
	}
	return nil
}

func (c *cursor) closeDetails(open *token) error {
	t, plain := c.peek()
	if plain || t == nil || t.mark != "/details" {
		return c.p.errorf(open.start, "details block is not closed where expected")
	}
	c.take()
	line := c.p.src[t.start:c.p.lineEnd(t.start)]
	if len(bytes.TrimRight(line, " \t\n")) != len("</details>") {
		return c.p.errorf(t.start, "nothing may follow </details> on its line")
	}
	if after := c.p.lineEnd(t.start); t.end > after {
		return c.p.errorf(after, "a blank line must come before this line, after </details>")
	}
	return nil
}

func (c *cursor) tool(m blockMark) (session.Block, error) {
	blk := session.Block{Kind: session.KindToolUse, Label: m.Name, ID: m.ID}
	var err error
	if m.Input != nil {
		// A view: the template, then the parts that fill it.
		if blk.Input, err = c.view(m.Input, m.Escape == escapeASCII); err != nil {
			return blk, err
		}
	} else {
		t, plain := c.peek()
		if plain || t == nil || t.kind != tokFence {
			off := c.at
			if t != nil {
				off = t.start
			}
			return blk, c.p.errorf(off, "a tool call must start with its input")
		}
		if blk.Input, err = c.fenced(); err != nil {
			return blk, err
		}
	}
	for {
		t, plain := c.peek()
		if plain {
			return blk, c.p.errorf(c.plainAt(), "unexpected text in a tool call (is its </details> missing?)")
		}
		if t == nil {
			return blk, nil // the block is not closed: closeDetails says so
		}
		switch t.mark {
		case "sidechain":
			c.take()
			sm, err := c.mark(t)
			if err != nil {
				return blk, err
			}
			blk.Sidechain = sm.Path
		case "noresult":
			c.take()
		case "result":
			c.take()
			rm, err := c.mark(t)
			if err != nil {
				return blk, err
			}
			blk.Result = &session.Result{Entry: rm.Entry, Time: rm.Time, Error: rm.Error}
			if blk.Result.Parts, err = c.parts(); err != nil {
				return blk, err
			}
		case "/details":
			return blk, nil
		default:
			return blk, c.p.errorf(t.start, "unexpected %s in a tool call", describe(t))
		}
	}
}

// view reads the parts of a tool view and returns the input they and the
// template give.
func (c *cursor) view(template []byte, ascii bool) (string, error) {
	in, err := decodeTree(template)
	if err != nil {
		return "", c.p.errorf(c.at, "tool marker: input: %v", err)
	}
	set := func(off int, path, s string) error {
		if !in.set(path, s) {
			return c.p.errorf(off, "the tool's input has no value at %q", path)
		}
		return nil
	}
	for {
		t, plain := c.peek()
		if plain || t == nil {
			break // the caller says what is wrong
		}
		switch {
		case t.kind == tokFence && infoWord(t.info, infoField):
			args := infoArgs(t.info, infoField)
			if len(args) != 1 {
				return "", c.p.errorf(t.start, "a %s fence names one value", infoField)
			}
			start := t.start
			s, err := c.fenced()
			if err != nil {
				return "", err
			}
			if err := set(start, args[0], s); err != nil {
				return "", err
			}
		case t.kind == tokFence && infoWord(t.info, infoDiff):
			args := infoArgs(t.info, infoDiff)
			if len(args) != 2 {
				return "", c.p.errorf(t.start, "a %s fence names two values", infoDiff)
			}
			start := t.start
			s, err := c.fenced()
			if err != nil {
				return "", err
			}
			a, b, bad := parseDiff(s)
			if bad >= 0 {
				return "", c.p.errorf(start, "line %d of the diff does not start with \" \", \"-\" or \"+\"", bad+1)
			}
			if err := set(start, args[0], a); err != nil {
				return "", err
			}
			if err := set(start, args[1], b); err != nil {
				return "", err
			}
		case t.mark == markField:
			c.take()
			fm, err := c.mark(t)
			if err != nil {
				return "", err
			}
			s, err := c.value()
			if err != nil {
				return "", err
			}
			if err := set(t.start, fm.Path, s); err != nil {
				return "", err
			}
		case t.mark == markChecks || t.mark == markList:
			c.take()
			lm, err := c.mark(t)
			if err != nil {
				return "", err
			}
			p := viewPart{kind: partChecklist, path: lm.Path, label: lm.Label, text: lm.Text, status: lm.Status, detail: lm.Detail}
			if t.mark == markList {
				p.kind = partList
			}
			if p.text == "" {
				return "", c.p.errorf(t.start, "a list marker names the key of its items' text")
			}
			items, ok := p.items(in)
			if !ok {
				return "", c.p.errorf(t.start, "the tool's input has no list at %q", p.path)
			}
			if _, plain := c.peek(); !plain {
				return "", c.p.errorf(t.end, "expected the list")
			}
			at := c.at
			s, err := c.plainText()
			if err != nil {
				return "", err
			}
			list, err := p.parseList(s, len(items))
			if err != nil {
				var el errList
				if errors.As(err, &el) {
					return "", c.p.errorf(at+1+lineOffset(s, el.line), "this line is not an item of the list (%d items are expected)", len(items))
				}
				return "", err
			}
			for i, it := range list {
				if err := set(at+1, items[i]+p.text, it.text); err != nil {
					return "", err
				}
				if k := p.second(); k != "" {
					if err := set(at+1, items[i]+k, it.second); err != nil {
						return "", err
					}
				}
			}
		default:
			return string(in.bytes(ascii)), nil
		}
	}
	return string(in.bytes(ascii)), nil
}

// infoWord reports whether a fence's info string holds the word w.
func infoWord(info, w string) bool {
	for _, f := range strings.Fields(info) {
		if f == w {
			return true
		}
	}
	return false
}

// infoArgs returns the words of an info string after the word w.
func infoArgs(info, w string) []string {
	f := strings.Fields(info)
	for i := range f {
		if f[i] == w {
			return f[i+1:]
		}
	}
	return nil
}

// lineOffset returns the offset of line n (0-based) of s.
func lineOffset(s string, n int) int {
	off := 0
	for ; n > 0; n-- {
		i := strings.IndexByte(s[off:], '\n')
		if i < 0 {
			return off
		}
		off += i + 1
	}
	return off
}

// parts reads the parts of a tool result, up to the end of its details.
func (c *cursor) parts() ([]session.Part, error) {
	var parts []session.Part
	for {
		t, plain := c.peek()
		if plain {
			return nil, c.p.errorf(c.plainAt(), "unexpected text in a tool result (is its </details> missing?)")
		}
		if t == nil || t.mark == "/details" {
			return parts, nil
		}
		switch {
		case t.kind == tokFence:
			s, err := c.fenced()
			if err != nil {
				return nil, err
			}
			parts = append(parts, session.Part{Kind: session.KindText, Text: s})
		case t.mark == "file":
			c.take()
			f, err := c.p.file(t)
			if err != nil {
				return nil, err
			}
			parts = append(parts, session.Part{Kind: session.KindFile, File: f})
		case t.mark == "part":
			c.take()
			s, err := c.value()
			if err != nil {
				return nil, err
			}
			parts = append(parts, session.Part{Kind: session.KindRaw, Text: s})
		default:
			return nil, c.p.errorf(t.start, "unexpected %s in a tool result", describe(t))
		}
	}
}

// noteText reads the text of a note: the HTML after its marker, on the
// marker's line, "<p><i>…</i></p>".
func (p *docParser) noteText(t *token) (string, error) {
	line := p.src[t.start:p.lineEnd(t.start)]
	_, rest, _ := bytes.Cut(line, []byte(" -->"))
	rest = bytes.TrimRight(rest, " \t\n")
	inner, ok := bytes.CutPrefix(rest, []byte("<p><i>"))
	if ok {
		inner, ok = bytes.CutSuffix(inner, []byte("</i></p>"))
	}
	if !ok {
		return "", p.errorf(t.start, "a note's text must follow its marker on the same line, as <p><i>text</i></p>")
	}
	if t.end > p.lineEnd(t.start) {
		return "", p.errorf(p.lineEnd(t.start), "a blank line must come before this line, after a note")
	}
	return unescapeValue(string(inner)), nil
}

func (p *docParser) file(t *token) (*session.File, error) {
	var m blockMark
	if err := json.Unmarshal(t.data, &m); err != nil {
		return nil, p.errorf(t.start, "file marker: %v", err)
	}
	return &session.File{Type: m.Type, MediaType: m.MediaType, Path: m.Path}, nil
}

func (c *cursor) compaction() (session.Block, bool, error) {
	t := c.take()
	m, err := c.mark(t)
	if err != nil {
		return session.Block{}, false, err
	}
	comp := m.Comp
	if comp == nil {
		comp = &session.Compaction{}
	}
	blk := session.Block{Kind: session.KindCompaction, Compaction: comp}
	// A summary may follow, in a details block of its own.
	if next, plain := c.peek(); !plain && next != nil && next.mark == "details" {
		second := c.p.lineEnd(next.start)
		if kind, data, ok := ParseMarker(c.p.src[second:c.p.lineEnd(second)]); ok && kind == "summary" {
			open := c.take()
			if err := c.detailsOpened(open); err != nil {
				return blk, false, err
			}
			var sm blockMark
			if err := json.Unmarshal(data, &sm); err != nil {
				return blk, false, c.p.errorf(second, "marker: %v", err)
			}
			blk.Entry, blk.Time = sm.Entry, sm.Time
			if blk.Text, err = c.value(); err != nil {
				return blk, false, err
			}
			if err := c.closeDetails(open); err != nil {
				return blk, false, err
			}
		}
	}
	return blk, true, nil
}
