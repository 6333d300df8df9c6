package views

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCatalogKeptRows: an agent's catalog is written from the rows kept
// the last time for the documents that did not change since (issue 33),
// and comes out as from every document's head: after a title is set, a
// document is removed, and whatever the kept rows hold when they do not
// read. check --store (VerifyStore) reads every head.
func TestCatalogKeptRows(t *testing.T) {
	s := claudeStore(t)
	defer s.CloseIndex()
	const agent = "claude"
	fromHeads := func() []byte {
		t.Helper()
		want, _, _, err := s.agentIndex(agent, false)
		if err != nil {
			t.Fatal(err)
		}
		return want
	}
	same := func(what string) {
		t.Helper()
		if err := s.RefreshIndexes(); err != nil {
			t.Fatal(err)
		}
		got, err := s.Catalog(agent)
		if err != nil {
			t.Fatal(err)
		}
		if want := fromHeads(); !bytes.Equal(got, want) {
			t.Errorf("%s: the catalog is not the one every head gives:\n%s\nwant\n%s", what, got, want)
		}
	}

	docs, err := s.AgentDocs(agent)
	if err != nil || len(docs) < 3 {
		t.Fatalf("%d documents, %v", len(docs), err)
	}
	kept := readKeptRows(s.CatalogRows(agent))
	if len(kept) != len(docs) {
		t.Fatalf("%d rows kept of %d documents", len(kept), len(docs))
	}

	// The kept rows are what the catalog is written from: a row changed
	// there shows, and check, which reads the heads, says the catalog is
	// not the documents'.
	id := docs[0].SessionID()
	data := s.CatalogRows(agent)
	k := kept[id]
	k.row.Title = "kept, not read"
	var b []byte
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if strings.HasPrefix(line, `"`+id+`"`) {
			line = string(appendKeptRow(nil, id, k.mtime, k.size, k.row))
		}
		b = append(b, line...)
	}
	if err := s.SetCatalogRows(agent, b); err != nil {
		t.Fatal(err)
	}
	if err := s.RefreshIndexes(); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Catalog(agent); !bytes.Contains(got, []byte("kept, not read")) {
		t.Errorf("the kept row is not what the catalog shows:\n%s", got)
	}
	if errs := s.VerifyStore(); !strings.Contains(strings.Join(errString(errs), "\n"), s.CatalogName(agent)) {
		t.Errorf("check does not notice the catalog: %v", errs)
	}

	// A document changed since: its row is read again.
	if _, err := s.SetTitle(docs[0].Path(), "A title set since"); err != nil {
		t.Fatal(err)
	}
	same("a title set")
	if got, _ := s.Catalog(agent); !bytes.Contains(got, []byte("A title set since")) {
		t.Errorf("the new title is not in the catalog:\n%s", got)
	}

	// A document removed: no row.
	gone := docs[1].Path()
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(strings.TrimSuffix(gone, ".md")); err != nil {
		t.Fatal(err)
	}
	same("a document removed")
	if got, _ := s.Catalog(agent); bytes.Contains(got, []byte(docs[1].SessionID())) {
		t.Errorf("a removed document is listed")
	}

	// Kept rows that do not read, or of another header, are not used.
	for _, bad := range []string{
		"",
		"scribe catalog rows 0\n" + string(s.CatalogRows(agent)[len(keptHeader):]),
		keptHeader + "\"x\"\t1\n\"" + docs[2].SessionID() + "\"\tnot a time\t1\t\"\"\t\"\"\t\"\"\t\"\"\t\"\"\n",
		string(s.CatalogRows(agent)[:len(s.CatalogRows(agent))/2]),
	} {
		if err := os.WriteFile(filepath.Join(s.Root, ".scribe", ".catalog-rows-"+agent+".tsv"), []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		same("kept rows that do not read")
	}
}

func errString(errs []error) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}
