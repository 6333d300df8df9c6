package main

import (
	"errors"
	"fmt"

	"github.com/scribe-archive/scribe/exportclaude"
	"github.com/scribe-archive/scribe/exportcore"
	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/session"
)

// runConvert writes a session inscribed from the format from as the target
// client's file, and summarises on stderr what it could not carry.
func runConvert(e *env, o exportOptions, d *inscribe.Doc, m *session.Meta, from, target *format) error {
	if target.convert == nil {
		return fmt.Errorf("session %s was inscribed from %s, which scribe does not convert to %s yet", m.SessionID, from.adapter.Format(), target.client)
	}
	if o.out == "-" {
		if e.json {
			return &flagError{errors.New("--out - writes the conversion to stdout: it cannot also be a --json report")}
		}
		losses, err := target.convert(d, from.source(), e.stdout)
		if err == nil {
			printLosses(e, m, from, target, losses)
		}
		return err
	}
	dir, err := exportDir(o, target, m)
	if err != nil {
		return err
	}
	files, losses, err := target.convertSession(d, from.source(), dir, o.force)
	recordExports(e, d, files)
	if e.json {
		rep := exportJSON{Files: []exportFileJSON{}, Warnings: []string{}, Losses: []exportcore.Loss{}}
		for _, f := range files {
			rep.Files = append(rep.Files, exportFileJSON{Path: f.Path, Written: f.Written})
		}
		if losses != nil {
			rep.Losses = append(rep.Losses, losses.List()...)
		}
		if werr := writeJSON(e.stdout, rep); err == nil {
			err = werr
		}
	} else {
		for _, f := range files {
			verb := "unchanged"
			if f.Written {
				verb = "wrote"
			}
			fmt.Fprintf(e.stdout, "%-10s %s\n", verb, f.Path)
		}
		if err == nil {
			printLosses(e, m, from, target, losses)
		}
	}
	var ee *exportclaude.ExistsError
	if errors.As(err, &ee) {
		return withHint(err, "use --force to replace it, or --out to write elsewhere")
	}
	return err
}

// printLosses summarises on stderr what a conversion could not carry, one
// line per kind of loss.
func printLosses(e *env, m *session.Meta, from, target *format, losses *exportclaude.Losses) {
	list := losses.List()
	fmt.Fprintf(e.stderr, "scribe: %s: session %s converted from %s to %s", target.command, m.SessionID, from.client, target.client)
	if len(list) == 0 {
		fmt.Fprintf(e.stderr, "; everything carried\n")
		return
	}
	fmt.Fprintf(e.stderr, "; not carried as it was (scribe check --to %s %s says why):\n", target.adapter.Agent(), m.SessionID)
	for _, l := range list {
		l.Why = ""
		fmt.Fprintf(e.stderr, "scribe:   %s\n", l)
	}
}
