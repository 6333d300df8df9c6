package exportcore

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/scribe-archive/scribe/session"
)

// FileBytes reads the bytes of a file a document shows (an image, a
// document), from the document's folder.
func FileBytes(md string, f *session.File) ([]byte, error) {
	rel := filepath.FromSlash(f.Path)
	if !filepath.IsLocal(rel) {
		return nil, fmt.Errorf("%s: the file %s is not inside the document's folder", md, f.Path)
	}
	return os.ReadFile(filepath.Join(filepath.Dir(md), rel))
}
