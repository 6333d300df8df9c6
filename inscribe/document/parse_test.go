package document

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/internal/testkit/testenv"
	"github.com/scribe-archive/scribe/session"
)

// wellFormed is a small document as scribe writes it: the base of the
// hand-broken documents below.
func wellFormed(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "well-formed.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// An edit breaks a document the way a person, an editor or a tool might.
type edit func(doc string) (string, bool)

// replace replaces the one occurrence of old.
func replace(old, new string) edit {
	return func(doc string) (string, bool) {
		if strings.Count(doc, old) != 1 {
			return "", false
		}
		return strings.Replace(doc, old, new, 1), true
	}
}

// truncate cuts the document just before the one occurrence of at.
func truncate(at string) edit {
	return func(doc string) (string, bool) {
		if strings.Count(doc, at) != 1 {
			return "", false
		}
		return doc[:strings.Index(doc, at)], true
	}
}

func crlf(doc string) (string, bool) { return strings.ReplaceAll(doc, "\n", "\r\n"), true }

// brokenDocs are hand-broken documents: a person editing a document is the
// common case. want is the error Parse gives, exactly (file:line: message).
var brokenDocs = []struct {
	name string
	edit edit
	want string
}{
	{"closing-details-deleted", replace("```\n\n</details>\n\nhi there", "```\n\nhi there"),
		"doc.md:61: unexpected text in a tool result (is its </details> missing?)"},
	{"thinking-details-not-closed", replace("Let me look.\n\n</details>\n", "Let me look.\n"),
		"doc.md:39: details block is not closed where expected"},
	{"text-after-closing-details", replace("</details>\n\nhi there", "</details> hi there"),
		"doc.md:61: nothing may follow </details> on its line"},
	{"text-right-after-closing-details", replace("</details>\n\nhi there", "</details>\nhi there"),
		"doc.md:62: a blank line must come before this line, after </details>"},
	{"text-right-after-details-marker", replace("<!-- scribe:thinking -->\n\n", "<!-- scribe:thinking -->\n"),
		"doc.md:41: a blank line must come before this line, after the marker of a details block"},
	{"fence-left-open", replace("a.txt\n```\n", "a.txt\n"),
		"doc.md:57: fenced block is not closed"},
	{"input-fence-left-open", replace("}\n```\n\n<!-- scribe:result", "}\n\n<!-- scribe:result"),
		"doc.md:49: tool input is not valid JSON: invalid character '<' after top-level value"},
	{"fence-closed-by-a-longer-run", replace("a.txt\n```\n", "a.txt\n````\n"),
		"doc.md:57: fenced block is not closed by a line of exactly its 3 backticks"},
	{"fence-indented", replace("```text scribe:verbatim\na.txt\n```\n", "  ```text scribe:verbatim\n  a.txt\n  ```\n"),
		"doc.md:57: a scribe fence must open with backticks at the start of its line"},
	{"heading-duplicated", replace("### 2026-01-01T00:00:01.000Z · assistant\n", "### 2026-01-01T00:00:01.000Z · assistant\n### 2026-01-01T00:00:01.000Z · assistant\n"),
		"doc.md:38: a message's identity must come right under its \"### \" heading, and a message must start with a blank line, a \"---\" line and a blank line"},
	{"identity-duplicated", replace(identityA1, identityA1+identityA1),
		"doc.md:38: a message's identity must come right under its \"### \" heading, and a message must start with a blank line, a \"---\" line and a blank line"},
	{"identity-set-off-from-its-heading", replace("· assistant\n<!--", "· assistant\n\n<!--"),
		"doc.md:38: a message's identity must come right under its \"### \" heading, and a message must start with a blank line, a \"---\" line and a blank line"},
	{"separator-of-asterisks", replace("hello\n\n---\n\n### 2026-01-01T00:00:01", "hello\n\n***\n\n### 2026-01-01T00:00:01"),
		"doc.md:37: a message's identity must come right under its \"### \" heading, and a message must start with a blank line, a \"---\" line and a blank line"},
	{"identity-broken-json", replace(`"role":"assistant"} -->`, `"role":"assistant" -->`),
		"doc.md:37: message identity: unexpected end of JSON input"},
	{"marker-broken-json", replace(`<!-- scribe:tool {"id":"t1","name":"Bash"} -->`, `<!-- scribe:tool {"id":"t1","name":"Bash} -->`),
		"doc.md:47: marker: unexpected end of JSON input"},
	{"details-marker-deleted", replace("<!-- scribe:thinking -->\n", ""),
		"doc.md:40: a details block must carry a scribe marker on its second line"},
	{"details-marker-unknown", replace("<!-- scribe:thinking -->", "<!-- scribe:pondering -->"),
		"doc.md:40: unknown details block \"pondering\""},
	{"input-not-json", replace(`  "command": "ls"`, `  "command": ls`),
		"doc.md:49: tool input is not valid JSON: invalid character 'l' looking for beginning of value"},
	{"text-not-set-off", replace("hello\n\n---\n\n### 2026-01-01T00:00:01", "hello\n---\n\n### 2026-01-01T00:00:01"),
		"doc.md:36: a message's identity must come right under its \"### \" heading, and a message must start with a blank line, a \"---\" line and a blank line"},
	{"yaml-bad-value", replace("messages: 2\n", "messages: two\n"),
		"doc.md:10: frontmatter: cannot unmarshal !!str `two` into int"},
	{"yaml-unclosed-list", replace("model: m\n", "model: [m\n"),
		"doc.md:7: frontmatter: did not find expected ',' or ']'"},
	{"yaml-tab", replace("model: m\n", "\tmodel: m\n"),
		"doc.md:7: frontmatter: found a tab character that violates indentation"},
	{"yaml-unknown-field", replace("leaf: a1\n", "leaf: a1\nmood: happy\n"),
		"doc.md:20: frontmatter: unknown field \"mood\""},
	{"yaml-field-twice", replace("leaf: a1\n", "leaf: a1\nmodel: n\n"),
		"doc.md:20: frontmatter: mapping key \"model\" already defined at line 7"},
	{"yaml-other-format", replace("format: scribe/1\n", "format: scribe/9\n"),
		"doc.md:2: format \"scribe/9\" is not \"scribe/2\": this document was written by another version of scribe"},
	{"opening-dashes-missing", replace("---\nformat", "format"),
		"doc.md:1: not a scribe document: no frontmatter (the file must start with a \"---\" line)"},
	{"closing-dashes-missing", replace("engagements: []\n---\n", "engagements: []\n"),
		"doc.md:22: the frontmatter is not closed: a \"---\" line must come before the title"},
	{"title-missing", replace("# Claude · 2026-01-01\n\n", ""),
		"doc.md:23: expected the title (a \"# \" heading) after the frontmatter and a blank line"},
	{"title-not-set-off", replace("# Claude · 2026-01-01\n\n", "# Claude · 2026-01-01\n"),
		"doc.md:24: a blank line must follow the title"},
	{"summary-not-set-off", replace("hello\n\n---\n\n### 2026-01-01T00:00:00.000Z", "hello\n***\n\n### 2026-01-01T00:00:00.000Z"),
		"doc.md:29: a message's identity must come right under its \"### \" heading, and a message must start with a blank line, a \"---\" line and a blank line"},
	{"crlf", crlf,
		"doc.md:1: the lines end in CRLF (\"\\r\\n\"), not \"\\n\": was the file converted (by Git's autocrlf, say)?"},
	{"byte-order-mark", replace("---\nformat", "\ufeff---\nformat"),
		"doc.md:1: the file starts with a byte order mark (U+FEFF): a scribe document starts with a \"---\" line"},
	{"truncated-in-frontmatter", truncate("client_version"),
		"doc.md:1: frontmatter is not closed by a \"---\" line"},
	{"truncated-in-summary", truncate("First prompt:_ hello\n"),
		"doc.md:25: the document does not end with a line end (was it cut short?)"},
	{"truncated-in-fence", truncate("a.txt\n```"),
		"doc.md:57: fenced block is not closed"},
	{"truncated-in-details", truncate("</details>\n\nhi there"),
		"doc.md:46: details block is not closed where expected"},
	{"truncated-in-identity", truncate(`"role":"assistant"} -->`),
		"doc.md:37: the document does not end with a line end (was it cut short?)"},
	{"latin-1", replace("hi there", "h\xe9 there"),
		"doc.md:63: this line is not UTF-8 text, as a scribe document is"},
	{"latin-1-in-the-frontmatter", replace("project: /home/me/app", "project: /home/m\xe9/app"),
		"doc.md:12: this line is not UTF-8 text, as a scribe document is"},
	{"truncated-in-the-last-text", truncate("ere\n"),
		"doc.md:63: the document does not end with a line end (was it cut short?)"},
}

// identityA1 is the identity line of the second message of well-formed.md.
const identityA1 = `<!-- scribe {"ids":["a1"],"time":"2026-01-01T00:00:01.000Z","role":"assistant"} --><a id="m-a1"></a>` + "\n"

// TestFormatErrors: each hand-broken document gives a *FormatError that
// names the file and the line and says what is wrong.
func TestFormatErrors(t *testing.T) {
	base := wellFormed(t)
	// well-formed.md is as scribe wrote it before tool views: its Bash
	// input is JSON, which scribe still reads (and now writes as a view).
	d, err := Parse([]byte(base), "well-formed.md")
	if err != nil {
		t.Fatalf("testdata/well-formed.md does not parse: %v", err)
	}
	if again, err := Parse(Render(d), "again.md"); err != nil || !Equal(d, again) {
		t.Fatalf("testdata/well-formed.md, rendered anew, does not read back the same (%v)", err)
	}
	for _, c := range brokenDocs {
		t.Run(c.name, func(t *testing.T) {
			doc, ok := c.edit(base)
			if !ok {
				t.Fatal("the edit does not apply to testdata/well-formed.md")
			}
			_, err := Parse([]byte(doc), "doc.md")
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("Parse gives %v, want a *FormatError", err)
			}
			if got := err.Error(); got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

// TestEditsThatParse: edits the format cannot tell from a message's text.
// The separator and the heading of a message are markdown a text may hold
// too; only the identity right under them makes them a message start
// (docs/FORMAT.md, section 4, "Why"). So a deleted identity merges its
// message into what comes before, and a duplicated header makes an empty
// message; export-claude and check report what no longer matches the round
// files.
func TestEditsThatParse(t *testing.T) {
	base := wellFormed(t)
	header := "\n---\n\n### 2026-01-01T00:00:01.000Z · assistant\n" + identityA1
	cases := []struct {
		name    string
		edit    edit
		summary string // the summary read
		items   int    // how many messages are read
		text    string // the first block of the first message
	}{
		{"identity-of-the-second-message-deleted", replace(identityA1, ""),
			"_Summary pending. First prompt:_ hello", 1, "hello\n\n---\n\n### 2026-01-01T00:00:01.000Z · assistant"},
		{"identity-of-the-first-message-deleted", replace(`<!-- scribe {"ids":["u1"],"time":"2026-01-01T00:00:00.000Z","role":"user","round":1} --><a id="round-1"></a><a id="m-u1"></a>`+"\n", ""),
			"_Summary pending. First prompt:_ hello\n\n---\n\n### 2026-01-01T00:00:00.000Z · user\n\nhello", 1, ""},
		{"message-header-duplicated", replace(header, header+header),
			"_Summary pending. First prompt:_ hello", 3, "hello"},
		{"heading-and-title-edited", func(doc string) (string, bool) {
			return strings.NewReplacer("# Claude · 2026-01-01", "# My session", "· assistant", "· the model").Replace(doc), true
		}, "_Summary pending. First prompt:_ hello", 2, "hello"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc, ok := c.edit(base)
			if !ok {
				t.Fatal("the edit does not apply to testdata/well-formed.md")
			}
			d, err := Parse([]byte(doc), "doc.md")
			if err != nil {
				t.Fatal(err)
			}
			if d.Summary != c.summary {
				t.Errorf("summary %q, want %q", d.Summary, c.summary)
			}
			if len(d.Items) != c.items {
				t.Fatalf("%d messages, want %d", len(d.Items), c.items)
			}
			if c.text != "" && (len(d.Items[0].Blocks) == 0 || d.Items[0].Blocks[0].Text != c.text) {
				t.Errorf("the first message starts with %+v, want the text %q", d.Items[0].Blocks, c.text)
			}
		})
	}
}

// FuzzParse is age's malleability test for the document format: whatever
// Parse accepts, it must accept again once rendered, as the same document.
//
// The property is the fixed point Render(Parse(Render(Parse(x)))) ==
// Render(Parse(x)), with Parse(Render(Parse(x))) Equal to Parse(x), not
// Render(Parse(x)) == x: by design Parse does not read what scribe derives
// (the title, the headings, the anchors, the <summary> lines, the HTML after
// markers), takes any YAML spelling of the frontmatter and any JSON spelling
// of a marker or a quoted text, so many inputs mean one document and only one
// of them is what Render writes. Every document scribe writes is that one
// (TestDocumentsParse in inscribe checks the whole store byte for byte).
func FuzzParse(f *testing.F) {
	base := wellFormed(f)
	f.Add([]byte(base))
	for _, c := range brokenDocs {
		if doc, ok := c.edit(base); ok {
			f.Add([]byte(doc))
		}
	}
	docs, err := filepath.Glob(filepath.Join(testenv.RepoRoot(f), "data", "sessions", "*", "*.md"))
	if err != nil {
		f.Fatal(err)
	}
	subs, _ := filepath.Glob(filepath.Join(testenv.RepoRoot(f), "data", "sessions", "*", "*", "*.md"))
	for _, p := range append(docs, subs...) {
		if filepath.Base(p) == "index.md" {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Parse(data, "fuzz.md")
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("Parse failed with %T, not a *FormatError: %v", err, err)
			}
			return
		}
		md := Render(d)
		back, err := Parse(md, "rendered.md")
		if err != nil {
			t.Fatalf("Parse accepted the input, but not its rendering: %v", err)
		}
		if !Equal(d, back) {
			t.Fatalf("Parse(Render(Parse(x))) != Parse(x)")
		}
		if again := Render(back); !bytes.Equal(again, md) {
			t.Fatalf("Render(Parse(Render(Parse(x)))) != Render(Parse(x))")
		}
		// The appender and the exporter read a head by its bytes
		// (ReadHead), not by parsing the body. Both readings agree, but
		// where the summary holds what looks, by its bytes, like the start
		// of a message (inside a fence, say): docs/FORMAT.md, 3.5.
		if strings.Contains(d.Summary, ItemOpen[1:]) {
			return
		}
		h, err := parseHead(data, int64(len(data)), "fuzz.md")
		if err != nil {
			t.Fatalf("Parse accepted the input, but not ReadHead: %v", err)
		}
		if h.Summary != d.Summary || !reflect.DeepEqual(*h.Meta, d.Meta) {
			t.Fatalf("ReadHead reads the summary %q, Parse %q", h.Summary, d.Summary)
		}
		if (h.BodyAt < h.Size) != (len(d.Items) > 0) {
			t.Fatalf("ReadHead finds the first message at %d of %d; Parse reads %d messages", h.BodyAt, h.Size, len(d.Items))
		}
		// Read a few bytes at a time, as export-claude reads a long
		// document, the messages are the ones Parse reads.
		r := &ItemReader{Meta: h.Meta, Summary: h.Summary, f: io.NopCloser(bytes.NewReader(data[h.BodyAt:])), name: "fuzz.md",
			line: bytes.Count(data[:h.BodyAt], []byte("\n")) + 1, chunk: max(7, len(data)>>6)}
		var items []session.Item
		var places []Place
		for {
			at := r.Place()
			at.Off += h.BodyAt // (r reads the body alone)
			it, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("Parse accepted the input, but not the item reader: %v", err)
			}
			items = append(items, *it)
			places = append(places, at)
		}
		if !Equal(&session.Document{Meta: d.Meta, Summary: d.Summary, Items: items}, d) {
			t.Fatalf("the item reader reads other messages than Parse")
		}
		// A reader opened at a message's Place reads the messages from
		// it on, and its first at its line.
		for _, k := range []int{0, len(items) / 2, len(items) - 1} {
			if len(items) == 0 {
				break
			}
			at := places[k]
			if want := bytes.Count(data[:at.Off], []byte("\n")) + 1; at.Line != want {
				t.Fatalf("message %d's Place is line %d, its line is %d", k, at.Line, want)
			}
			r, err := ReadItemsAt(readerAtCloser{bytes.NewReader(data)}, int64(len(data)), "fuzz.md", at)
			if err != nil {
				t.Fatalf("ReadItemsAt(%v): %v", at, err)
			}
			var rest []session.Item
			for {
				it, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("ReadItemsAt(%v): %v", at, err)
				}
				rest = append(rest, *it)
			}
			if !Equal(&session.Document{Meta: d.Meta, Summary: d.Summary, Items: rest}, &session.Document{Meta: d.Meta, Summary: d.Summary, Items: items[k:]}) {
				t.Fatalf("a reader from message %d's Place reads other messages than Parse", k)
			}
		}
	})
}

// readerAtCloser is a document in memory, as ReadItemsAt reads a file.
type readerAtCloser struct{ *bytes.Reader }

func (readerAtCloser) Close() error { return nil }

// TestReadHeadLong: ReadHead reads a head that is longer than its first
// read (a long summary) as a parse of the whole document does.
func TestReadHeadLong(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "well-formed.md"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := Parse(b, "well-formed.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{10, 7 << 10, 30 << 10, 200 << 10} {
		d.Summary = strings.Repeat("a long summary. ", n/16)
		data := Render(d)
		h, err := ReadHead(bytes.NewReader(data), int64(len(data)), "long.md")
		if err != nil {
			t.Fatalf("summary of %d bytes: %v", n, err)
		}
		want, err := parseHead(data, int64(len(data)), "long.md")
		if err != nil {
			t.Fatal(err)
		}
		if h.Summary != d.Summary || h.BodyAt != want.BodyAt || h.BodyAt >= h.Size {
			t.Errorf("summary of %d bytes: ReadHead reads %d bytes of summary, the first message at %d; want %d bytes, at %d",
				n, len(h.Summary), h.BodyAt, len(d.Summary), want.BodyAt)
		}
	}
}
