package exportcore

import (
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/session"
)

func TestID(t *testing.T) {
	a := ID("11111111-1111-4111-8111-111111111111", "entry", 3)
	if a != ID("11111111-1111-4111-8111-111111111111", "entry", 3) {
		t.Error("ID is not deterministic")
	}
	if a == ID("11111111-1111-4111-8111-111111111111", "entry", 4) || a == ID("22222222-2222-4222-8222-222222222222", "entry", 3) {
		t.Error("ID does not depend on its session and name")
	}
	if !IsUUID(a) || a[14] != '5' || !strings.ContainsAny(a[19:20], "89ab") {
		t.Errorf("ID %s is not a version 5 UUID", a)
	}
	if !IsUUID(ID("not-a-uuid", "x")) {
		t.Error("ID of a session id that is not a UUID is not a UUID")
	}
}

func item(role string, blocks ...session.Block) session.Item {
	return session.Item{Role: role, IDs: []string{role}, Blocks: blocks}
}

func TestLiveBranch(t *testing.T) {
	items := []session.Item{
		{IDs: []string{"a"}}, {IDs: []string{"b"}}, {IDs: []string{"c"}},
		{IDs: []string{"d"}, Parent: "a"}, {IDs: []string{"e"}},
	}
	var l Losses
	live := liveBranch(&session.Meta{Leaf: session.Ptr("e"), Branches: []session.Branch{{At: "a"}}}, items, &l)
	var ids []string
	for _, it := range live {
		ids = append(ids, it.IDs[0])
	}
	if strings.Join(ids, " ") != "a d e" {
		t.Errorf("live branch %v, want a d e", ids)
	}
	if l.Count(Dropped, WhatBranch) != 2 {
		t.Errorf("abandoned: %v", l.List())
	}
}

// TestReconcile: a difference no reported loss accounts for is found; a
// reported one is accounted for.
func TestReconcile(t *testing.T) {
	call := session.Block{Kind: session.KindToolUse, Label: "Bash", ID: "t1", Input: `{"command":"ls"}`,
		Result: &session.Result{Error: true, Parts: []session.Part{{Kind: session.KindText, Text: "boom"}}}}
	orig := []session.Item{
		item("user", session.Block{Kind: session.KindText, Text: "hi"}, session.Block{Kind: session.KindReminder, Label: "date", Text: "today"}),
		item("assistant", session.Block{Kind: session.KindThinking, Text: "hmm"}, session.Block{Kind: session.KindText, Text: "ok"}, call),
	}
	noFlag := call
	noFlag.Result = &session.Result{Parts: call.Result.Parts}
	back := []session.Item{
		item("user", session.Block{Kind: session.KindText, Text: "hi"}),
		item("assistant", session.Block{Kind: session.KindText, Text: "ok"}, noFlag),
	}
	var l Losses
	l.Add(Dropped, WhatThinking, 1, "blocks", "")
	l.Add(Dropped, WhatReminder, 1, "blocks", "")
	l.Add(Transformed, WhatErrorFlag, 1, "results", "")
	if p := Reconcile(orig, back, &l); len(p) != 0 {
		t.Errorf("reported losses not accounted for: %v", p)
	}
	cut := noFlag
	cut.Result = &session.Result{Parts: []session.Part{{Kind: session.KindText, Text: "bo"}}}
	back[1].Blocks[1] = cut
	if p := Reconcile(orig, back, &l); len(p) == 0 {
		t.Error("a cut result is not found")
	}
	back[1].Blocks = back[1].Blocks[:1]
	if p := Reconcile(orig, back, &l); len(p) == 0 {
		t.Error("a lost call is not found")
	}
	var none Losses
	if p := Reconcile(orig, orig[:1], &none); len(p) == 0 {
		t.Error("a lost reply is not found")
	}
}
