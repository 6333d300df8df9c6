package exportclaude

import (
	"os"
	"testing"

	"github.com/scribe-archive/scribe/exportcore"
)

// TestMain writes every text of a conversion through a long text's mark
// (exportcore.LongTexts), as a text of a megabyte or more is written: the
// goldens and the real clients judge the conversion written so. (The
// tests of cmd/scribe and check convert with texts written whole.)
func TestMain(m *testing.M) {
	exportcore.SetLongTextForTest(0)
	os.Exit(m.Run())
}
