package document

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// How a text value is written. See docs/FORMAT.md, "Text forms".
type textForm int

const (
	formPlain    textForm = iota // as markdown, verbatim
	formVerbatim                 // in a fenced block marked scribe:verbatim
	formQuoted                   // as a JSON string in a fenced block marked scribe:quoted
)

const (
	infoVerbatim = "scribe:verbatim"
	infoQuoted   = "scribe:quoted"
	infoInput    = "scribe:input"
)

// goldmarkParser is the CommonMark parser scribe reads documents with and
// checks plain texts against. It is safe for concurrent use. Only the
// blocks and the link reference definitions count, not what is inline:
// it is goldmark's without its inline parsers, and a paragraph keeps only
// its first line (where it starts), so that a text of 100 MB in lines is
// not made a node a line (three times its size; issue 33).
//
// Nor are the lines of a fenced block, an indented code block or a
// paragraph that cannot hold a link reference definition kept as they are
// read (lineless): goldmark appends each to a slice, of 32 bytes a line and
// its growth, 100 MB and more for a message of millions of short lines.
// And such a block, open alone at the top level, takes the lines that
// cannot end it or start another block itself (runs), where goldmark's loop
// keeps a record of 24 bytes of each line it hands a block until a blank
// line at the top level (its parseBlocks' blankLines: 33 MB for a prompt of
// 1.2 million lines of words, 81 MB for a fence of 3.4 million lines of
// JSON; issue 33).
//
// It is made when first used: every command of scribe links this package,
// and a search reads no document.
var goldmarkParser = sync.OnceValue(func() parser.Parser {
	return parser.NewParser(
		parser.WithBlockParsers(leanBlockParsers()...),
		// goldmark runs the lower priorities first: the link reference
		// definitions (100) are read before the cut, which a priority of 1
		// made first (a definition whose title or destination is on its
		// next line was not one, nor were the lines after a definition a
		// paragraph).
		parser.WithParagraphTransformers(append(parser.DefaultParagraphTransformers(), util.Prioritized(firstLineOnly{}, 1000))...),
	)
})

// leanBlockParsers are goldmark's block parsers, its paragraphs', fenced
// blocks' and indented code blocks' lineless.
func leanBlockParsers() []util.PrioritizedValue {
	paragraph := reflect.TypeOf(parser.NewParagraphParser())
	fence := reflect.TypeOf(parser.NewFencedCodeBlockParser())
	code := reflect.TypeOf(parser.NewCodeBlockParser())
	ps := parser.DefaultBlockParsers()
	interrupts := interrupters(ps)
	for i, p := range ps {
		bp := p.Value.(parser.BlockParser)
		switch reflect.TypeOf(p.Value) {
		case paragraph:
			ps[i].Value = lineless{bp, true, func(line []byte) bool { return !interrupts(line) }}
		case fence:
			ps[i].Value = lineless{bp, false, fenceContent}
		case code:
			ps[i].Value = lineless{bp, false, indentedCode}
		}
	}
	return ps
}

// lineless is a block parser whose blocks keep their first line alone (a
// paragraph, only when that line cannot start a link reference
// definition, which the paragraph's transformer reads from all its
// lines): where the block starts, all the document's parser reads of
// them. A block open alone at the top level takes, at each line goldmark
// hands it, the lines after it that runs accepts as well.
type lineless struct {
	parser.BlockParser
	paragraph bool
	// runs reports whether a line that follows one the block took goes to
	// the block's Continue, and to nothing else, in goldmark's loop (it
	// ends neither the block nor may start another), a line of the source
	// with its line end (the last line may have none). It may say no to
	// any line: goldmark's loop then reads it.
	runs func(line []byte) bool
}

func (p lineless) Continue(node ast.Node, reader text.Reader, pc parser.Context) parser.State {
	for {
		st := p.BlockParser.Continue(node, reader, pc)
		if l := node.Lines(); l.Len() > 1 && !(p.paragraph && mayDefine(l.Sliced(0, 1)[0].Value(reader.Source()))) {
			l.SetSliced(0, 1)
		}
		if st&parser.Continue == 0 {
			return st
		}
		// Where goldmark's loop would hand the next line to this block's
		// Continue alone (it is the only block open, and the line cannot
		// end it or start another), the block takes it now: the same
		// calls, without the loop's record of the line.
		if open := pc.OpenedBlocks(); len(open) != 1 || open[0].Node != node {
			return st
		}
		next := nextLine(reader)
		if next == nil || !p.runs(next) {
			return st
		}
		reader.AdvanceLine()
	}
}

