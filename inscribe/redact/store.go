package redact

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/scribe-archive/scribe/internal/jsonpatch"
	"github.com/scribe-archive/scribe/session/source"
)

// RedactLine is Line as the store uses it (inscribe.Redactor).
func (r *Redactor) RedactLine(line []byte, fields []source.TextField) ([]byte, bool) {
	out, reps := r.Line(line, fields)
	return out, len(reps) > 0
}

// RedactFile returns a file kept beside a session with its secrets
// replaced: a JSON value in its string values (keys aside), other UTF-8
// text as a whole. Other bytes are kept as they are.
func (r *Redactor) RedactFile(data []byte) ([]byte, bool) {
	out, reps := r.File(data)
	return out, len(reps) > 0
}

// File is RedactFile, with what was replaced.
func (r *Redactor) File(data []byte) ([]byte, []Replacement) {
	if !utf8.Valid(data) {
		return data, nil
	}
	if t := bytes.TrimSpace(data); len(t) > 0 && (t[0] == '{' || t[0] == '[') && json.Valid(t) {
		return r.Line(data, AllStrings(data))
	}
	out, reps := r.Text(string(data))
	if len(reps) == 0 {
		return data, nil
	}
	return []byte(out), reps
}

// AllStrings returns every string value of a JSON value as a text field.
func AllStrings(data []byte) []source.TextField {
	var out []source.TextField
	jsonpatch.Strings(data, nil, func(v jsonpatch.StringValue) {
		out = append(out, source.TextField{Path: strings.Join(v.Path, "."), Start: v.Start, End: v.End, Text: jsonpatch.DecodeString(data[v.Start:v.End])})
	})
	return out
}

// RedactName returns a file name with its secrets replaced by markers that
// can name a file on every system: REDACTED-<rule>-<hash>.
func (r *Redactor) RedactName(name string) string {
	out, reps := r.Text(name)
	if len(reps) == 0 {
		return name
	}
	return strings.NewReplacer("[", "", "]", "", ":", "-").Replace(out)
}
