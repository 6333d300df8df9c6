package web_test

import (
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/scribe-archive/scribe/internal/testkit/storetest"
	"github.com/scribe-archive/scribe/serve/web"
)

// TestPagesFromPlaces: a server that reads a page, or finds a round's page,
// from the nearest page whose start it knows serves what a server that
// reads each document from its first message serves, whatever the order
// of the requests, and after the document changed.
func TestPagesFromPlaces(t *testing.T) {
	s, projects := storetest.Samples(t)
	ws := wire(t, s)
	opts := web.Options{PageItems: 3, Logf: t.Logf}
	kept := web.New(ws, opts)
	do := func(h *web.Server, p string) (int, string, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", p, nil))
		return rec.Code, rec.Header().Get("Location"), rec.Body.String()
	}
	same := func(p string) {
		t.Helper()
		c, l, b := do(kept, p)
		fc, fl, fb := do(web.New(ws, opts), p)
		if c != fc || l != fl || b != fb {
			t.Fatalf("%s: %d %q (%d bytes), read from the first message %d %q (%d bytes)", p, c, l, len(b), fc, fl, len(fb))
		}
	}
	long := "/s/" + longSession + "/" // 152 messages: 51 pages of 3
	for _, p := range []int{40, 51, 52, 2, 1, 45, 17, 51, 3} {
		same(long + pageName(p))
	}
	d, ok := s.Find(longSession)
	if !ok {
		t.Fatal("no document", longSession)
	}
	if n := web.PlacedPages(kept, d.Path()); n != 51 {
		t.Fatalf("the server knows where %d pages of %d start", n, 51)
	}
	for r := 80; r >= 0; r -= 3 {
		same(long + "round/" + strconv.Itoa(r))
	}
	same(long + "round/9999")

	// A round appended: the document changed, its pages are read anew.
	multi := "/s/" + multiSession + "/"
	for r := 1; r <= 11; r++ {
		same(multi + "round/" + strconv.Itoa(r))
	}
	same(multi + "page-7.html")
	appendEleventh(t, s, projects)
	for r := 11; r >= 1; r-- {
		same(multi + "round/" + strconv.Itoa(r))
	}
	for p := 8; p >= 1; p-- {
		same(multi + pageName(p))
	}
}

func pageName(p int) string {
	if p == 1 {
		return ""
	}
	return "page-" + strconv.Itoa(p) + ".html"
}
