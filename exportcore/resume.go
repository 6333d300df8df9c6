package exportcore

import (
	"io"
	"os"

	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
)

// Source is the format a document was inscribed from, as a conversion
// reads it: its source file, written back from the store with the
// document's edits carried (the same-format export), and what its client
// sends its model on resume, rebuilt from that file.
type Source struct {
	Transcript func(d *inscribe.Doc, w io.Writer) ([]error, error)
	Resumer    source.Resumer
}

// Resume reads the conversation a conversion carries: what the source
// client sends its model when it resumes the session (src.Resumer, over
// the source file as src.Transcript writes it back, a person's edits
// carried), with what the document holds outside it (Live's losses). A
// fork's origin is read from its document beside d. A source without a
// Resumer, or a document whose source file cannot be written back (a
// damaged store), is read as Live reads it, which the losses say.
func Resume(d *inscribe.Doc, src Source) (*Conversation, error) {
	c, err := Live(d)
	if err != nil {
		return nil, err
	}
	if src.Resumer == nil || src.Transcript == nil {
		return c, nil
	}
	rc := transcript(d, src, &c.Losses)
	defer rc.Close()
	r, err := src.Resumer.Resume(rc, func(id string) (io.ReadCloser, error) {
		od, ok := d.Sibling(id)
		if !ok {
			return nil, os.ErrNotExist
		}
		return transcript(od, src, nil), nil
	})
	if err != nil {
		// The document's own reading still carries its conversation.
		c.Losses.Note(Transformed, WhatSourceFile, err.Error(),
			"the source file could not be written back from the store: the conversion carries the live conversation as the document shows it, not as the source client would resend it")
		return c, nil
	}
	for _, id := range r.Missing {
		c.Losses.Note(Dropped, WhatForkHistory, "forked from "+id,
			"the document of the session it was forked from is not beside this one: the history it shares with it is not carried")
	}
	c.Items = r.Items
	return c, nil
}

// transcript streams the source file of d; the edits it could not carry
// are counted in losses. Closing it waits for the writer.
func transcript(d *inscribe.Doc, src Source, losses *Losses) io.ReadCloser {
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		warnings, err := src.Transcript(d, pw)
		if losses != nil {
			for _, w := range warnings {
				losses.AddDetail(Dropped, WhatEdit, w.Error(), "edits",
					"an edit of the document that the source's format cannot hold is not carried (scribe export says so too)")
			}
		}
		pw.CloseWithError(err)
	}()
	return &piped{pr, done}
}

// piped is the reading end of a transcript.
type piped struct {
	*io.PipeReader
	done chan struct{}
}

func (p *piped) Close() error {
	err := p.PipeReader.Close()
	<-p.done
	return err
}

// FileData is the bytes of a file of a conversation: those the item holds
// (a resumed conversation's, read from the source file), else the file
// the store keeps beside d.
func FileData(d *inscribe.Doc, f *session.File) ([]byte, error) {
	if f.Data != nil {
		return f.Data, nil
	}
	return d.ReadFile(f.Path)
}

// Repeated says why a result the source client sends again (the Gemini CLI
// sends a function response once per place its file holds it) is carried
// once.
const Repeated = "the source client sends this result again, where its file records it a second time; the target sends a call's result once, with its call"
