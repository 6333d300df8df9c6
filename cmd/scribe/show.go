package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/inscribe/document"
)

type showOptions struct {
	path, raw, utc, noPager bool
	detail                  string
}

func newShowCmd(e *env) *cobra.Command {
	var o showOptions
	cmd := &cobra.Command{
		Use:   "show SESSION",
		Short: "Read a session in the terminal (or print its document, or its path)",
		Long: `show prints a session for reading: its title and what it is, then each
round and each message under its time and role. A tool call is one line,
and the thinking, the system reminders the model saw and entries shown as
recorded are folded into one line each; --detail full unfolds them (a
call's input and its result), --detail prompts shows the prompts alone.
Times are in your time zone (TZ chooses it), or in UTC with --utc.
SESSION is a session id, a unique prefix of one, or a document's path.

On a terminal the view goes through your pager, as git's output does:
$SCRIBE_PAGER, else $PAGER, else less (with LESS=FRX unless LESS is set);
a pager of "" or cat, or --no-pager, writes to the terminal.

--raw prints the document as it is stored (markdown with YAML frontmatter,
scribe's identities and markers included), byte for byte; --path prints
its path. With --json it prints the session as list --json does, one
object:
  {"session_id", "agent_id", "title", "project", "started", "ended",
   "messages", "path"}`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeSession(e),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runShow(e, args[0], o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.path, "path", false, "print the document's path, not the session")
	f.BoolVar(&o.raw, "raw", false, "print the document as it is stored, byte for byte")
	f.StringVar(&o.detail, "detail", "conversation", "how much to show: conversation, full or prompts")
	f.BoolVar(&o.utc, "utc", false, "show times in UTC, not in your time zone")
	f.BoolVar(&o.noPager, "no-pager", false, "write to the terminal, not through a pager")
	f.BoolVar(&e.json, "json", false, "print the session as JSON")
	cmd.RegisterFlagCompletionFunc("detail", cobra.FixedCompletions(document.Details, cobra.ShellCompDirectiveNoFileComp))
	cmd.MarkFlagsMutuallyExclusive("path", "raw", "json")
	return cmd
}

func runShow(e *env, ref string, o showOptions) error {
	d, err := document.ParseDetail(o.detail)
	if err != nil {
		return &flagError{fmt.Errorf("--detail: %w", err)}
	}
	doc, err := findDocument(e, ref)
	if err != nil {
		return err
	}
	switch {
	case e.json:
		en, err := readEntry(doc)
		if err != nil {
			return err
		}
		return writeJSON(e.stdout, en)
	case o.path:
		_, err := fmt.Fprintln(e.stdout, doc.Path())
		return err
	}
	p := e.startPager(o.noPager)
	if o.raw {
		return p.finish(copyDoc(p, doc))
	}
	return p.finish(readDocument(p, doc, d, zone(o.utc)))
}

// copyDoc writes a document to w as it is stored.
func copyDoc(w io.Writer, doc *inscribe.Doc) error {
	f, err := doc.Open()
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

// readDocument writes the reading view of a document, a message at a
// time: a long session is never whole in memory.
func readDocument(w io.Writer, doc *inscribe.Doc, d document.Detail, z *time.Location) error {
	rd, err := doc.Items()
	if err != nil {
		return withHint(err, "scribe show --raw prints the document as it is")
	}
	defer rd.Close()
	view := document.NewReading(w, d, z)
	if err := view.Head(rd.Meta, rd.Summary); err != nil {
		return err
	}
	for {
		it, err := rd.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return withHint(err, "scribe show --raw prints the document as it is")
		}
		if err := view.Item(it); err != nil {
			return err
		}
	}
}
