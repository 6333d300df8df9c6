package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/scribe-archive/scribe/check"
	"github.com/scribe-archive/scribe/exportclaude"
	"github.com/scribe-archive/scribe/exportcore"
	"github.com/scribe-archive/scribe/inscribe"
)

// checkConversions checks the conversion of each session o names to the
// client o.to.
func checkConversions(e *env, o checkOptions) ([]*check.Report, error) {
	var target *format
	var names []string
	for _, f := range formats {
		if f.convert == nil {
			continue
		}
		names = append(names, f.adapter.Agent())
		if f.adapter.Agent() == o.to {
			target = f
		}
	}
	if target == nil {
		list := names[len(names)-1]
		if len(names) > 1 {
			list = strings.Join(names[:len(names)-1], ", ") + " or " + list
		}
		return nil, &flagError{fmt.Errorf("--to %s: scribe converts sessions to %s", o.to, list)}
	}
	if len(o.sources) == 0 {
		return nil, &flagError{fmt.Errorf("--to %s: name the sessions to check (session ids, documents or sources)", o.to)}
	}
	var reports []*check.Report
	for _, ref := range o.sources {
		mds, cleanup, err := conversionDocs(e, ref)
		defer cleanup()
		if err != nil {
			return nil, err
		}
		for _, nd := range mds {
			d := nd.doc
			m, err := d.Meta()
			if err != nil {
				return nil, err
			}
			from, err := formatOf(m)
			if err != nil {
				return nil, err
			}
			if from == target {
				return nil, withHint(fmt.Errorf("session %s is a %s session already: there is nothing to convert", m.SessionID, target.client),
					"scribe check checks its round trip", "--to names the other client")
			}
			rep, err := check.Cross(d, from.source(), target.crossFormat(from))
			if err != nil {
				return nil, err
			}
			rep.Source = nd.name
			reports = append(reports, rep)
		}
	}
	return reports, nil
}

// namedDoc is a document to check, and the name its report goes by (the
// document, or the source it was inscribed from).
type namedDoc struct {
	doc  *inscribe.Doc
	name string
}

// conversionDocs resolves what check --to names: a document, a session id
// in the store, or a source of sessions, inscribed into a scratch store.
func conversionDocs(e *env, ref string) ([]namedDoc, func(), error) {
	none := func() {}
	if strings.HasSuffix(ref, ".md") || isStoreRef(ref) {
		if _, err := os.Stat(ref); err != nil || strings.HasSuffix(ref, ".md") {
			d, err := findDocument(e, ref)
			if err != nil {
				return nil, none, err
			}
			return []namedDoc{{d, d.Path()}}, none, nil
		}
	}
	ts, skipped, err := discover(ref)
	for _, sk := range skipped {
		fmt.Fprintf(e.stderr, "scribe: warning: %v\n", sk)
	}
	if err != nil {
		return nil, none, describeOpenError(ref, err)
	}
	tmp, err := os.MkdirTemp("", "scribe-check-")
	if err != nil {
		return nil, none, err
	}
	cleanup := func() { os.RemoveAll(tmp) }
	store, err := inscribe.OpenStore(filepath.Join(tmp, "data"))
	if err != nil {
		return nil, cleanup, err
	}
	store.Formats = adapters()
	var mds []namedDoc
	for _, t := range ts {
		for _, r := range store.Update(t, inscribe.Options{Agent: t.Adapter.Agent()}) {
			if r.Err != nil {
				return nil, cleanup, r.Err
			}
		}
		if d, ok := store.Find(t.ID); ok && t.Path != "" {
			mds = append(mds, namedDoc{d, t.Path})
		}
	}
	return mds, cleanup, nil
}

// isStoreRef reports whether ref can be a session id.
func isStoreRef(ref string) bool {
	return ref != "" && ref != "." && ref != ".." && !strings.ContainsAny(ref, `/\`)
}

// crossFormat is f as package check takes it for a conversion to f from
// the format from.
func (f *format) crossFormat(from *format) check.CrossFormat {
	return check.CrossFormat{Name: f.adapter.Agent(), Target: f.adapter, Convert: func(d *inscribe.Doc, dir string) (*exportclaude.Losses, error) {
		_, losses, err := f.convertSession(d, from.source(), dir, false)
		return losses, err
	}}
}

// lossLine is a known loss of a conversion, as check prints it.
func lossLine(f check.Finding) string {
	l := exportcore.Loss{Kind: exportcore.LossKind(f.Kind), What: f.What, Count: f.Count, Unit: f.Unit, Detail: f.Detail, Why: f.Msg}
	return l.String()
}
