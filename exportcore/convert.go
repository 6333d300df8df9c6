package exportcore

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"

	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/session"
)

// Convert runs a conversion of d, whose source client src names, into w:
// run writes through bw what the target makes of the conversation its
// source client resumes (Resume), and adds to losses, which holds what
// reading that conversation lost already.
func Convert(d *inscribe.Doc, src Source, w io.Writer, run func(c *Conversation, bw *bufio.Writer, losses *Losses) error) (*Losses, error) {
	c, err := Resume(d, src)
	if err != nil {
		return nil, err
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	losses := &Losses{}
	losses.Merge(&c.Losses)
	if err := run(c, bw, losses); err != nil {
		return nil, err
	}
	if err := bw.Flush(); err != nil {
		return nil, err
	}
	return losses, nil
}

// WriteConversion writes what convert writes of d into dir, as the file
// the target client names name(head) (WriteFile: an existing identical
// file is left alone, a different one is an error unless opts.Force). A
// sidechain is refused: its session is what converts.
func WriteConversion(d *inscribe.Doc, dir string, name func(*session.Meta) string, opts Options, convert func(io.Writer) (*Losses, error)) (File, *Losses, *session.Meta, error) {
	meta, err := d.Meta()
	if err != nil {
		return File{}, nil, nil, err
	}
	if meta.SidechainOf != nil {
		return File{}, nil, meta, fmt.Errorf("%s is a sidechain: export its session, %s", d.Path(), meta.SidechainOf.SessionID)
	}
	var losses *Losses
	f, _, err := WriteFile(filepath.Join(dir, name(meta)), opts, func(w io.Writer) ([]error, error) {
		var err error
		losses, err = convert(w)
		return nil, err
	})
	return f, losses, meta, err
}
