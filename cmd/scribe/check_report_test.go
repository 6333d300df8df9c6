package main

import (
	"bytes"
	"testing"

	"github.com/scribe-archive/scribe/check"
)

// check prints its reports as they come (a check of 10,000 sessions holds
// none of them, issue 14); the list it prints with --json is the one
// writeJSON would print whole.
func TestReportsPrintedAsTheyCome(t *testing.T) {
	all := []*check.Report{
		{Source: "a.jsonl", Doc: "nowhere/a.md"},
		{Source: "b.jsonl", Findings: []check.Finding{{Kind: check.Transformed, File: "b.jsonl", Line: 3, Field: "x.y", Diff: "-<a>\n+&b\n", Msg: "differs"}}},
		{Doc: "c.md", Findings: []check.Finding{{Kind: check.Torn, File: "c.jsonl", Line: 9, Msg: "torn"}}},
	}
	for n := 0; n <= len(all); n++ {
		var got, want bytes.Buffer
		err := printReports(&env{stdout: &got}, all[:n], true)
		out := make([]check.Report, n)
		for i, r := range all[:n] {
			out[i] = *r
			if out[i].Findings == nil {
				out[i].Findings = []check.Finding{}
			}
			out[i].Doc = ""
		}
		writeJSON(&want, out)
		if got.String() != want.String() {
			t.Errorf("%d reports: printed\n%s\nwant\n%s", n, got.String(), want.String())
		}
		if wantErr := n >= 2; (err != nil) != wantErr {
			t.Errorf("%d reports: status %v", n, err)
		}
	}
}
