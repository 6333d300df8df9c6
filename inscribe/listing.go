package inscribe

import "github.com/scribe-archive/scribe/session"

// ReadTitle reads a document's frontmatter and the title lists show for it
// (DisplayTitle: its title, else its first prompt), reading no more of the
// file than its head: listing a store costs the same whatever the size of
// its sessions.
func ReadTitle(md string) (*session.Meta, string, error) {
	od, err := readOldDoc(md)
	if err != nil {
		return nil, "", err
	}
	return od.meta, DisplayTitle(od.meta, od.summary), nil
}
