package main

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"
)

// progress draws a progress bar of an update on a terminal, and nothing
// elsewhere. It counts documents, as the summary after it does, and shows
// the rate and the time left; it is as wide as the terminal at each redraw
// and never wider, so it never wraps. It is gone when the update is done.
type progress struct {
	p    *mpb.Progress
	bar  *mpb.Bar
	want int64 // the bar's total
}

// newProgress returns the progress of an update of total documents, drawn
// on w when w is a terminal and there is more than one document.
func newProgress(w io.Writer, total int) *progress {
	f, ok := w.(*os.File)
	if !ok || total < 2 || !term.IsTerminal(int(f.Fd())) {
		return &progress{}
	}
	return drawProgress(w, total, func() (int, error) {
		width, _, err := term.GetSize(int(f.Fd()))
		return width, err
	})
}

// drawProgress draws the progress on w, a terminal as wide as width says.
func drawProgress(w io.Writer, total int, width func() (int, error), opts ...mpb.ContainerOption) *progress {
	opts = append([]mpb.ContainerOption{mpb.WithConsoleWriter(&terminal{out: w, width: width})}, opts...)
	p := mpb.New(opts...)
	bar := p.AddBar(int64(total),
		mpb.PrependDecorators(decor.CountersNoUnit("%d/%d documents", decor.WCSyncSpaceR)),
		mpb.AppendDecorators(
			decor.AverageSpeed(0, "%.1f/s", decor.WCSyncSpace),
			decor.Name(" ETA "),
			decor.AverageETA(decor.ET_STYLE_GO),
		),
		mpb.BarRemoveOnComplete(),
	)
	return &progress{p: p, bar: bar, want: int64(total)}
}

// add counts n documents done, of an update that had planned for planned
// (a session that fails early is one failed document, not one per
// sidechain): the bar's total follows, to end where the summary's count
// does.
func (p *progress) add(n, planned int) {
	if p.bar == nil {
		return
	}
	if n != planned {
		p.want += int64(n - planned)
		p.bar.SetTotal(p.want, false)
		p.bar.EnableTriggerComplete() // complete at the new total
	}
	p.bar.IncrBy(n)
}

// done removes the bar. An update stopped before the end (an interrupt)
// leaves the bar short of its total: it is taken down all the same.
func (p *progress) done() {
	if p.p == nil {
		return
	}
	if !p.bar.Completed() {
		p.bar.Abort(true)
	}
	p.p.Wait()
}

// terminal is mpb's console writer over a terminal whose width a function
// says (golang.org/x/term's, or a test's). Each frame overwrites the one
// before: the cursor goes back up over it and clears to the end of the
// screen.
type terminal struct {
	bytes.Buffer
	out   io.Writer
	width func() (int, error)
}

func (t *terminal) IsTerminal() bool { return true }

// GetTermSize leaves the last column free: a line that fills the width
// exactly wraps on some terminals. A terminal that cannot tell its width
// is taken to be 80 columns wide.
func (t *terminal) GetTermSize() (int, int, error) {
	w, err := t.width()
	if err != nil || w <= 0 {
		w = 80
	}
	return max(w-1, 1), 24, nil
}

func (t *terminal) Flush(lines int) error {
	if _, err := t.WriteTo(t.out); err != nil {
		return err
	}
	if lines > 0 {
		fmt.Fprintf(&t.Buffer, "\x1b[%dA\x1b[J", lines) // written before the next frame
	}
	return nil
}