// nextLine returns the line after the reader's, or nil at the end of the
// source.
func nextLine(reader text.Reader) []byte {
	_, seg := reader.Position()
	src := reader.Source()
	if seg.Stop <= 0 || seg.Stop >= len(src) || src[seg.Stop-1] != '\n' {
		return nil
	}
	rest := src[seg.Stop:]
	if i := bytes.IndexByte(rest, '\n'); i >= 0 {
		return rest[:i+1]
	}
	return rest
}

// interrupters returns what tells whether a line may be anything but a
// paragraph's continuation once a paragraph is open: it is blank, or its
// first character after indentation triggers a block parser that can
// interrupt a paragraph (goldmark tries those, by that character, before
// the paragraph's Continue; a setext heading's underline is one of them).
// A digit triggers only the lists' parsers, which read an item's number
// as digits and a '.' or a ')': a line of digits and anything else is a
// paragraph's (a numbered line of a log, say).
func interrupters(ps []util.PrioritizedValue) func(line []byte) bool {
	list := reflect.TypeOf(parser.NewListParser())
	item := reflect.TypeOf(parser.NewListItemParser())
	var by [256]bool
	free := false   // a parser without triggers is tried on every line
	numbers := true // the digits trigger only the lists' parsers
	for _, p := range ps {
		bp := p.Value.(parser.BlockParser)
		if !bp.CanInterruptParagraph() {
			continue
		}
		if len(bp.Trigger()) == 0 {
			free = true
		}
		for _, c := range bp.Trigger() {
			by[c] = true
			if t := reflect.TypeOf(bp); c >= '0' && c <= '9' && t != list && t != item {
				numbers = false
			}
		}
	}
	return func(line []byte) bool {
		if free || util.IsBlank(line) {
			return true
		}
		_, pos := util.IndentWidth(line, 0)
		if c := line[pos]; numbers && c >= '0' && c <= '9' {
			for pos < len(line) && line[pos] >= '0' && line[pos] <= '9' {
				pos++
			}
			return pos < len(line) && (line[pos] == '.' || line[pos] == ')')
		}
		return by[line[pos]]
	}
}

// fenceContent reports whether a line is content of an open fenced block
// for certain: it does not start, after indentation, with a backtick or a
// tilde, so it cannot close the block.
func fenceContent(line []byte) bool {
	_, pos := util.IndentWidth(line, 0)
	return pos == len(line) || line[pos] != '`' && line[pos] != '~'
}

// indentedCode reports whether a line is content of an open indented code
// block for certain: it is indented by four columns or more and not blank.
func indentedCode(line []byte) bool {
	if util.IsBlank(line) {
		return false
	}
	w, _ := util.IndentWidth(line, 0)
	return w >= 4
}

// mayDefine reports whether a paragraph's first line may start a link
// reference definition: its first character, after indentation, is '['.
func mayDefine(line []byte) bool {
	line = bytes.TrimLeft(line, " \t")
	return len(line) == 0 || line[0] == '['
}

// firstLineOnly cuts a paragraph to its first line, once its link
// reference definitions are read.
type firstLineOnly struct{}

func (firstLineOnly) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	if l := node.Lines(); l.Len() > 1 {
		first := text.NewSegments()
		first.Append(l.At(0))
		node.SetLines(first)
	}
}

// pickForm chooses the form of a text. Plain markdown is preferred when the
// text can stand in the document as itself without changing the document's
// structure; otherwise the text goes in a fence, verbatim when a fence can
// hold it exactly and unambiguously, or quoted when it holds characters an
// editor or a renderer would not keep (CR, control characters, a BOM).
func pickForm(s string, plainAllowed bool) textForm {
	if !fenceSafe(s) {
		return formQuoted
	}
	if plainAllowed && plainSafe(s) {
		return formPlain
	}
	return formVerbatim
}

// fenceSafe reports whether a fenced block can carry s byte for byte.
func fenceSafe(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t':
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\uFEFF':
			return false
		}
	}
	return true
}

