package lifecycle

import (
	"slices"

	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
)

// ItemNodes returns the nodes of the document's items in document order:
// those of earlier runs (the graph's), of the rounds this builder closed,
// then those of open (the open round's nodes), each identity once.
func (c *Context) ItemNodes(open []source.Node) []source.Node {
	items, _ := c.itemNodes(open)
	return items
}

// itemNodes is ItemNodes, and how many of the items are of closed rounds
// (they come first).
func (c *Context) itemNodes(open []source.Node) (items []source.Node, closed int) {
	if c.graph != nil {
		items = append(items, c.graph.Items()...)
	}
	seen := make(map[string]bool, len(items))
	for _, n := range items {
		seen[n.UUID] = true
	}
	for i, list := range [][]source.Node{c.kept, open} {
		if i == 1 {
			closed = len(items)
		}
		for _, n := range list {
			if n.IsItem() && !seen[n.UUID] {
				seen[n.UUID] = true
				items = append(items, n)
			}
		}
	}
	return items, closed
}

// Branches returns the fork points of the document's item graph (see
// [Context.ItemNodes]), in the order the second child of each appeared,
// and for each which child leads to leaf, the live item.
//
// A run whose items only continue one another from the last item of the
// earlier runs, leaf the last of them (every turn appended to a session
// that forked once), has the fork points of the earlier runs, which the
// builder's state keeps (forks): it reads none of the earlier runs' nodes
// but to look up its own identities. Any other run reads them all, and
// keeps the fork points of its closed rounds for the next.
func (c *Context) Branches(open []source.Node, leaf string) []session.Branch {
	if f := c.pos.Forks; f != nil && c.rec != nil {
		if tip, ok := c.continues(f, open); ok && tip == leaf {
			return f.branches()
		}
	}
	items, closed := c.itemNodes(open)
	c.pos.Forks = nil
	if c.rec != nil {
		// A builder whose graph records the nodes (an update's) keeps them
		// for the next run; a build of a whole session for an export or a
		// check keeps no state.
		c.pos.Forks = forksOf(items[:closed])
	}
	return branchesOf(items, leaf)
}

// branchesOf is Branches of items, in document order.
func branchesOf(items []source.Node, leaf string) []session.Branch {
	parent := make(map[string]string, len(items))
	children := make(map[string][]string)
	var order []string
	for _, n := range items {
		parent[n.UUID] = n.Parent
		if n.Parent == "" {
			continue
		}
		if len(children[n.Parent]) == 1 {
			order = append(order, n.Parent)
		}
		children[n.Parent] = append(children[n.Parent], n.UUID)
	}
	live := make(map[string]bool)
	for u, steps := leaf, 0; u != "" && !live[u] && steps <= len(items); u, steps = parent[u], steps+1 {
		live[u] = true
	}
	var out []session.Branch
	for _, at := range order {
		br := session.Branch{At: at, Children: children[at]}
		for _, c := range br.Children {
			if live[c] {
				br.Live = c
			}
		}
		out = append(out, br)
	}
	return out
}

// forks is what the builder's state keeps of the item graph of the closed
// rounds, so that a run that only continues it need not read it again
// ([Context.Branches]): Tip, the last item, which no item names as its
// parent; At, the fork points, each with the child that leads to Tip; and
// Dangling, the parents items name that are not items of the closed
// rounds (not in the transcript, or not yet, or not as an item), any of
// which an item may yet become. No state is kept where it would be large
// (a graph of many forks reads faster than its state would), nor where
// the last item has no identity.
type forks struct {
	Tip      string   `json:"tip,omitempty"`
	At       []fork   `json:"at,omitempty"`
	Dangling []string `json:"dangling,omitempty"`
}

// fork is a session.Branch in the builder's state.
type fork struct {
	At       string   `json:"at"`
	Children []string `json:"children"`
	Live     string   `json:"live,omitempty"`
}

// forksMax bounds the identities a state names: its fork points, their
// children and its dangling parents.
const forksMax = 256

// forksOf is the state of the closed rounds' items (in document order,
// each identity once), or nil where none is kept.
func forksOf(items []source.Node) *forks {
	f := &forks{}
	if len(items) == 0 {
		return f
	}
	if f.Tip = items[len(items)-1].UUID; f.Tip == "" {
		return nil // an item of no identity: what continues it is a root
	}
	isItem := make(map[string]bool, len(items))
	for _, n := range items {
		isItem[n.UUID] = true
	}
	for _, n := range items {
		switch {
		case n.Parent == f.Tip:
			return nil // an item continuing Tip would fork it
		case n.Parent != "" && !isItem[n.Parent] && !slices.Contains(f.Dangling, n.Parent):
			if len(f.Dangling) == forksMax {
				return nil
			}
			f.Dangling = append(f.Dangling, n.Parent)
		}
	}
	named := len(f.Dangling)
	for _, b := range branchesOf(items, f.Tip) {
		if named += 1 + len(b.Children); named > forksMax {
			return nil
		}
		f.At = append(f.At, fork(b))
	}
	return f
}

func (f *forks) branches() []session.Branch {
	var out []session.Branch
	for _, b := range f.At {
		out = append(out, session.Branch{At: b.At, Children: slices.Clone(b.Children), Live: b.Live})
	}
	return out
}

// continues reports whether the items among nodes continue one another
// from f's Tip, and returns the last: each names the one before it as its
// parent, and is a new identity (not none), which neither a node recorded
// before (an earlier run's, or a closed round's of this run) nor an item
// of the closed rounds as its parent (Dangling) names, so that the graph
// stays the same but for a longer last branch.
func (c *Context) continues(f *forks, nodes []source.Node) (tip string, ok bool) {
	tip = f.Tip
	var mine map[string]bool // nodes' items, which may repeat one another
	for _, n := range nodes {
		if !n.IsItem() {
			continue
		}
		if n.UUID == "" || n.Parent != tip || mine[n.UUID] || slices.Contains(f.Dangling, n.UUID) {
			return "", false
		}
		if _, found := c.Lookup(n.UUID); found {
			return "", false
		}
		if mine == nil {
			mine = make(map[string]bool)
		}
		mine[n.UUID] = true
		tip = n.UUID
	}
	return tip, true
}

// follow brings the state's forks up to date with a closed round's nodes
// (before they are recorded), or drops them (nil) where the round does not
// only continue the last branch: the next Branches reads the graph again.
func (c *Context) follow(nodes []source.Node) {
	f := c.pos.Forks
	if f == nil {
		return
	}
	if !slices.ContainsFunc(nodes, source.Node.IsItem) {
		return
	}
	tip, ok := "", false
	if c.rec != nil {
		tip, ok = c.continues(f, nodes)
	}
	if !ok {
		c.pos.Forks = nil
		return
	}
	f.Tip = tip
}
