package web_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/internal/testkit/storetest"
	"github.com/scribe-archive/scribe/serve/web"
)

const (
	toolsSession   = "11111111-1111-4111-8111-111111111111" // tool calls, thinking
	multiSession   = "22222222-2222-4222-8222-222222222222" // "first question", 10 rounds
	subSession     = "33333333-3333-4333-8333-333333333333" // a subagent
	subAgent       = "a851eb1970e603fa2"
	compactSession = "44444444-4444-4444-8444-444444444444"
	branchSession  = "55555555-5555-4555-8555-555555555555"
	sampleHostile  = "77777777-7777-4777-8777-777777777777"
	imageSession   = "88888888-8888-4888-8888-888888888888"
	imageFile      = "3fd6e6be528c182d.png"
	longSession    = "99999999-9999-4999-8999-999999999999" // 152 messages
)

type page struct {
	status int
	header http.Header
	body   string
	url    string
}

func get(t *testing.T, url string) page {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return page{status: resp.StatusCode, header: resp.Header, body: string(b), url: resp.Request.URL.String()}
}

func (p page) must(t *testing.T, status int, want ...string) {
	t.Helper()
	if p.status != status {
		t.Fatalf("%s: status %d, want %d\n%s", p.url, p.status, status, p.body)
	}
	for _, w := range want {
		if !strings.Contains(p.body, w) {
			t.Errorf("%s lacks %q", p.url, w)
		}
	}
}

func (p page) mustNot(t *testing.T, bad ...string) {
	t.Helper()
	for _, b := range bad {
		if strings.Contains(strings.ToLower(p.body), strings.ToLower(b)) {
			i := strings.Index(strings.ToLower(p.body), strings.ToLower(b))
			t.Errorf("%s holds %q: …%s…", p.url, b, p.body[max(0, i-80):min(len(p.body), i+80)])
		}
	}
}

