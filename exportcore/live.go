package exportcore

import (
	"fmt"
	"io"
	"slices"

	"github.com/scribe-archive/scribe/inscribe"
	"github.com/scribe-archive/scribe/session"
)

// Conversation is the live conversation of a document: the items a client
// resuming the session continues, in order, read from the markdown (which
// is the authority for content: a person's edits are in them), with what
// the document holds beyond them.
type Conversation struct {
	Doc  *inscribe.Doc // the document
	Meta *session.Meta
	// Items are the live branch, root first: from the leaf (frontmatter
	// leaf) back through each item's parent (the item above it, unless it
	// names another). An inherited history (a fork's) comes first.
	Items []session.Item
	// Losses lists what the document holds outside the live branch:
	// abandoned branches, subagent transcripts, files the client kept
	// beside the session, the source lines it does not show.
	Losses Losses
}

// Live reads the live conversation of a session document. A sidechain
// document is not a session of its own: Live refuses it.
//
// A fork (forked_from) that does not hold the history it shares with its
// origin (its first item is not in the origin) inherits it: the origin's
// live items from before the fork's first one come first, read from the
// origin's document beside it in the store.
func Live(d *inscribe.Doc) (*Conversation, error) { return liveSession(d, false) }

// liveSession is Live; with links, without the items' blocks: what the
// items' links and times say (the live branch, the losses, a fork's
// inherited history).
func liveSession(d *inscribe.Doc, links bool) (*Conversation, error) {
	c, err := live(d, 0, links)
	if err != nil {
		return nil, err
	}
	if c.Meta.SidechainOf != nil {
		return nil, fmt.Errorf("%s is a sidechain: export its session, %s", d.Path(), c.Meta.SidechainOf.SessionID)
	}
	return c, nil
}

// live reads a document's live conversation; links drops the items'
// blocks as they are read.
func live(d *inscribe.Doc, depth int, links bool) (*Conversation, error) {
	r, err := d.Items()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	c := &Conversation{Doc: d, Meta: r.Meta}
	var all []session.Item
	for {
		it, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if links {
			it.Blocks = nil
		}
		all = append(all, *it)
	}
	c.Items = liveBranch(c.Meta, all, &c.Losses)
	if err := c.outside(); err != nil {
		return nil, err
	}
	if err := c.inherit(depth, links); err != nil {
		return nil, err
	}
	return c, nil
}

// liveBranch returns the items on the path from the leaf to the root, in
// order, and counts the others as abandoned.
func liveBranch(m *session.Meta, all []session.Item, losses *Losses) []session.Item {
	if len(all) == 0 {
		return nil
	}
	index := make(map[string]int, len(all))
	for i, it := range all {
		if len(it.IDs) > 0 {
			if _, dup := index[it.IDs[0]]; !dup {
				index[it.IDs[0]] = i
			}
		}
	}
	parent := func(i int) int {
		it := &all[i]
		switch {
		case it.Parent == "root" || it.ParentMissing:
			return -1
		case it.Parent != "":
			if p, ok := index[it.Parent]; ok && p != i {
				return p
			}
			return -1
		}
		return i - 1
	}
	leaf := len(all) - 1
	if m.Leaf != nil {
		if i, ok := index[*m.Leaf]; ok {
			leaf = i
		}
	}
	on := make([]bool, len(all))
	n := 0
	for i := leaf; i >= 0 && !on[i]; i = parent(i) {
		on[i] = true
		n++
	}
	out := make([]session.Item, 0, n)
	abandoned := 0
	for i := range all {
		if on[i] {
			out = append(out, all[i])
		} else {
			abandoned++
		}
	}
	if abandoned > 0 {
		why := "a rewind left them off the live branch; the export carries the live branch only (frontmatter leaf and branches), and the document keeps them"
		if len(m.Branches) == 0 {
			why = "they are not on the path from the live leaf to its root; the export carries that path only, and the document keeps them"
		}
		losses.Add(Dropped, WhatBranch, abandoned, "messages", why)
	}
	return out
}

