package main

import (
	"encoding/json"
	"io"
)

// writeJSON writes a command's --json report: v, indented, on one
// document. Every report is one shape per command (see the README); a
// list that is empty is [], never null.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