// plainSafe reports whether s may be written as markdown: it must not start
// or end the document structure scribe relies on. It may not hold an HTML
// block (scribe's markers are HTML blocks), a link reference definition
// (which would change how other messages render), or a fenced block marked
// as scribe's own; every block it opens must close within it; and it must
// not be blank, since editors do not keep blank lines.
func plainSafe(s string) bool {
	if strings.TrimSpace(s) == "" {
		return false
	}
	switch lineStarts(s) {
	case startsPlain:
		// No line can open an HTML block, a fence or a link reference
		// definition: the common case needs no parse.
		return true
	case startsHTML:
		// Almost surely an HTML block (a system reminder, say): not plain.
		return false
	}
	const probe = "<!-- scribe probe -->"
	src := []byte(s + "\n\n" + probe + "\n")
	pc := parser.NewContext()
	doc := goldmarkParser().Parse(text.NewReader(src), parser.WithContext(pc))
	if len(pc.References()) > 0 {
		return false
	}
	last := doc.LastChild()
	if last == nil || last.Kind() != ast.KindHTMLBlock || lineStart(src, last.Pos()) != len(src)-len(probe)-1 {
		return false // something left open swallowed the probe
	}
	for n := doc.FirstChild(); n != last; n = n.NextSibling() {
		switch n := n.(type) {
		case *ast.HTMLBlock:
			return false
		case *ast.FencedCodeBlock:
			if n.Info != nil && bytes.Contains(n.Info.Value(src), []byte("scribe:")) {
				return false
			}
		}
	}
	return true
}

const (
	startsPlain = iota // no line starts a construct that needs a closer look
	startsHTML         // some line starts with a tag or a comment
	startsOther        // some line starts a fence or a link reference definition
)

// lineStarts looks at what each line of s starts with, after indentation
// and any block quote or list markers: only those positions can open an
// HTML block, a fence or a link reference definition (which, even inside a
// quote or a list, defines a link for the whole document).
func lineStarts(s string) int {
	verdict := startsPlain
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		top := j-i <= 3
		j = skipContainers(s, j)
		if j > i && j < len(s) && s[j-1] != ' ' && s[j-1] != '\t' {
			top = false // after a container marker
		}
		if j < len(s) {
			switch s[j] {
			case '<':
				if top && j+1 < len(s) && (isLetter(s[j+1]) || s[j+1] == '/' || s[j+1] == '!' || s[j+1] == '?') {
					return startsHTML
				}
				verdict = startsOther
			case '`', '~', '[':
				verdict = startsOther
			}
		}
		nl := strings.IndexByte(s[i:], '\n')
		if nl < 0 {
			break
		}
		i += nl + 1
	}
	return verdict
}

// skipContainers skips block quote and list item markers (and the white
// space after them) from position j of a line.
func skipContainers(s string, j int) int {
	for j < len(s) {
		k := j
		switch {
		case s[k] == '>':
			k++
		case s[k] == '-' || s[k] == '*' || s[k] == '+':
			k++
			if k < len(s) && s[k] != ' ' && s[k] != '\t' {
				return j
			}
		case s[k] >= '0' && s[k] <= '9':
			for k < len(s) && k-j < 9 && s[k] >= '0' && s[k] <= '9' {
				k++
			}
			if k >= len(s) || (s[k] != '.' && s[k] != ')') {
				return j
			}
			k++
			if k < len(s) && s[k] != ' ' && s[k] != '\t' {
				return j
			}
		default:
			return j
		}
		for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
			k++
		}
		j = k
	}
	return j
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// lineStart returns the offset of the start of the line holding offset pos.
func lineStart(src []byte, pos int) int {
	if pos < 0 {
		return -1
	}
	return bytes.LastIndexByte(src[:pos], '\n') + 1
}

