package document

import (
	"strings"
	"testing"
)

func TestMarkdownHTMLIsInert(t *testing.T) {
	for _, tc := range []struct {
		name, in   string
		want       []string // substrings of the HTML
		mustNotSee []string // substrings that must not be in it
	}{
		{"script tag", "hello <script>window.__pwned=1</script> there",
			[]string{"&lt;script&gt;window.__pwned=1&lt;/script&gt;"}, []string{"<script"}},
		{"script block", "<script>\nwindow.__pwned=1\n</script>\n",
			[]string{`<pre class="html">&lt;script&gt;`}, []string{"<script"}},
		{"img onerror", `<img src=x onerror="window.__pwned=2">`,
			[]string{"&lt;img src=x onerror=&#34;window.__pwned=2&#34;&gt;"}, []string{"<img"}},
		{"javascript link", "[click](javascript:window.__pwned=3)",
			[]string{"click"}, []string{"<a", "javascript"}},
		{"javascript link, mixed case and spaces", "[click](<  JaVaScRiPt:alert(1)>)",
			[]string{"click"}, []string{"<a"}},
		{"javascript autolink", "<javascript:alert(1)>",
			[]string{"javascript:alert(1)"}, []string{"<a"}},
		{"data link", "[x](data:text/html;base64,PHNjcmlwdD4=)", []string{"x"}, []string{"<a"}},
		{"vbscript link", "[x](vbscript:msgbox)", []string{"x"}, []string{"<a"}},
		{"entity-encoded scheme", "[x](jav&#x61;script:alert(1))", []string{"x"}, []string{"<a"}},
		{"http link", "[site](https://example.com/a?b=1&c=2)",
			[]string{`<a href="https://example.com/a?b=1&amp;c=2">site</a>`}, nil},
		{"relative link", "[r](#round-3)", []string{`<a href="#round-3">r</a>`}, nil},
		{"image becomes a link", "![a cat](https://example.com/cat.png)",
			[]string{`<a href="https://example.com/cat.png">a cat</a>`}, []string{"<img"}},
		{"data image is dropped", "![dot](data:image/png;base64,iVBORw0KGgo=)",
			[]string{"dot"}, []string{"<img", "<a"}},
		{"comment", "a <!-- hidden --> b", []string{"&lt;!-- hidden --&gt;"}, []string{"<!--"}},
		{"details", "<details><summary>x</summary>\n\nbody\n\n</details>",
			[]string{"&lt;details&gt;"}, []string{"<details"}},
		{"table", "| a | b |\n|---|---|\n| 1 | 2 |\n", []string{"<table>", "<td>1</td>"}, nil},
		{"attribute injection in a title", `[x](https://e.com "a\" onmouseover=\"alert(1)")`,
			[]string{"&quot; onmouseover=&quot;"}, []string{`" onmouseover="`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sb strings.Builder
			if err := MarkdownHTML(&sb, tc.in); err != nil {
				t.Fatal(err)
			}
			got := sb.String()
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("HTML lacks %q:\n%s", w, got)
				}
			}
			for _, w := range tc.mustNotSee {
				if strings.Contains(strings.ToLower(got), strings.ToLower(w)) {
					t.Errorf("HTML holds %q:\n%s", w, got)
				}
			}
		})
	}
}

func TestTextHTMLForms(t *testing.T) {
	var sb strings.Builder
	// A text the document fences is shown as it is, controls made visible.
	TextHTML(&sb, "line\r\nend <b>\x01", true)
	if got, want := sb.String(), "<pre class=\"text\">line\u240d\nend &lt;b&gt;\u2401</pre>\n"; got != want {
		t.Errorf("fenced text: got %q, want %q", got, want)
	}
	sb.Reset()
	TextHTML(&sb, "**bold**", true)
	if got := sb.String(); got != "<p><strong>bold</strong></p>\n" {
		t.Errorf("plain text: got %q", got)
	}
	sb.Reset()
	TextHTML(&sb, "**bold**", false)
	if got := sb.String(); got != "<pre class=\"text\">**bold**</pre>\n" {
		t.Errorf("text that is never plain: got %q", got)
	}
}

func TestSafeURL(t *testing.T) {
	for u, want := range map[string]bool{
		"https://x.org": true, "http://x": true, "mailto:a@b": true, "#m-1": true, "a/b.png": true,
		"?q=1": true, "/s/x/": true, "javascript:x": false, " javascript:x": false, "java\tscript:x": false,
		"JAVASCRIPT:x": false, "data:x": false, "file:///etc/passwd": false, "vbscript:x": false, "foo:bar": false,
		"\x01javascript:x": false,
	} {
		if got := SafeURL(u); got != want {
			t.Errorf("SafeURL(%q) = %v, want %v", u, got, want)
		}
	}
}
