package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/inscribe/views"
)

// Every command that takes a SESSION resolves it here, through the store
// (inscribe.Store.Resolve): a document's path (.md), a session id, or a
// unique prefix of one, git-style. This file turns what the store answers
// into what a person reads.

// findDocument resolves a SESSION to a document. A path needs no store.
func findDocument(e *env, ref string) (*inscribe.Doc, error) {
	if strings.HasSuffix(ref, ".md") {
		if store, err := e.openExistingStore(); err == nil {
			return store.Resolve(ref)
		}
		return inscribe.OpenDoc(ref)
	}
	_, d, err := openDocument(e, ref)
	return d, err
}

// openDocument opens the store and resolves a SESSION in it.
func openDocument(e *env, ref string) (*views.Views, *inscribe.Doc, error) {
	if !strings.HasSuffix(ref, ".md") && !inscribe.ValidSessionID(ref) {
		return nil, nil, fmt.Errorf("%q is neither a session id (%s) nor a document (.md)", ref, inscribe.SessionIDRule)
	}
	store, err := e.openExistingStore()
	if err != nil {
		return nil, nil, err
	}
	d, err := store.Resolve(ref)
	if err != nil {
		return nil, nil, resolveError(err)
	}
	return store, d, nil
}

// resolveError says what to do about a SESSION the store does not answer
// to.
func resolveError(err error) error {
	var nf *inscribe.NotFoundError
	var am *inscribe.AmbiguousError
	switch {
	case errors.As(err, &nf):
		return withHint(err, "scribe list shows the sessions in the store; give the store with --root, or the document's path")
	case errors.As(err, &am):
		hints := []string{"give more of the id; it may be any of:"}
		const shown = 10
		for i, m := range am.Matches {
			if i == shown {
				hints = append(hints, fmt.Sprintf("  ... and %d more", len(am.Matches)-shown))
				break
			}
			hints = append(hints, fmt.Sprintf("  %s  %s", m.ID, m.Doc.Path()))
		}
		return withHint(err, hints...)
	}
	return err
}

// completeSession completes a SESSION argument (the first) with the ids of
// the store's documents, for the shell completion cobra generates.
func completeSession(e *env) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		if strings.ContainsAny(toComplete, `/\.`) {
			return nil, cobra.ShellCompDirectiveDefault // a document's path
		}
		store, err := e.openExistingStore()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		docs, _ := store.Docs()
		var ids []string
		for _, d := range docs {
			if id := d.SessionID(); strings.HasPrefix(id, toComplete) {
				ids = append(ids, id)
			}
		}
		return ids, cobra.ShellCompDirectiveNoFileComp
	}
}
