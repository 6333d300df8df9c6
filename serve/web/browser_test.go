package web_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/scribe-archive/scribe/serve/web"
)

// chromium starts a headless Chromium with its DevTools endpoint on a free
// loopback port and returns a connection to its page. It skips the test
// when there is no Chromium, unless SCRIBE_REQUIRE_CHROMIUM=1.
func chromium(t *testing.T) *cdp {
	t.Helper()
	bin := os.Getenv("SCRIBE_CHROMIUM")
	if bin == "" {
		for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
			if p, err := exec.LookPath(name); err == nil {
				bin = p
				break
			}
		}
	}
	if bin == "" {
		msg := "no Chromium on PATH (install Debian's: apt-get install -y chromium; or set $SCRIBE_CHROMIUM)"
		if os.Getenv("SCRIBE_REQUIRE_CHROMIUM") == "1" {
			t.Fatal(msg + ", and SCRIBE_REQUIRE_CHROMIUM=1")
		}
		t.Skip(msg)
	}
	// Not t.TempDir: the browser's helper processes may still write to
	// its profile for a moment after it exits.
	profile, err := os.MkdirTemp("", "scribe-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
		"--user-data-dir="+profile, "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
		"--window-size=1280,900", "about:blank")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`DevTools listening on (ws://\S+)`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	var browserWS string
	select {
	case browserWS = <-found:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("Chromium did not open its DevTools endpoint in 30 s")
	}
	t.Cleanup(func() {
		// Close the browser as a person would, so that it stops its helper
		// processes; kill it if it does not.
		if b, err := dialCDP(browserWS); err == nil {
			b.call("Browser.close", nil, nil)
			b.close()
		}
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		for range 10 {
			if os.RemoveAll(profile) == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	// The page Chromium opened, from the endpoint's list of targets.
	host := strings.TrimPrefix(browserWS, "ws://")
	host = host[:strings.IndexByte(host, '/')]
	resp, err := http.Get("http://" + host + "/json/list")
	if err != nil {
		t.Fatal(err)
	}
	var targets []struct {
		Type, WebSocketDebuggerURL string
	}
	json.NewDecoder(resp.Body).Decode(&targets)
	resp.Body.Close()
	var pageWS string
	for _, tg := range targets {
		if tg.Type == "page" {
			pageWS = tg.WebSocketDebuggerURL
		}
	}
	if pageWS == "" {
		t.Fatalf("Chromium has no page: %+v", targets)
	}
	c, err := dialCDP(pageWS)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.close)
	for _, domain := range []string{"Page", "Runtime", "Log"} {
		if err := c.call(domain+".enable", nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// artifacts is where the browser test leaves its screenshots:
// $SCRIBE_ARTIFACTS/web, else scribe-artifacts/web in the temporary
// directory.
func artifacts(t *testing.T) string {
	dir := os.Getenv("SCRIBE_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "scribe-artifacts")
	}
	dir = filepath.Join(dir, "web")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestBrowser opens the archive in a real browser: pages load without a
// console error, collapsed blocks open on a click, images load, a round on
// another page is reached, and the hostile sessions run nothing.
func TestBrowser(t *testing.T) {
	c := chromium(t)
	s, _ := sampleStore(t)
	srv := serve(t, wire(t, s), web.Options{PageItems: 50})
	shots := artifacts(t)
	t.Logf("screenshots in %s", shots)

	// load opens a page, fails on anything the page reported, and saves a
	// screenshot.
	load := func(t *testing.T, path, shot string) {
		t.Helper()
		m := c.mark()
		if err := c.navigate(srv.URL + path); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		time.Sleep(100 * time.Millisecond) // let late reports (an image that fails) arrive
		for _, p := range c.problems(m) {
			t.Errorf("%s: %s", path, p)
		}
		if shot != "" {
			png, err := c.screenshot()
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(shots, shot), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	eval := func(t *testing.T, expr string, out any) {
		t.Helper()
		if err := c.eval(expr, out); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("index", func(t *testing.T) {
		load(t, "/", "index.png")
		var rows int
		eval(t, `document.querySelectorAll("table.sessions tbody tr").length`, &rows)
		if rows != 23 {
			t.Errorf("%d sessions listed, want 23", rows)
		}
	})

	t.Run("every session", func(t *testing.T) {
		// Every session of both clients, and every sidechain they link,
		// loads without a complaint and runs nothing.
		var links []string
		eval(t, `[...document.querySelectorAll("table.sessions a")].map(a => a.href)`, &links)
		if len(links) != 23 {
			t.Fatalf("%d links", len(links))
		}
		seen := map[string]bool{}
		for len(links) > 0 {
			l := links[0]
			links = links[1:]
			if seen[l] {
				continue
			}
			seen[l] = true
			load(t, strings.TrimPrefix(l, srv.URL), "")
			var more []string
			eval(t, `[...document.querySelectorAll("p.sidechain a, ul.sidechains a")].map(a => a.href)`, &more)
			links = append(links, more...)
			var pwned bool
			eval(t, `window.__pwned !== undefined || document.title == "pwned"`, &pwned)
			if pwned {
				t.Errorf("%s: a script ran", l)
			}
		}
		if len(seen) < 24 {
			t.Errorf("%d pages, want every session and a sidechain", len(seen))
		}
	})

	t.Run("collapsed blocks open on a click", func(t *testing.T) {
		load(t, "/s/"+toolsSession+"/", "session.png")
		var state struct {
			Details, Open int
			Hidden        bool
		}
		eval(t, `({Details: document.querySelectorAll("details:not(.outline)").length, Open: document.querySelectorAll("details[open]:not(.outline)").length,
			Hidden: !document.querySelector("details.tool .input pre").checkVisibility()})`, &state)
		if state.Details < 5 || state.Open != 0 || !state.Hidden {
			t.Fatalf("before the click: %+v, want every details block closed, its input hidden", state)
		}
		if err := c.click("details.tool > summary"); err != nil {
			t.Fatal(err)
		}
		eval(t, `({Details: document.querySelectorAll("details:not(.outline)").length, Open: document.querySelectorAll("details[open]:not(.outline)").length,
			Hidden: !document.querySelector("details.tool .input pre").checkVisibility()})`, &state)
		if state.Open != 1 || state.Hidden {
			t.Errorf("after a click on the tool call: %+v, want it open and its input shown", state)
		}
		var opened bool
		eval(t, `document.querySelector("details.tool").open`, &opened)
		if !opened {
			t.Error("the tool call did not open")
		}
		png, _ := c.screenshot()
		os.WriteFile(filepath.Join(shots, "session-tool-open.png"), png, 0o644)
		// The README's picture (docs/serve.png): the thinking and the
		// first call opened, at 1000 by 960.
		if err := c.viewport(1000, 960, false); err != nil {
			t.Fatal(err)
		}
		defer c.call("Emulation.clearDeviceMetricsOverride", nil, nil)
		eval(t, `document.querySelector("details.thinking").open = true; document.querySelector("details.outline").open = false; window.scrollTo(0, 0)`, nil)
		png, _ = c.screenshot()
		os.WriteFile(filepath.Join(shots, "readme-serve.png"), png, 0o644)
	})

	t.Run("images load", func(t *testing.T) {
		load(t, "/s/"+imageSession+"/", "image.png")
		var ok bool
		eval(t, `(() => { const i = document.querySelector("figure.file img"); return !!i && i.complete && i.naturalWidth > 0; })()`, &ok)
		if !ok {
			t.Error("the session's image did not load")
		}
	})

	t.Run("a round on another page", func(t *testing.T) {
		load(t, "/s/"+longSession+"/page-3.html", "")
		var id string
		eval(t, `document.querySelector("article.item").id`, &id)
		load(t, "/s/"+longSession+"/m/"+strings.TrimPrefix(id, "m-"), "")
		var loc struct{ Path, Hash, Target string }
		eval(t, `({Path: location.pathname, Hash: location.hash, Target: (document.querySelector(":target") || {}).id || ""})`, &loc)
		if !strings.HasSuffix(loc.Path, "/page-3.html") || loc.Hash != "#"+id || loc.Target != id {
			t.Errorf("at %+v, want page 3 with %s the target", loc, id)
		}
	})

	t.Run("search", func(t *testing.T) {
		load(t, "/search?q=question", "search.png")
		var marks int
		eval(t, `document.querySelectorAll("ol.hits mark").length`, &marks)
		if marks == 0 {
			t.Error("no highlighted word")
		}
	})

	// A session of more than one page has an outline of its rounds on
	// every page, each round linked where it is, and each round's heading
	// leads to the prompts before and after it, on this page or another.
	t.Run("outline and jumps between prompts", func(t *testing.T) {
		small := serve(t, wire(t, s), web.Options{PageItems: 4})
		loadAt := func(path, shot string) {
			t.Helper()
			m := c.mark()
			if err := c.navigate(small.URL + path); err != nil {
				t.Fatal(err)
			}
			for _, p := range c.problems(m) {
				t.Errorf("%s: %s", path, p)
			}
			if shot != "" {
				png, _ := c.screenshot()
				os.WriteFile(filepath.Join(shots, shot), png, 0o644)
			}
		}
		loadAt("/s/"+multiSession+"/page-2.html", "outline.png")
		var o struct {
			Rounds, Here, Pages int
			Open                bool
			First               string
		}
		eval(t, `({Rounds: document.querySelectorAll("details.outline li").length, Here: document.querySelectorAll("details.outline li.here").length,
			Pages: document.querySelectorAll("nav.pager a, nav.pager .current").length - 2, Open: document.querySelector("details.outline").open,
			First: document.querySelector("details.outline li a").textContent})`, &o)
		if o.Rounds != 5 || o.Here == 0 || o.Pages < 2 || o.Open || o.First != "first question" {
			t.Errorf("page 2 of a session of 5 rounds on several pages: outline %+v", o)
		}
		// The outline leads to round 5, on another page.
		m := c.mark()
		eval(t, `document.querySelector("details.outline").open = true`, nil)
		if err := c.click(`details.outline li:last-child a`); err != nil {
			t.Fatal(err)
		}
		if err := c.waitFor("Page.loadEventFired", m, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		var at struct{ Path, Hash, Target string }
		eval(t, `({Path: location.pathname, Hash: location.hash, Target: (document.querySelector(":target") || {}).id || ""})`, &at)
		if at.Hash != "#round-5" || at.Target != "round-5" || !strings.HasPrefix(at.Path, "/s/"+multiSession+"/page-") {
			t.Errorf("the outline's round 5 led to %+v", at)
		}
		// From round 5, the prompt before it is on the page before.
		m = c.mark()
		if err := c.click(`#round-5 a[rel=prev]`); err != nil {
			t.Fatal(err)
		}
		c.waitFor("Page.loadEventFired", m, 10*time.Second)
		eval(t, `({Path: location.pathname, Hash: location.hash, Target: (document.querySelector(":target") || {}).id || ""})`, &at)
		if at.Hash != "#round-4" || at.Target != "round-4" {
			t.Errorf("round 5's previous prompt led to %+v", at)
		}
		var head string
		eval(t, `document.querySelector("#round-4").textContent`, &head)
		if !regexp.MustCompile(`Round 4 2026-11-22 \d\d:\d\d \S+ \d+ tokens`).MatchString(head) {
			t.Errorf("round 4's heading: %q, want its time with the zone and its tokens", head)
		}
	})

	// The sessions before and after this one in the list.
	t.Run("newer and older sessions", func(t *testing.T) {
		load(t, "/s/"+multiSession+"/", "")
		var nav struct{ Newer, Older string }
		eval(t, `({Newer: (document.querySelector("nav.sessions a[rel=prev]") || {}).href || "", Older: (document.querySelector("nav.sessions a[rel=next]") || {}).href || ""})`, &nav)
		if nav.Newer == "" || nav.Older == "" {
			t.Fatalf("a session in the middle of the list links %+v", nav)
		}
		load(t, strings.TrimPrefix(nav.Older, srv.URL), "")
		var back string
		eval(t, `(document.querySelector("nav.sessions a[rel=prev]") || {}).href || ""`, &back)
		if back != srv.URL+"/s/"+multiSession+"/" {
			t.Errorf("the older session's newer one is %q", back)
		}
	})

	// At a desktop's size and at a phone's (390 CSS pixels, as an iPhone's),
	// no page is wider than the screen: the list, a session, the long one,
	// the search. Screenshots of each are in the artefacts.
	for _, size := range []struct {
		name          string
		width, height int
		mobile        bool
	}{{"desktop", 1280, 900, false}, {"phone", 390, 844, true}} {
		t.Run("fits a "+size.name, func(t *testing.T) {
			if err := c.viewport(size.width, size.height, size.mobile); err != nil {
				t.Fatal(err)
			}
			defer c.call("Emulation.clearDeviceMetricsOverride", nil, nil)
			var links []string
			load(t, "/", "list-"+size.name+".png")
			eval(t, `[...document.querySelectorAll("table.sessions a")].map(a => a.href)`, &links)
			pages := []string{"/", "/search?q=question", "/s/" + toolsSession + "/", "/s/" + longSession + "/page-2.html", "/s/" + subSession + "/agent-" + subAgent + "/"}
			for _, l := range links {
				pages = append(pages, strings.TrimPrefix(l, srv.URL))
			}
			for i, p := range pages {
				shot := ""
				switch i {
				case 1:
					shot = "search-" + size.name + ".png"
				case 2:
					shot = "session-" + size.name + ".png"
				case 3:
					shot = "long-" + size.name + ".png"
				}
				load(t, p, shot)
				o, err := c.overflow()
				if err != nil {
					t.Fatal(err)
				}
				if o.Scroll > o.Width || len(o.Over) > 0 {
					t.Errorf("%s at %d px: %d px wide, past the edge: %v", p, size.width, o.Scroll, o.Over)
				}
			}
			// The list's titles read as lines, not a letter a line, and the
			// search box and its button are whole.
			load(t, "/", "")
			var list struct {
				Narrowest, Button, Left, Width float64
			}
			eval(t, `(() => { const ws = [...document.querySelectorAll("table.sessions td.title")].map(e => e.getBoundingClientRect().width);
				const b = document.querySelector("form.search button").getBoundingClientRect();
				return {Narrowest: Math.min(...ws), Button: b.right, Left: b.left, Width: document.documentElement.clientWidth}; })()`, &list)
			if list.Narrowest < float64(size.width)/2 && size.mobile || list.Narrowest < 200 {
				t.Errorf("at %d px a title is %.0f px wide", size.width, list.Narrowest)
			}
			if list.Button > list.Width || list.Left < 0 {
				t.Errorf("at %d px the search button spans %.0f to %.0f px", size.width, list.Left, list.Button)
			}
		})
	}

	for _, id := range []string{hostileID, sampleHostile} {
		t.Run("hostile "+id, func(t *testing.T) {
			load(t, "/s/"+id+"/", "hostile-"+id[:8]+".png")
			// Open every block, and hover everything, so that any handler
			// that made it into the page would have run.
			eval(t, `document.querySelectorAll("details").forEach(d => d.open = true)`, nil)
			if err := c.call("Input.dispatchMouseEvent", map[string]any{"type": "mouseMoved", "x": 300, "y": 300}, nil); err != nil {
				t.Fatal(err)
			}
			time.Sleep(200 * time.Millisecond)
			var r struct {
				Pwned   bool
				Title   string
				Markup  int
				Text    string
				JSLinks int
			}
			eval(t, `({Pwned: window.__pwned !== undefined, Title: document.title,
				Markup: document.querySelectorAll("main script, main iframe, main svg, main style, main img:not(figure.file img), main [onerror], main [onload], main [onmouseover]").length,
				JSLinks: [...document.querySelectorAll("a[href]")].filter(a => !/^(https?|mailto):$/.test(a.protocol)).length,
				Text: document.querySelector("main").innerText})`, &r)
			if r.Pwned || r.Title == "pwned" {
				t.Errorf("a script ran: window.__pwned set %v, title %q", r.Pwned, r.Title)
			}
			if r.Markup != 0 || r.JSLinks != 0 {
				t.Errorf("%d elements from the session's markup, %d links that are not http(s) or mailto", r.Markup, r.JSLinks)
			}
			want := "<script>alert(1)</script>"
			if id == hostileID {
				want = "<script>window.__pwned=1;document.title='pwned'</script>"
			}
			if !strings.Contains(r.Text, want) {
				t.Errorf("the page does not show %q as text", want)
			}
			for _, p := range c.problems(0) {
				if strings.Contains(p, "Content Security Policy") {
					t.Errorf("the policy had to block something: %s", p)
				}
			}
			png, _ := c.screenshot()
			os.WriteFile(filepath.Join(shots, "hostile-"+id[:8]+"-open.png"), png, 0o644)
		})
	}
}