// TestServer starts the server over a copy of the sample store and reads
// every kind of page.
func TestServer(t *testing.T) {
	s, projects := sampleStore(t)
	srv := serve(t, wire(t, s), web.Options{PageItems: 50, PageSessions: 10})
	u := srv.URL

	t.Run("headers", func(t *testing.T) {
		for _, path := range []string{"/", "/s/" + toolsSession + "/", "/search?q=question", "/nowhere", "/s/" + imageSession + "/files/" + imageFile, "/static/style.css"} {
			p := get(t, u+path)
			if got := p.header.Get("Content-Security-Policy"); got != web.CSP || !strings.Contains(got, "default-src 'none'") || strings.Contains(got, "script-src") {
				t.Errorf("%s: Content-Security-Policy %q", path, got)
			}
			if got := p.header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("%s: X-Content-Type-Options %q", path, got)
			}
		}
	})

	t.Run("index", func(t *testing.T) {
		// 15 Claude Code sessions (14 samples and the hostile one) and 8
		// Codex ones, the Codex ones newest.
		p := get(t, u+"/")
		p.must(t, 200, "23 sessions", "/home/dev/src/pwn", "2026-11-23", `href="s/`+hostileID+`/"`, `<td class="agent">codex</td>`,
			`<a href="?agent=claude">claude <span class="count">15</span></a>`, `<a href="?agent=codex">codex <span class="count">8</span></a>`,
			`rel="next" href="?page=2"`, `<a href="?page=3">3</a>`)
		p.mustNot(t, "<script", `href="s/`+toolsSession+`/"`) // the oldest are on the last page
		p = get(t, u+"/?page=3")
		p.must(t, 200, "first question", "create hello.py please", `href="s/`+toolsSession+`/"`, "/home/dev/src/tools-thinking", `<td class="num">10<span class="unit"> messages</span></td>`)
		get(t, u+"/?page=4").must(t, 404)
		p = get(t, u+"/?agent=codex")
		p.must(t, 200, "8 sessions of codex", "/home/codex-dev/src/multiturn")
		p.mustNot(t, `<td class="project">/home/dev/src/`)
		p = get(t, u+"/?agent=claude&project=multiturn")
		p.must(t, 200, "1 session of claude in projects matching “multiturn”", "first question")
		p.mustNot(t, "create hello.py please")
		get(t, u+"/?agent=nobody").must(t, 200, "0 sessions", "No sessions.")
	})

	t.Run("session with tool calls and thinking", func(t *testing.T) {
		p := get(t, u+"/s/"+toolsSession+"/")
		p.must(t, 200, "<h1>create hello.py please</h1>", `<details class="tool"><summary>Tool: Bash — List files</summary>`,
			`<details class="thinking"><summary>Thinking</summary>`, `id="round-2"`, `id="m-05449008-f63d-4907-b42c-169348e1b972"`,
			`<details class="tool error"><summary>Tool: Read — /home/dev/src/tools-thinking/missing.txt (error)</summary>`,
			`href="../../s/`+toolsSession+`/document.md"`, `href="../../s/`+toolsSession+`/transcript.jsonl"`)
		get(t, u+"/s/"+toolsSession).must(t, 200, "<h1>create hello.py please</h1>") // redirected to the folder
		get(t, u+"/s/"+toolsSession+"/index.html").must(t, 200, "<h1>create hello.py please</h1>")
	})

	t.Run("images", func(t *testing.T) {
		p := get(t, u+"/s/"+imageSession+"/")
		img := "../../s/" + imageSession + "/files/" + imageFile
		p.must(t, 200, `<img src="`+img+`"`)
		f := get(t, u+"/s/"+imageSession+"/files/"+imageFile)
		want, err := os.ReadFile(filepath.Join(s.SessionsDir(), "claude", imageSession, "files", imageFile))
		if err != nil {
			t.Fatal(err)
		}
		if f.status != 200 || f.body != string(want) || f.header.Get("Content-Type") != "image/png" {
			t.Errorf("image: status %d, %d bytes (want %d), %s", f.status, len(f.body), len(want), f.header.Get("Content-Type"))
		}
	})

	t.Run("sidechain", func(t *testing.T) {
		p := get(t, u+"/s/"+subSession+"/")
		link := "../../s/" + subSession + "/agent-" + subAgent + "/"
		p.must(t, 200, `<p class="sidechain">Sidechain: <a href="`+link+`">`)
		p = get(t, u+"/s/"+subSession+"/agent-"+subAgent+"/")
		p.must(t, 200, `A sidechain (subagent) of <a href="../../../s/`+subSession+`/">`)
		get(t, u+"/s/"+subSession+"/agent-"+subAgent+"/document.md").must(t, 200, "sidechain_of:")
	})

	t.Run("compaction and branches", func(t *testing.T) {
		get(t, u+"/s/"+compactSession+"/").must(t, 200, "<b>Conversation compacted</b> (manual)", `<summary>Compaction summary</summary>`, "note-compaction")
		p := get(t, u+"/s/"+branchSession+"/")
		p.must(t, 200, "Branch point: the conversation was rewound and went on 2 ways from here", "An abandoned branch (rewound)", "The live branch from", "<dt>branches</dt>")
	})

	t.Run("pages of a long session", func(t *testing.T) {
		p := get(t, u+"/s/"+longSession+"/")
		p.must(t, 200, "this page shows 1 to 50", `<a rel="next" href="../../s/`+longSession+`/page-2.html">`, `<a href="../../s/`+longSession+`/page-4.html">4</a>`)
		p = get(t, u+"/s/"+longSession+"/page-4.html")
		p.must(t, 200, "this page shows 151 to 152", `<span class="current" aria-current="page">4</span>`)
		get(t, u+"/s/"+longSession+"/page-5.html").must(t, 404)
		get(t, u+"/s/"+longSession+"/page-1.html").must(t, 404)
		// A message on page 3 is reached through its redirect.
		m := regexp.MustCompile(`<article class="[^"]*" id="m-([^"]+)"`).FindStringSubmatch(get(t, u+"/s/"+longSession+"/page-3.html").body)
		if m == nil {
			t.Fatal("page 3 has no message")
		}
		redirect(t, u+"/s/"+longSession+"/m/"+m[1], "../page-3.html#m-"+m[1])
		get(t, u+"/s/"+longSession+"/m/"+m[1]).must(t, 200, `id="m-`+m[1]+`"`, "this page shows 101 to 150")
		// So is a round on another page.
		small := serve(t, wire(t, s), web.Options{PageItems: 3})
		redirect(t, small.URL+"/s/"+multiSession+"/round/5", "../page-3.html#round-5") // two messages a round
		get(t, small.URL+"/s/"+multiSession+"/round/5").must(t, 200, `id="round-5"`, "fifth question")
		redirect(t, small.URL+"/s/"+multiSession+"/round/1", "../#round-1")
		get(t, u+"/s/"+longSession+"/round/1").must(t, 200, `id="round-1"`)
		get(t, u+"/s/"+longSession+"/round/9999").must(t, 404)
		get(t, u+"/s/"+toolsSession+"/m/05449008-f63d-4907-b42c-169348e1b972").must(t, 200, `id="m-05449008-f63d-4907-b42c-169348e1b972"`)
	})

	t.Run("search", func(t *testing.T) {
		p := get(t, u+"/search?q=question")
		p.must(t, 200, `<a href="s/`+multiSession+`/round/`, "<mark>question</mark>", "first question · round")
		p = get(t, u+"/search?q=question&project=tools-thinking")
		p.must(t, 200, "No rounds match.")
		p = get(t, u+"/search?q=%22unterminated&fts=1")
		p.must(t, 400, "unterminated", `<input type="checkbox" name="fts" value="1" checked>`)
		get(t, u+"/search?q=question&agent=nobody").must(t, 400, "nobody")
		get(t, u+"/search?q=%22unterminated").must(t, 200) // words as typed: a quote is punctuation
		// Codex sessions are searched, and their hits lead to their rounds.
		p = get(t, u+"/search?q=question&agent=codex")
		p.must(t, 200, "codex")
		m := regexp.MustCompile(`<a href="(s/[^"]+/round/\d+)">`).FindStringSubmatch(p.body)
		if m == nil {
			t.Fatal("no Codex hit")
		}
		get(t, u+"/"+m[1]).must(t, 200, "<dt>agent</dt><dd>codex")
		get(t, u+"/s/01a20952-aced-7670-b71b-a40087387e93/").must(t, 200, "<summary>Tool: exec_command — ls -la</summary>")
		get(t, u+"/search").must(t, 200, `name="q"`)
		// A hit leads to its round.
		get(t, u+"/s/"+multiSession+"/round/3").must(t, 200, `id="round-3"`, "third question")
	})

	t.Run("downloads", func(t *testing.T) {
		md := filepath.Join(s.SessionsDir(), "claude", toolsSession+".md")
		want, err := os.ReadFile(md)
		if err != nil {
			t.Fatal(err)
		}
		p := get(t, u+"/s/"+toolsSession+"/document.md")
		if p.status != 200 || p.body != string(want) {
			t.Errorf("document.md: status %d, not the document's bytes", p.status)
		}
		if cd := p.header.Get("Content-Disposition"); cd != `attachment; filename="`+toolsSession+`.md"` {
			t.Errorf("document.md: Content-Disposition %q", cd)
		}
		// The transcript is the source, byte for byte.
		for _, id := range []string{toolsSession, imageSession, compactSession} {
			ts, err := storetest.Claude.Discover(projects)
			if err != nil {
				t.Fatal(err)
			}
			for _, tr := range ts {
				if tr.ID != id {
					continue
				}
				src, err := os.ReadFile(tr.Path)
				if err != nil {
					t.Fatal(err)
				}
				p := get(t, u+"/s/"+id+"/transcript.jsonl")
				if p.status != 200 || p.body != string(src) {
					t.Errorf("%s transcript.jsonl: status %d, %d bytes, want the source's %d", id, p.status, len(p.body), len(src))
				}
			}
		}
	})

	t.Run("paths never leave the store", func(t *testing.T) {
		secret := "TOP-SECRET-" + t.Name()
		if err := os.WriteFile(filepath.Join(s.Root, "..", "secret.txt"), []byte(secret), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(s.SessionsDir(), "claude", toolsSession, "secret.txt"), []byte(secret), 0o644); err != nil {
			t.Fatal(err)
		}
		doc := "/s/" + toolsSession
		for _, path := range []string{
			"/s/../../secret.txt", "/s/%2e%2e/%2e%2e/%2e%2e/secret.txt", "/s/..%2f..%2f..%2fsecret.txt/",
			"/s/%2e%2e%2f%2e%2e%2fsecret.txt/document.md", "/s/..%2fclaude%2f" + toolsSession + "/document.md",
			doc + "/files/..%2fsecret.txt", doc + "/files/%2e%2e%2fsecret.txt", doc + "/files/%2e%2e/secret.txt",
			doc + "/files/../secret.txt", doc + "/files/..%5csecret.txt", doc + "/files/.lock", doc + "/files/%2e%2e",
			doc + "/agent-..%2f..%2fsecret/document.md", doc + "/agent-%2e%2e/document.md", doc + "/m/..%2f..%2fsecret.txt",
			doc + "/secret.txt", doc + "/state.json", doc + "/rounds/001.json", "/static/..%2fweb.go", "/static/%2e%2e%2fweb.go",
			"/s/" + strings.Repeat("x", 300) + "/", "/s/claude/", "/s/index/",
		} {
			req, err := http.NewRequest("GET", u+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 404 || bytes.Contains(b, []byte(secret)) || bytes.Contains(b, []byte("package web")) {
				t.Errorf("%s (ended at %s): status %d, want 404", path, resp.Request.URL.Path, resp.StatusCode)
			}
		}
	})

	t.Run("hostile sessions render as text", func(t *testing.T) {
		p := get(t, u+"/s/"+sampleHostile+"/")
		p.must(t, 200, "&lt;script&gt;alert(1)&lt;/script&gt;", "### 2025-01-01T00:00:00.000Z · assistant")
		p.mustNot(t, "<script", "<b>bold</b>")
		p = get(t, u+"/s/"+hostileID+"/")
		p.must(t, 200, "&lt;script&gt;window.__pwned=1;document.title=&#39;pwned&#39;&lt;/script&gt;",
			"&lt;img src=x onerror=", "click me", "raw link", "&lt;iframe", "&lt;/pre&gt;&lt;script&gt;window.__pwned=7",
			"&lt;script&gt;window.__pwned=8&lt;/script&gt;", `<a href="https://example.com/pixel.png">tracker</a>`,
			"Tool: Bash — &lt;b&gt;bold&lt;/b&gt; &#34;quoted&#34;")
		p.mustNot(t, "<script", "<img src=x", "<iframe", "<svg", "<style", "onerror=\"", "href=\"javascript", "href=\"java", "onmouseover=\"", "<details open")
		if re := regexp.MustCompile(`(?i)<[a-z][^>]*\son[a-z]+\s*=`); re.MatchString(p.body) {
			t.Errorf("an element with an event handler: %s", re.FindString(p.body))
		}
		// In the list and in search, titles and snippets are text too.
		get(t, u+"/").mustNot(t, "<script")
		p = get(t, u+"/search?q=pwned")
		p.must(t, 200, "&lt;script&gt;")
		p.mustNot(t, "<script", "<img")
	})

	t.Run("not found", func(t *testing.T) {
		get(t, u+"/s/00000000-0000-4000-8000-000000000000/").must(t, 404, "There is no such session")
		get(t, u+"/nowhere").must(t, 404)
		get(t, u+"/s/"+toolsSession+"/nowhere").must(t, 404)
	})
}

