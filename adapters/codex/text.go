package codex

import (
	"strings"

	"github.com/scribe-archive/scribe/internal/jsonpatch"
	"github.com/scribe-archive/scribe/session/source"
)

var _ source.TextFinder = (*Adapter)(nil)

// TextFields returns the text fields of a rollout line: every string value
// of the record except those that identify, time, type or encode something
// (ids of items, calls, turns and threads, encrypted reasoning, hashes,
// timestamps, types and roles, models, versions, the working directory,
// images inlined as data: URLs). So a prompt, a reply, reasoning text, a
// call's arguments and output, instructions the model read, an image's
// file name are text, and so is text in record types scribe does not know
// yet. Object keys are never text.
func (a *Adapter) TextFields(line []byte) []source.TextField {
	if len(line) == 0 || line[0] != '{' {
		return nil
	}
	return jsonpatch.TextValues[source.TextField](line, notText, isText)
}

// notText reports whether the value at path is not text, by its key (or,
// for an array element, its array's key).
func notText(path []string) bool {
	k := jsonpatch.Key(path)
	switch k {
	case "id", "ids", "type", "role", "timestamp", "model", "cwd", "cli_version", "revision", "status",
		"model_provider", "model_provider_id", "originator", "effort", "summary_mode":
		return true
	}
	for _, suffix := range []string{"_id", "_ids", "Id", "_hash", "_digest", "signature"} {
		if strings.HasSuffix(k, suffix) {
			return true
		}
	}
	return strings.HasPrefix(k, "encrypted")
}

// isDataURL reports whether s is a data: URL holding base64 bytes (an
// image the client inlined).
func isDataURL(s string) bool {
	return strings.HasPrefix(s, "data:") && strings.Contains(s[:min(len(s), 200)], ";base64,")
}

// isText reports whether a string value that is not an identity is text:
// not empty, and not an inlined image.
func isText(s string) bool { return s != "" && !isDataURL(s) }
