package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/inscribe/document"
	"github.com/scribe-archive/scribe/inscribe/views"
)

// Every command that takes a SESSION resolves it here: a document's path
// (.md), a session id, or a unique prefix of one, git-style.

// minPrefix is the shortest id prefix a SESSION may be.
const minPrefix = 4

// findDocument resolves a SESSION to a document. A path needs no store.
func findDocument(e *env, ref string) (string, error) {
	if strings.HasSuffix(ref, ".md") {
		_, err := os.Stat(ref)
		return ref, err
	}
	_, md, err := openDocument(e, ref)
	return md, err
}

// openDocument opens the store and resolves a SESSION in it.
func openDocument(e *env, ref string) (*views.Views, string, error) {
	if strings.HasSuffix(ref, ".md") {
		store, err := e.openExistingStore()
		if err != nil {
			return nil, "", err
		}
		_, err = os.Stat(ref)
		return store, ref, err
	}
	if !inscribe.ValidSessionID(ref) {
		return nil, "", fmt.Errorf("%q is neither a session id (%s) nor a document (.md)", ref, inscribe.SessionIDRule)
	}
	store, err := e.openExistingStore()
	if err != nil {
		return nil, "", err
	}
	md, err := resolveSession(store, ref)
	if err != nil {
		return nil, "", err
	}
	return store, md, nil
}

// resolveSession finds the document of the session ref names: the document
// named ref, else the one whose session_id is ref (a document named after a
// copied transcript: orig.jsonl gave orig.md), else the one document whose
// name or session_id starts with ref.
func resolveSession(store *views.Views, ref string) (string, error) {
	if p, ok := store.FindDoc(ref); ok {
		return p, nil
	}
	docs, err := sessionDocs(store)
	if err != nil {
		return "", err
	}
	var exact, prefixed []docID
	for _, md := range docs {
		name := strings.TrimSuffix(filepath.Base(md), ".md")
		d := docID{md: md, id: name}
		if strings.HasPrefix(name, ref) {
			prefixed = append(prefixed, d)
			continue
		}
		id, err := readSessionID(md)
		if err != nil {
			continue // not a document (check reports it)
		}
		d.id = id
		switch {
		case id == ref:
			exact = append(exact, d)
		case strings.HasPrefix(id, ref):
			prefixed = append(prefixed, d)
		}
	}
	switch {
	case len(exact) == 1:
		return exact[0].md, nil
	case len(exact) > 1:
		return "", ambiguous(ref, exact)
	case len(prefixed) == 0:
		return "", withHint(&noSessionError{ref, store.SessionsDir()},
			"scribe list shows the sessions in the store; give the store with --root, or the document's path")
	case len(ref) < minPrefix:
		return "", fmt.Errorf("%q is too short to name a session: give at least %d characters of its id", ref, minPrefix)
	case len(prefixed) > 1:
		return "", ambiguous(ref, prefixed)
	}
	return prefixed[0].md, nil
}

// noSessionError is a SESSION that names no document of the store.
type noSessionError struct{ ref, dir string }

func (e *noSessionError) Error() string { return fmt.Sprintf("no session %s in %s", e.ref, e.dir) }

// docID is a document and the session id it answers to.
type docID struct{ md, id string }

func ambiguous(ref string, ds []docID) error {
	sort.Slice(ds, func(i, j int) bool { return ds[i].md < ds[j].md })
	hints := []string{"give more of the id; it may be any of:"}
	const shown = 10
	for i, d := range ds {
		if i == shown {
			hints = append(hints, fmt.Sprintf("  ... and %d more", len(ds)-shown))
			break
		}
		hints = append(hints, fmt.Sprintf("  %s  %s", d.id, d.md))
	}
	return withHint(fmt.Errorf("session %s is ambiguous: %d sessions match", ref, len(ds)), hints...)
}

// sessionDocs lists the store's session documents (sessions/<agent>/*.md,
// not the catalogs, not the sidechains), in order.
func sessionDocs(store *views.Views) ([]string, error) {
	ents, err := os.ReadDir(store.SessionsDir())
	if err != nil {
		return nil, err
	}
	var out []string
	for _, ent := range ents {
		if !ent.IsDir() || !inscribe.ValidAgentID(ent.Name()) {
			continue
		}
		mds, err := filepath.Glob(filepath.Join(store.SessionsDir(), ent.Name(), "*.md"))
		if err != nil {
			return nil, err
		}
		for _, md := range mds {
			if filepath.Base(md) != "index.md" { // the agent's catalog
				out = append(out, md)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// readSessionID reads a document's session_id, reading as little of it as
// it can: the frontmatter's session_id line when its value is a plain id,
// else the frontmatter.
func readSessionID(md string) (string, error) {
	f, err := os.Open(md)
	if err != nil {
		return "", err
	}
	defer f.Close()
	buf := make([]byte, 4<<10)
	n, err := io.ReadFull(f, buf)
	if err != nil && err != io.ErrUnexpectedEOF {
		return "", err
	}
	buf = buf[:n]
	if i := bytes.Index(buf, []byte("\nsession_id: ")); i >= 0 && bytes.HasPrefix(buf, []byte("---\n")) {
		line := buf[i+len("\nsession_id: "):]
		if nl := bytes.IndexByte(line, '\n'); nl >= 0 {
			v := strings.Trim(string(line[:nl]), `"' `)
			if inscribe.ValidSessionID(v) && !bytes.Contains(buf[:i], []byte("\n---\n")) {
				return v, nil
			}
		}
	}
	m, err := document.ReadMeta(md)
	if err != nil {
		return "", err
	}
	return m.SessionID, nil
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
		docs, _ := sessionDocs(store)
		var ids []string
		for _, md := range docs {
			if id := strings.TrimSuffix(filepath.Base(md), ".md"); strings.HasPrefix(id, toComplete) {
				ids = append(ids, id)
			}
		}
		return ids, cobra.ShellCompDirectiveNoFileComp
	}
}