// redirect checks that url redirects to the relative location to.
func redirect(t *testing.T, url, to string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != 302 || loc != to {
		t.Errorf("%s: %d to %q, want 302 to %q", url, resp.StatusCode, loc, to)
	}
}

// TestServerReadsLive: a session appended, and one inscribed, after the
// server started show on the next request.
func TestServerReadsLive(t *testing.T) {
	s, projects := storetest.Samples(t)
	srv := serve(t, wire(t, s), web.Options{})
	u := srv.URL
	get(t, u+"/").must(t, 200, "14 sessions")
	get(t, u+"/s/"+multiSession+"/").mustNot(t, "an eleventh question")

	// Append a round to a session, as the hook does.
	appendEleventh(t, s, projects)
	get(t, u+"/s/"+multiSession+"/").must(t, 200, "an eleventh question")
	get(t, u+"/search?q=eleventh").must(t, 200, "<mark>eleventh</mark>")

	// A new session.
	writeHostile(t, projects)
	storetest.Inscribe(t, s, filepath.Join(projects, "-home-dev-src-pwn"), inscribe.Options{})
	get(t, u+"/").must(t, 200, "15 sessions", "/home/dev/src/pwn")
}

// TestSite writes the static site and checks its pages, links and
// downloads.
func TestSite(t *testing.T) {
	s, _ := sampleStore(t)
	ws := wire(t, s)
	ws.Search = nil
	export := ws.Transcript
	ws.Transcript = func(d *inscribe.Doc, w io.Writer) ([]error, error) { // one session does not export
		if strings.Contains(d.Path(), hostileID) {
			return nil, errors.New("cannot export")
		}
		return export(d, w)
	}
	out := t.TempDir()
	rep, err := web.New(ws, web.Options{PageItems: 50, PageSessions: 10, Logf: t.Logf}).WriteSite(t.Context(), out)
	if err != nil {
		t.Fatal(err)
	}
	read := func(rel string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, rel := range []string{"index.html", "page-2.html", "agents/claude/index.html", "agents/claude/page-2.html", "static/style.css",
		"s/" + longSession + "/index.html", "s/" + longSession + "/page-4.html", "s/" + subSession + "/agent-" + subAgent + "/index.html",
		"s/" + imageSession + "/files/" + imageFile} {
		read(rel)
	}
	if rep.Pages.N < 20 || rep.Documents.N != 24 || rep.Transcripts.N != 23 || rep.Files.N == 0 || rep.Assets.N != 2 {
		t.Errorf("the site's report: %+v", rep)
	}
	if _, err := os.Stat(filepath.Join(out, "s", longSession, "page-5.html")); err == nil {
		t.Error("a page past the last")
	}
	if _, err := os.Stat(filepath.Join(out, "search")); err == nil {
		t.Error("a search page")
	}
	idx := read("index.html")
	if !strings.Contains(idx, `href="s/`+hostileID+`/index.html"`) || strings.Contains(idx, `action="search"`) {
		t.Error("index.html: no static link to a session, or a search form")
	}
	if !strings.Contains(read("agents/claude/page-2.html"), `href="../../s/`+toolsSession+`/index.html"`) {
		t.Error("agents/claude/index.html: no link to a session")
	}
	// Every link is relative, and every relative link to a page of the
	// site names a file that is there.
	hrefs := regexp.MustCompile(`<[a-z]+[^<>]*?\s(?:href|src)="([^"#?]*)[^"]*"`)
	filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(p, ".html") {
			return err
		}
		b, _ := os.ReadFile(p)
		for _, m := range hrefs.FindAllStringSubmatch(string(b), -1) {
			l := m[1]
			if l == "" || strings.HasPrefix(l, "https://") {
				continue
			}
			if strings.HasPrefix(l, "/") {
				t.Errorf("%s: absolute link %s", p, l)
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(p), filepath.FromSlash(l))); err != nil {
				t.Errorf("%s: broken link %s", p, l)
			}
		}
		return nil
	})
	// A message on another page is linked to that page.
	long := read("s/" + longSession + "/page-2.html")
	if !strings.Contains(long, `href="../../s/`+longSession+`/page-3.html"`) {
		t.Error("page 2 does not link page 3")
	}
	// Downloads are the document and its source.
	md, _ := os.ReadFile(filepath.Join(s.SessionsDir(), "claude", toolsSession+".md"))
	if read("s/"+toolsSession+"/document.md") != string(md) {
		t.Error("document.md differs from the document")
	}
	if !strings.Contains(read("s/"+toolsSession+"/transcript.jsonl"), `"content":"create hello.py please"`) {
		t.Error("transcript.jsonl is not the transcript")
	}
	hostile := read("s/" + hostileID + "/index.html")
	if strings.Contains(hostile, "<script") || !strings.Contains(hostile, `<meta http-equiv="Content-Security-Policy"`) {
		t.Error("the hostile session's static page runs script, or has no policy")
	}
	if strings.Contains(hostile, "transcript.jsonl") {
		t.Error("a session that did not export offers its transcript")
	}
	if _, err := os.Stat(filepath.Join(out, "s", hostileID, "transcript.jsonl")); err == nil {
		t.Error("a transcript that failed is on the site")
	}
}