// fence returns a backtick fence longer than any backtick run in s.
func fence(s string) string {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

// writeText writes a text value in the form pickForm chooses, ending in a
// newline. lang is the language a fence announces (text, json, ...).
func writeText(w Writer, s, lang string, plainAllowed bool) textForm {
	form := pickForm(s, plainAllowed)
	switch form {
	case formPlain:
		w.WriteString(s)
		w.WriteByte('\n')
	case formVerbatim:
		writeFence(w, s, lang+" "+infoVerbatim)
	case formQuoted:
		writeFence(w, Quote(s), "json "+infoQuoted)
	}
	return form
}

func writeFence(w Writer, content, info string) {
	f := fence(content)
	w.WriteString(f)
	w.WriteString(info)
	w.WriteByte('\n')
	w.WriteString(content)
	w.WriteByte('\n')
	w.WriteString(f)
	w.WriteByte('\n')
}

// Quote returns s as a quoted text holds it: a JSON string literal, without
// HTML escaping, and with every character an editor might drop or a reader
// not see escaped (DEL, C1 controls, the BOM, line and paragraph
// separators): a quoted text is ASCII-safe where it matters. Round files
// store a line that is not JSON the same way.
func Quote(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	q := strings.TrimSuffix(buf.String(), "\n")
	if !strings.ContainsFunc(q, invisible) {
		return q
	}
	var sb strings.Builder
	for _, r := range q {
		if invisible(r) {
			fmt.Fprintf(&sb, `\u%04x`, r)
		} else {
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

func invisible(r rune) bool {
	return r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0xfeff || r == 0x2028 || r == 0x2029
}

// EscapeInline escapes s for use inside a line of markdown (a heading, the
// summary placeholder), never at its start: the characters that can open an
// inline construct (emphasis, code, links, images, HTML, entities, a heading's
// closing sequence) are backslash escaped, and line breaks and control
// characters become spaces, so the text shows as itself.
func EscapeInline(s string) string {
	var sb strings.Builder
	for _, r := range s {
		switch {
		case r < 0x20 || r == 0x7f || r == '\u2028' || r == '\u2029':
			sb.WriteByte(' ')
		case r < 0x80 && strings.ContainsRune(inlineEscapes, r):
			sb.WriteByte('\\')
			sb.WriteRune(r)
		default:
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

// InlinePattern returns a regular expression that matches s as it is and
// as EscapeInline writes it (each character it escapes may follow a
// backslash): what finds a text in a document's markdown too.
func InlinePattern(s string) string {
	var sb strings.Builder
	for _, r := range s {
		if r < 0x80 && strings.ContainsRune(inlineEscapes, r) {
			sb.WriteString(`\\?`)
		}
		sb.WriteString(regexp.QuoteMeta(string(r)))
	}
	return sb.String()
}

// inlineEscapes are the characters EscapeInline escapes with a backslash.
const inlineEscapes = "\\`*_[]<>&#!~|"

// unescapeInline undoes EscapeInline (but for the characters it turned
// into spaces).
func unescapeInline(s string) string {
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(inlineEscapes, s[i+1]) >= 0 {
			i++
		}
		sb.WriteByte(s[i])
	}
	return sb.String()
}

// escapeHTML escapes s for HTML text or a quoted attribute value.
func escapeHTML(s string) string {
	var sb strings.Builder
	for _, r := range s {
		switch r {
		case '&':
			sb.WriteString("&amp;")
		case '<':
			sb.WriteString("&lt;")
		case '>':
			sb.WriteString("&gt;")
		case '"':
			sb.WriteString("&quot;")
		case '\n', '\r', '\t':
			sb.WriteByte(' ')
		default:
			if r < 0x20 || r == 0x7f {
				sb.WriteByte(' ')
				continue
			}
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

// escapeValue escapes a one-line text for HTML that scribe reads back (a
// note): "&", "<", ">" and '"' as entities, and every character an editor
// might drop or a reader not see (a line end, a tab, other controls, DEL,
// C1 controls, U+2028, U+2029, U+FEFF) as a numeric character reference,
// so the text stays on its line and comes back exactly ([unescapeValue]).
func escapeValue(s string) string {
	var sb strings.Builder
	for _, r := range s {
		switch {
		case r == '&':
			sb.WriteString("&amp;")
		case r == '<':
			sb.WriteString("&lt;")
		case r == '>':
			sb.WriteString("&gt;")
		case r == '"':
			sb.WriteString("&quot;")
		case r < 0x20 || invisible(r):
			fmt.Fprintf(&sb, "&#x%x;", r)
		default:
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

// unescapeValue undoes escapeValue. It reads the four entities escapeValue
// writes and numeric character references; any other "&" is itself.
func unescapeValue(s string) string {
	if !strings.Contains(s, "&") {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '&' {
			sb.WriteByte(s[i])
			continue
		}
		end := strings.IndexByte(s[i:], ';')
		if end < 0 {
			sb.WriteByte('&')
			continue
		}
		ent := s[i+1 : i+end]
		r, ok := entity(ent)
		if !ok {
			sb.WriteByte('&')
			continue
		}
		sb.WriteRune(r)
		i += end
	}
	return sb.String()
}

func entity(e string) (rune, bool) {
	switch e {
	case "amp":
		return '&', true
	case "lt":
		return '<', true
	case "gt":
		return '>', true
	case "quot":
		return '"', true
	}
	num, ok := strings.CutPrefix(e, "#")
	if !ok || num == "" || len(num) > 8 {
		return 0, false
	}
	base := 10
	if h, ok := strings.CutPrefix(num, "x"); ok {
		num, base = h, 16
	} else if h, ok := strings.CutPrefix(num, "X"); ok {
		num, base = h, 16
	}
	n, err := strconv.ParseUint(num, base, 32)
	if err != nil || n > utf8.MaxRune || (n >= 0xd800 && n < 0xe000) {
		return 0, false
	}
	return rune(n), true
}
