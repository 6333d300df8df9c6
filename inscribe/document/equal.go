package document

import (
	"reflect"

	"github.com/scribe-archive/scribe/session"
)

// Equal reports whether two documents are the same document: what the
// markdown holds. File contents travel beside the document, not in it, and an
// empty list is the same as no list.
func Equal(a, b *session.Document) bool {
	return reflect.DeepEqual(normalize(a), normalize(b))
}

func normalize(d *session.Document) *session.Document {
	c := *d
	m := c.Meta
	if len(m.Sidechains) == 0 {
		m.Sidechains = nil
	}
	if len(m.Branches) == 0 {
		m.Branches = nil
	}
	if len(m.Engagements) == 0 {
		m.Engagements = nil
	}
	c.Meta = m
	c.Items = make([]session.Item, len(d.Items))
	for i, it := range d.Items {
		it.Blocks = normalizeBlocks(it.Blocks)
		if len(it.IDs) == 0 {
			it.IDs = nil
		}
		c.Items[i] = it
	}
	if len(c.Items) == 0 {
		c.Items = nil
	}
	return &c
}

func normalizeBlocks(bs []session.Block) []session.Block {
	if len(bs) == 0 {
		return nil
	}
	out := make([]session.Block, len(bs))
	for i, b := range bs {
		b.Origin = nil
		if b.File != nil {
			f := *b.File
			f.Data = nil
			b.File = &f
		}
		if b.Result != nil {
			r := *b.Result
			r.Parts = normalizeParts(r.Parts)
			b.Result = &r
		}
		out[i] = b
	}
	return out
}

func normalizeParts(ps []session.Part) []session.Part {
	if len(ps) == 0 {
		return nil
	}
	out := make([]session.Part, len(ps))
	for i, p := range ps {
		p.Origin = nil
		if p.File != nil {
			f := *p.File
			f.Data = nil
			p.File = &f
		}
		out[i] = p
	}
	return out
}