// TestTimesTokensOutline: times are shown in the server's zone, named;
// each session and each round has its tokens; a session's page has the
// outline of its rounds and the sessions beside it (issue 31).
func TestTimesTokensOutline(t *testing.T) {
	s, _ := sampleStore(t)
	srv := serve(t, wire(t, s), web.Options{PageItems: 4, Zone: time.FixedZone("JST", 9*3600)})
	list := get(t, srv.URL+"/")
	list.must(t, 200, `<time datetime="2026-11-22T09:26:19.379Z">2026-11-22 18:26 JST</time>`,
		`<td class="num tokens">580<span class="unit"> tokens</span></td>`)
	list.mustNot(t, ">2026-11-22T09:26")

	p := get(t, srv.URL+"/s/"+multiSession+"/")
	p.must(t, 200, "<dt>tokens</dt><dd>580 in 5 rounds</dd>", "2026-11-22 18:26 JST to 18:26",
		`<details class="outline" id="outline" open>`, "<summary>Outline: 5 rounds, 580 tokens, 3 pages</summary>",
		`<li value="1" class="here"><a href="#round-1">first question</a> <span class="at">18:26 · 112 tokens</span></li>`,
		`<li value="5"><a href="../../s/`+multiSession+`/round/5">fifth question</a>`,
		`<h2 class="round" id="round-2"><a href="#round-2">Round 2</a> <time class="when" datetime="2026-11-22T09:26:20.299Z">2026-11-22 18:26 JST</time> <span class="tokens">114 tokens</span>`,
		`<a rel="prev" href="#round-1">↑ 1</a> <a rel="next" href="../../s/`+multiSession+`/round/3">↓ 3</a>`,
		`<a class="time" href="#m-`, `">18:26:19</a>`, // under its round's heading, which says the date and the zone
		`rel="prev" href="../../s/`+subSession+`/"`, `rel="next" href="../../s/`+toolsSession+`/"`)
	// A later page: the outline is closed, and marks its rounds.
	p = get(t, srv.URL+"/s/"+multiSession+"/page-2.html")
	p.must(t, 200, `<details class="outline" id="outline">`, `<li value="3" class="here">`)
	// A long session's outline lists the rounds about the page's, and
	// says how many it leaves out on either side; the rounds' headings
	// still lead to the rounds before and after.
	short := serve(t, wire(t, s), web.Options{PageItems: 4, OutlineRounds: 2})
	p = get(t, short.URL+"/s/"+multiSession+"/page-2.html")
	p.must(t, 200, "<dt>tokens</dt><dd>580 in 5 rounds</dd>",
		"<summary>Outline: 5 rounds, 580 tokens, 3 pages; 2 of them about this page</summary>",
		`<p class="more">2 earlier rounds: on the pages before</p>`, `<li value="3" class="here">`, `<li value="4" class="here">`,
		`<p class="more">1 later round: on the pages after</p>`,
		`<a rel="prev" href="../../s/`+multiSession+`/round/2">↑ 2</a>`, `<a rel="next" href="../../s/`+multiSession+`/round/5">↓ 5</a>`)
	p.mustNot(t, `<li value="2"`, `<li value="5"`)
	p = get(t, short.URL+"/s/"+multiSession+"/page-3.html")
	p.must(t, 200, `<li value="4">`, `<li value="5" class="here">`, `<p class="more">3 earlier rounds: on the pages before</p>`)
	p.mustNot(t, `later round`)
	// A page that starts in the middle of a round: its first message says
	// the date and the zone.
	p = get(t, srv.URL+"/s/"+longSession+"/page-2.html")
	p.must(t, 200, `">2026-11-22 18:26:43 JST</a> · <span class="role">assistant</span>`)
	// A search's hits too.
	get(t, srv.URL+"/search?q=third+question").must(t, 200, `<time datetime="2026-11-22T09:26:21.158Z">2026-11-22 18:26 JST</time> · claude`)
	// A sidechain has no neighbours in the list.
	p = get(t, srv.URL+"/s/"+subSession+"/agent-"+subAgent+"/")
	p.must(t, 200)
	p.mustNot(t, `<nav class="sessions"`)
	// The oldest session has a newer one and no older.
	p = get(t, srv.URL+"/s/"+toolsSession+"/")
	p.must(t, 200, `<nav class="sessions"`, `rel="prev" href="../../s/`+multiSession+`/"`)
	p.mustNot(t, `older session`)
}

