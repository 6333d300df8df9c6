package claude

import "github.com/scribe-archive/scribe/internal/jsonpatch"

// locate returns the byte span of the value at path in data.
func locate(data []byte, path []string) (int, int, error) { return jsonpatch.Locate(data, path) }
