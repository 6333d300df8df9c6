package main

import (
	"fmt"

	"github.com/scribe-archive/scribe/inscribe"
)

// A session whose own transcript was never found has no document, but its
// subagents' transcripts may have been inscribed into its folder
// (inscribe.Store.Lone). export-claude and check --store take its id,
// exactly, or the path of one of those documents.

// findSession resolves a SESSION as findDocument does, and else to a
// session that has only sidechain documents: its Doc does not exist then.
func findSession(e *env, ref string) (*inscribe.Doc, error) {
	d, err := findDocument(e, ref)
	if err == nil {
		return d, nil
	}
	if !inscribe.ValidSessionID(ref) {
		return nil, err
	}
	store, serr := e.openExistingStore()
	if serr != nil {
		return nil, err
	}
	if d, ok := store.Lone(ref); ok {
		return d, nil
	}
	return nil, err
}

// loneError is the transcript of a session that has no document asked
// for alone.
func loneError(d *inscribe.Doc) error {
	return withHint(fmt.Errorf("session %s has no document: only its subagents' transcripts were inscribed (its own was not found)", d.SessionID()),
		"export them into a directory: --out DIR")
}
