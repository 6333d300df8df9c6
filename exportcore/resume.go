package exportcore

import (
	"bufio"
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
//
// The source file is written to a temporary file before it is read, and
// the document's items are read for their links alone, so that a long
// message is held by one of them at a time: writing it back holds it
// twice (the round files' text and the document's), and so does reading
// it (the line and its text).
func Resume(d *inscribe.Doc, src Source) (*Conversation, error) {
	if src.Resumer == nil || src.Transcript == nil {
		return Live(d)
	}
	c, err := liveSession(d, true)
	if err != nil {
		return nil, err
	}
	live := func(err error) (*Conversation, error) {
		// The document's own reading still carries its conversation.
		full, lerr := Live(d)
		if lerr != nil {
			return nil, lerr
		}
		c.Items = full.Items
		c.Losses.Note(Transformed, WhatSourceFile, err.Error(),
			"the source file could not be written back from the store: the conversion carries the live conversation as the document shows it, not as the source client would resend it")
		return c, nil
	}
	f, err := transcript(d, src, &c.Losses)
	if err != nil {
		if _, spooled := err.(*spoolError); spooled {
			return nil, err
		}
		return live(err)
	}
	defer f.Close()
	// The file itself: a reader of lines finds a long line's length in it
	// before reading it (source.LineReader).
	r, err := src.Resumer.Resume(f.File, func(id string) (io.ReadCloser, error) {
		od, ok := d.Sibling(id)
		if !ok {
			return nil, os.ErrNotExist
		}
		t, err := transcript(od, src, nil)
		if err != nil {
			return nil, err
		}
		return t, nil
	})
	if err != nil {
		return live(err)
	}
	for _, id := range r.Missing {
		c.Losses.Note(Dropped, WhatForkHistory, "forked from "+id,
			"the document of the session it was forked from is not beside this one: the history it shares with it is not carried")
	}
	c.Items = r.Items
	return c, nil
}

// transcript writes the source file of d to a temporary file, removed when
// it is closed, and returns it to read from its start; the edits it could
// not carry are counted in losses. An error writing the temporary file
// itself is a *spoolError.
func transcript(d *inscribe.Doc, src Source, losses *Losses) (*tempFile, error) {
	f, err := os.CreateTemp("", "scribe-transcript-*.jsonl")
	if err != nil {
		return nil, &spoolError{err}
	}
	t := &tempFile{f}
	bw := bufio.NewWriterSize(f, 1<<16)
	warnings, err := src.Transcript(d, bw)
	if losses != nil {
		for _, w := range warnings {
			losses.AddDetail(Dropped, WhatEdit, w.Error(), "edits",
				"an edit of the document that the source's format cannot hold is not carried (scribe export says so too)")
		}
	}
	if err != nil {
		t.Close()
		return nil, err
	}
	if err := bw.Flush(); err != nil {
		t.Close()
		return nil, &spoolError{err}
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Close()
		return nil, &spoolError{err}
	}
	return t, nil
}

// spoolError is a failure to write or read the temporary file a
// transcript is written to: not the store's.
type spoolError struct{ err error }

func (e *spoolError) Error() string {
	return "write the source file back to a temporary file: " + e.err.Error()
}
func (e *spoolError) Unwrap() error { return e.err }

// tempFile is a temporary file, removed when closed.
type tempFile struct{ *os.File }

func (t *tempFile) Close() error {
	err := t.File.Close()
	os.Remove(t.Name())
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
