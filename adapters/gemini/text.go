package gemini

import (
	"strings"

	"github.com/scribe-archive/scribe/internal/jsonpatch"
	"github.com/scribe-archive/scribe/session/source"
)

var _ source.TextFinder = (*Adapter)(nil)

// TextFields returns the text fields of a session file's line: every
// string value of the record except those that identify, time, type or
// encode something (ids of messages, calls and sessions, hashes,
// timestamps, types, models, statuses, media types, thought signatures,
// inline data's bytes). So a prompt, a reply, thinking, a call's arguments
// and result, the session context, a summary are text, and so is text in
// records of a kind scribe does not know yet. Object keys are never text.
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
	case "id", "$rewindTo", "type", "kind", "timestamp", "startTime", "lastUpdated", "model", "status",
		"mimeType", "data", "thoughtSignature", "projectHash":
		return true
	}
	for _, suffix := range []string{"Id", "_id", "Hash", "Signature"} {
		if strings.HasSuffix(k, suffix) {
			return true
		}
	}
	return false
}

// isText reports whether a string value that is not an identity is text.
func isText(s string) bool { return s != "" }
