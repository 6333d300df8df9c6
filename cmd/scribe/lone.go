package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/inscribe/document"
	"github.com/scribe-archive/scribe/inscribe/views"
	"github.com/scribe-archive/scribe/session"
)

// A session whose own transcript was never found has no document, but its
// subagents' transcripts may have been inscribed into its folder
// (inscribe.Store.LoneSidechains). export-claude and check --store take its id,
// exactly, or the path of one of those documents.

// findSession resolves a SESSION as findDocument does, and else to a
// session that has only sidechain documents: md is then the path its
// document would have, which does not exist.
func findSession(e *env, ref string) (md string, err error) {
	md, err = findDocument(e, ref)
	if err == nil {
		return md, nil
	}
	if !inscribe.ValidSessionID(ref) {
		return "", err
	}
	store, serr := e.openExistingStore()
	if serr != nil {
		return "", err
	}
	if p, ok := loneSession(store, ref); ok {
		return p, nil
	}
	return "", err
}

// loneSession finds the folder of session id that holds sidechain
// documents without the session's own, and returns the path the session's
// document would have.
func loneSession(store *views.Views, id string) (string, bool) {
	ms, _ := filepath.Glob(filepath.Join(store.SessionsDir(), "*", id))
	for _, folder := range ms {
		md := folder + ".md"
		if _, err := os.Stat(md); err == nil || !inscribe.ValidAgentID(filepath.Base(filepath.Dir(folder))) {
			continue
		}
		if len(inscribe.FiledSidechains(md)) > 0 {
			return md, true
		}
	}
	return "", false
}

// sessionMeta reads the frontmatter of a session's document or, for a
// session that has only sidechain documents, of its first sidechain's.
func sessionMeta(md string) (*session.Meta, error) {
	m, err := document.ReadMeta(md)
	if !errors.Is(err, os.ErrNotExist) {
		return m, err
	}
	for _, sc := range inscribe.FiledSidechains(md) {
		return document.ReadMeta(filepath.Join(filepath.Dir(md), filepath.FromSlash(sc.Path)))
	}
	return nil, err
}

// loneError is the transcript of a session that has no document asked
// for alone.
func loneError(md string) error {
	return withHint(fmt.Errorf("session %s has no document: only its subagents' transcripts were inscribed (its own was not found)", filepath.Base(inscribe.Folder(md))),
		"export them into a directory: --out DIR")
}
