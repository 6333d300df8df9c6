package redact

import (
	"strings"

	"github.com/scribe-archive/scribe/internal/jsonpatch"
)

func locateForTest(line []byte, path string) (int, int, error) {
	return jsonpatch.Locate(line, strings.Split(path, "."))
}