// TestSiteNoTranscripts: html --no-transcripts writes the pages and the
// files sessions showed, not the downloads, and its pages do not offer
// them.
func TestSiteNoTranscripts(t *testing.T) {
	s, _ := sampleStore(t)
	ws := wire(t, s)
	ws.Search = nil
	out := t.TempDir()
	rep, err := web.New(ws, web.Options{PageItems: 50, Logf: t.Logf, NoTranscripts: true}).WriteSite(t.Context(), out)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Documents.N != 0 || rep.Transcripts.N != 0 || rep.Pages.N < 24 || rep.Files.N == 0 {
		t.Errorf("report %+v", rep)
	}
	var total int64
	filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if name := d.Name(); name == "transcript.jsonl" || name == "document.md" {
			t.Errorf("%s is on a site without transcripts", p)
		}
		if strings.HasSuffix(p, ".html") {
			b, _ := os.ReadFile(p)
			if strings.Contains(string(b), "transcript.jsonl") || strings.Contains(string(b), "document.md") {
				t.Errorf("%s offers a download", p)
			}
		}
		if fi, err := d.Info(); err == nil && !d.IsDir() {
			total += fi.Size()
		}
		return nil
	})
	if total != rep.Total().Bytes {
		t.Errorf("the site holds %d bytes, its report says %d", total, rep.Total().Bytes)
	}
}