// outside counts what the document's folder holds that no export carries:
// subagent transcripts and the files the client kept beside the session.
func (c *Conversation) outside() error {
	subs, err := c.Doc.Sidechains()
	if err != nil {
		return err
	}
	for _, sc := range subs {
		m, err := sc.Meta()
		if err != nil {
			return err
		}
		if m.SidechainOf == nil {
			continue
		}
		c.Losses.AddDetail(Dropped, WhatSubagent, fmt.Sprintf("agent-%s: %d messages", m.SidechainOf.AgentID, m.Messages), "",
			"a subagent's transcript is a conversation of its own, which the target cannot attach to a call; its call and final report are carried, and the transcript stays in the store")
	}
	kept, err := c.Doc.SourceFiles()
	if err != nil {
		return err
	}
	for _, rel := range kept {
		c.Losses.AddDetail(Dropped, WhatSideFiles, rel, "files",
			"files the source client kept beside the session (a large tool output in full); the results carried refer to them by their path, and the store keeps them")
	}
	lines := 0
	if n, _ := c.Doc.RoundCount(); n > 0 {
		if last, err := c.Doc.RoundHeader(n); err == nil {
			lines = last.Lines[1]
		}
	}
	if lines > 0 {
		c.Losses.Note(Dropped, WhatBookkeeping, fmt.Sprintf("what only the source's %d lines hold", lines),
			"the conversion carries what the source client sends its model on resume; the source's lines stay in the round files, and what only they hold beyond it is not carried: the client's bookkeeping (token counts, events, settings), encrypted reasoning, identities and exact bytes")
	}
	return nil
}

// inherit puts, before a fork's items, the history it shares with its
// origin when it does not hold it itself.
func (c *Conversation) inherit(depth int, links bool) error {
	if c.Meta.ForkedFrom == nil || len(c.Items) == 0 || depth > 16 {
		return nil
	}
	origin := *c.Meta.ForkedFrom
	od, ok := c.Doc.Sibling(origin)
	if !ok {
		c.Losses.Note(Dropped, WhatForkHistory, "forked from "+origin,
			"the document of the session it was forked from is not beside this one: when the fork does not hold the history it shares with it, that history is not carried")
		return nil
	}
	oc, err := live(od, depth+1, links)
	if err != nil {
		return err
	}
	c.Losses.Add(Transformed, WhatFork, 1, "",
		fmt.Sprintf("forked from %s: the conversion holds the whole conversation, the history the fork shares with it included, and is not linked to it", origin))
	first := c.Items[0]
	for _, it := range oc.Items {
		if it.Time == first.Time && slices.Equal(it.IDs, first.IDs) {
			return nil // the fork holds its history
		}
	}
	var prefix []session.Item
	for _, it := range oc.Items {
		if it.Time != "" && it.Time < first.Time {
			prefix = append(prefix, it)
		}
	}
	c.Items = append(prefix, c.Items...)
	return nil
}

// Order is the order a conversion writes items in: their own, but for a
// compaction that kept a segment of the conversation before it verbatim
// (Claude Code's preserved segment, from its head on), which goes before
// that segment: a target that sends what follows a compaction (Codex,
// Gemini CLI) then continues from the summary and the segment, as Claude
// Code's model did.
func Order(items []session.Item) []int {
	out := make([]int, 0, len(items))
	at := map[string]int{} // entry identity -> position in out
	for i, it := range items {
		var c *session.Compaction
		for _, b := range it.Blocks {
			if b.Kind == session.KindCompaction && b.Compaction != nil {
				c = b.Compaction
			}
		}
		if c != nil && c.Head != "" {
			if h, ok := at[c.Head]; ok {
				out = append(out[:h], append([]int{i}, out[h:]...)...)
				for k, p := range at {
					if p >= h {
						at[k] = p + 1
					}
				}
				continue
			}
		}
		for _, id := range it.IDs {
			at[id] = len(out)
		}
		out = append(out, i)
	}
	return out
}
