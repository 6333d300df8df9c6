package lifecycle

import (
	"github.com/scribe-archive/scribe/session"
	"github.com/scribe-archive/scribe/session/source"
)

// ItemNodes returns the nodes of the document's items in document order:
// those of earlier runs (the graph's), of the rounds this builder closed,
// then those of open (the open round's nodes), each identity once.
func (c *Context) ItemNodes(open []source.Node) []source.Node {
	var items []source.Node
	if c.graph != nil {
		items = append(items, c.graph.Items()...)
	}
	seen := make(map[string]bool, len(items))
	for _, n := range items {
		seen[n.UUID] = true
	}
	for _, list := range [][]source.Node{c.kept, open} {
		for _, n := range list {
			if n.IsItem() && !seen[n.UUID] {
				seen[n.UUID] = true
				items = append(items, n)
			}
		}
	}
	return items
}

// Branches returns the fork points of the document's item graph (see
// [Context.ItemNodes]), in the order the second child of each appeared,
// and for each which child leads to leaf, the live item.
func (c *Context) Branches(open []source.Node, leaf string) []session.Branch {
	items := c.ItemNodes(open)
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
