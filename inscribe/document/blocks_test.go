package document

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"

	"github.com/scribe-archive/scribe/internal/testkit/testenv"
)

// stockParser is goldmark's own block parsing, what goldmarkParser must
// agree with.
var stockParser = parser.NewParser(parser.WithBlockParsers(parser.DefaultBlockParsers()...),
	parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...))

// blockTree describes the blocks goldmark reads in src, every level: a
// line a block, its kind, where it starts and what the document's parser
// reads of it (a fence's info, a heading's level, an HTML block's end), and
// the link reference definitions.
func blockTree(p parser.Parser, src []byte) string {
	pc := parser.NewContext()
	doc := p.Parse(text.NewReader(src), parser.WithContext(pc))
	var b strings.Builder
	var walk func(n ast.Node, depth int)
	walk = func(n ast.Node, depth int) {
		if n.Type() != ast.TypeBlock && n != doc {
			return
		}
		fmt.Fprintf(&b, "%s%s at %d", strings.Repeat("  ", depth), n.Kind(), n.Pos())
		switch n := n.(type) {
		case *ast.FencedCodeBlock:
			if n.Info != nil {
				fmt.Fprintf(&b, " info %q", n.Info.Value(src))
			}
		case *ast.Heading:
			fmt.Fprintf(&b, " level %d", n.Level)
		case *ast.HTMLBlock:
			if n.Parent() == doc {
				p := &docParser{src: src}
				fmt.Fprintf(&b, " to %d", p.htmlEnd(n, lineStart(src, n.Pos())))
			}
		case *ast.List:
			fmt.Fprintf(&b, " tight %v start %d", n.IsTight, n.Start)
		}
		if n.HasBlankPreviousLines() {
			b.WriteString(" after a blank line")
		}
		b.WriteByte('\n')
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			walk(c, depth+1)
		}
	}
	walk(doc, 0)
	for _, r := range pc.References() {
		fmt.Fprintf(&b, "reference %q -> %q\n", r.Label(), r.Destination())
	}
	return b.String()
}

// checkBlocks fails when goldmarkParser reads src's blocks otherwise than
// goldmark's own parser does (its lineless blocks, which take runs of
// lines themselves, must read the same).
func checkBlocks(t *testing.T, src []byte) {
	t.Helper()
	if got, want := blockTree(goldmarkParser(), src), blockTree(stockParser, src); got != want {
		t.Fatalf("the document's parser reads other blocks than goldmark's in %q:\n%s\nwant:\n%s", src, got, want)
	}
}

// blockRuns are texts of runs of lines: what a lean block takes itself,
// and every line that must end its run.
var blockRuns = []string{
	"a\nb\nc\n",
	"a\nb\n- c\nd\n",
	"a\nb\n===\n",
	"a\nb\n---\nc\n",
	"a\n  b\n\tc\n    d\n\n",
	"a\nb\n> c\nd\n",
	"a\nb\n# c\nd",
	"a\nb\n1. c\n2) d\ne\n",
	"a\nb\n<div>\nc\n",
	"a\nb\n<!-- c -->\nd\n",
	"a\nb\n```\nc\n```\nd\n",
	"a\nb\n~~~\nc",
	"a\nb\n*** \nc\n_ _ _\n",
	"a\nb\n+ c\n",
	"a\n \nb\n\t\nc\n",
	"a\r\nb\r\n\r\nc\f\n\v\n",
	"[x]: /u\nb\nc\n\n[x]\n",
	"[x]:\n/u\n'title'\nb\n",
	"a\n[x]: /u\nb\n",
	"```\na\nb\n\n ```\nc\n```\n",
	"```\na\n``\n````\nb\n",
	"````\na\n```\nb\n`````\nc\n",
	"```go scribe:verbatim\na\n    ```\n```\n",
	"~~~\na\n```\nb\n~~~\n",
	"   ```\n   a\n  b\n c\nd\n   ```\n",
	"```\n\ta\n  \tb\n```",
	"```\na\nb",
	"    a\n    b\n\n    c\n\td\n  e\n",
	"    a\n\t\tb\n   c\n",
	"- a\n  b\n  ```\n  c\n  d\n  ```\ne\n",
	"> a\nb\n> ```\n> c\nd\n",
	"- a\nb\nc\n\n  d\n",
	"1. ```\n   a\n   b\n   ```\n",
	"<div>\na\nb\n\nc\n",
	"a\n    b\n    ```\n",
	"a\nb\n  ===\n",
	"a\nb\n    ===\n",
	"a\n\\- b\n",
	"000001\tlog\n000002. item\n3) item\n1234567890. item\n12 x\n1\n",
	"a\n1. b\n",
	"a\n1.\n2)\nb\n",
	"a\n2. b\n0) c\n",
	"# a\nb\nc\n---\n\n---\nd\ne\n",
}

func TestLeanBlocks(t *testing.T) {
	for _, s := range append(append([]string{}, blockRuns...), hostileTexts...) {
		checkBlocks(t, []byte(s))
		checkBlocks(t, []byte(s+"\n\n"+s))
		checkBlocks(t, []byte("- "+strings.ReplaceAll(s, "\n", "\n  ")))
	}
	// The repository's documents, whole.
	docs, _ := filepath.Glob(filepath.Join(testenv.RepoRoot(t), "data", "sessions", "*", "*.md"))
	for _, p := range docs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		checkBlocks(t, b)
	}
	// A long run of every kind, and what ends it.
	for _, line := range []string{"words and more words\n", "\t{\"k\": [1, 2]},\n", "    indented\n", "é → \"quoted\"\n", "000042\tit import \"nil\" é→ which\n"} {
		long := strings.Repeat(line, 5000)
		for _, end := range []string{"", "\n", "===\n", "- item\n", "1. item\n", "2) item\n", "```\n", "<p>\n", "\n\n"} {
			checkBlocks(t, []byte(long+end+long))
			checkBlocks(t, []byte("```json scribe:verbatim\n"+long+end+long+"```\n\nafter\n"))
			checkBlocks(t, []byte("    "+long+end+long))
		}
	}
}

// TestLeanBlocksRecordLittle: goldmark keeps 24 bytes of each line it
// hands a block until a blank line at the top level; the lean blocks take
// their runs themselves, so a long run allocates about nothing a line.
func TestLeanBlocksRecordLittle(t *testing.T) {
	for _, c := range []struct{ name, src string }{
		{"paragraph", strings.Repeat("lines of words, with \"quotes\" and é→\n", 100000)},
		{"numbered paragraph", strings.Repeat("000042\tit import \"nil\" é→ which\n", 100000)},
		{"fence", "```json scribe:verbatim\n" + strings.Repeat("  {\"key\": \"value\"},\n", 100000) + "```\n"},
		{"indented code", strings.Repeat("    code\n", 100000)},
	} {
		src := []byte(c.src)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		goldmarkParser().Parse(text.NewReader(src))
		runtime.ReadMemStats(&after)
		if per := float64(after.TotalAlloc-before.TotalAlloc) / 100000; per > 1 {
			t.Errorf("%s: %.1f bytes allocated a line, want about none", c.name, per)
		}
	}
}

// FuzzLeanBlocks: whatever the text, the document's parser reads the blocks
// goldmark reads.
func FuzzLeanBlocks(f *testing.F) {
	for _, s := range blockRuns {
		f.Add(s)
	}
	for _, s := range hostileTexts {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkBlocks(t, []byte(s))
		if !bytes.Contains([]byte(s), []byte("\n")) {
			checkBlocks(t, []byte(strings.Repeat(s+"\n", 3)))
		}
	})
}
