package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/vbauerster/mpb/v8"
)

// ansi matches the escape sequences the bar uses between frames.
var ansi = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)

// TestProgressWidth draws the bar on a fake terminal of several widths:
// no line is ever as wide as the terminal (so none wraps), and the bar
// shows the count of documents, the rate and the time left.
func TestProgressWidth(t *testing.T) {
	for _, width := range []int{200, 80, 40, 12} {
		var out bytes.Buffer
		refresh := make(chan any)
		p := drawProgress(&out, 30, func() (int, error) { return width, nil }, mpb.WithManualRefresh(refresh))
		for i := 0; i < 29; i++ {
			p.add(1, 1)
			refresh <- struct{}{}
		}
		p.add(1, 1)
		p.done()
		frames := 0
		for _, line := range strings.Split(ansi.ReplaceAllString(out.String(), "\n"), "\n") {
			if line == "" {
				continue
			}
			frames++
			if n := utf8.RuneCountInString(line); n >= width {
				t.Errorf("width %d: a line of %d columns: %q", width, n, line)
			}
			if width >= 80 && !regexp.MustCompile(`^\d+/30 documents .*\d+\.\d/s ETA \S+$`).MatchString(line) {
				t.Errorf("width %d: the bar %q lacks its count, rate or time left", width, line)
			}
		}
		if frames == 0 {
			t.Errorf("width %d: no frame drawn", width)
		}
		if !strings.HasSuffix(out.String(), "\x1b[J") && !strings.HasSuffix(out.String(), "\n") {
			t.Errorf("width %d: the output ends in %q", width, out.String()[max(0, out.Len()-20):])
		}
	}
}

// TestProgressCounts: the bar counts documents, as the summary does, and
// a session that fails early (one document where it planned three) takes
// its sidechains off the total.
func TestProgressCounts(t *testing.T) {
	var out bytes.Buffer
	p := drawProgress(&out, 6, func() (int, error) { return 80, nil })
	p.add(1, 3)
	p.add(1, 1)
	p.add(2, 2)
	p.done()
	if p.want != 4 || p.bar.Current() != 4 || !p.bar.Completed() {
		t.Errorf("after 4 documents of 6 planned, 2 of them dropped: total %d, current %d, completed %v", p.want, p.bar.Current(), p.bar.Completed())
	}
}

// TestProgressNotTerminal: nothing is drawn where stderr is not a
// terminal, and the methods are safe to call.
func TestProgressNotTerminal(t *testing.T) {
	var out bytes.Buffer
	p := newProgress(&out, 10)
	p.add(3, 3)
	p.done()
	if out.Len() != 0 {
		t.Errorf("drew %q on a buffer", out.String())
	}
}
