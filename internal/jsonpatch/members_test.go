package jsonpatch

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzMembers checks Members against encoding/json: an object that
// encoding/json reads is walked member by member, each value (of a key of
// valid UTF-8 without escapes, given once) the bytes encoding/json takes
// for it; valid JSON that is not one object is refused.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{`{}`, ` {"a": 1, "b" :"x\"y", "c":{"d":[1,{"e":null}]}} `, `{"a":1 "b":2}`, `{"a":1,}`,
		`{"a":1}x`, `[1]`, `{"a":}`, `{"a":"}"}`, `{"a":1}{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var keys []string
		var values [][]byte
		ok := Members(data, func(key []byte, start, end int) bool {
			keys = append(keys, string(key))
			values = append(values, data[start:end])
			return true
		})
		var obj map[string]json.RawMessage
		if json.Unmarshal(data, &obj) != nil || obj == nil {
			if ok && json.Valid(data) {
				t.Fatalf("%q: walked, but it is no object", data)
			}
			return
		}
		if !ok {
			t.Fatalf("%q: an object encoding/json reads was refused", data)
		}
		for _, k := range keys {
			if bytes.ContainsAny([]byte(k), "\\\"") || !utf8.ValidString(k) {
				return // a key Members gives as written, and encoding/json decodes
			}
		}
		if len(keys) != len(obj) {
			return // a key given twice
		}
		for i, k := range keys {
			if !bytes.Equal(values[i], obj[k]) {
				t.Fatalf("%q: member %s is %q, encoding/json takes %q", data, k, values[i], obj[k])
			}
		}
	})
}
