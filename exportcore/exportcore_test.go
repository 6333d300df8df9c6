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

// TestReceived: a unit the target does not send is a problem unless a
// reported loss of its kind accounts for it, each loss for as many units
// as it counts; a text a compaction keeps may be held in the target's
// summary.
func TestReceived(t *testing.T) {
	want := []Unit{{Kind: "user", Text: "earlier", Kept: true}, {Kind: "user", Text: "hi"}, {Kind: "image", Text: "image/png"},
		{Kind: "call", Name: "exec", Input: `{"cmd":"ls"}`}, {Kind: "result", Parts: []string{"a"}}, {Kind: "assistant", Text: "ok"}}
	got := []Unit{{Kind: "user", Text: "Summary.\n\nThe user said:\n\nearlier"}, {Kind: "user", Text: "hi"},
		{Kind: "call", Name: "exec", Input: `{ "cmd": "ls" }`}, {Kind: "result", Parts: []string{"a"}}, {Kind: "assistant", Text: "ok\n"}}
	var none Losses
	if p := Received(want, got, &none, "Codex", "claude"); len(p) != 1 || !strings.Contains(p[0], "image") {
		t.Errorf("the dropped image, not reported: %v", p)
	}
	var l Losses
	l.Add(Dropped, WhatFile, 1, "files", "")
	if p := Received(want, got, &l, "Codex", "claude"); len(p) != 0 {
		t.Errorf("a reported loss not accounted for: %v", p)
	}
	if p := Received(want, got[1:], &l, "Codex", "claude"); len(p) != 1 || !strings.Contains(p[0], "earlier") {
		t.Errorf("a prompt dropped silently is not found: %v", p)
	}
	l.Add(Dropped, WhatThinking, 1, "blocks", "")
	if p := Received(want, got[:3], &l, "Codex", "claude"); len(p) != 2 {
		t.Errorf("a lost result and reply, with a loss of another kind reported, give %v", p)
	}
}
