package codex

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// FuzzLent checks the decoders that leave raw values in the line against
// encoding/json decoding the wire types: the same values, the same
// errors, on any bytes (a line, a payload, a part, an array).
func FuzzLent(f *testing.F) {
	for _, s := range []string{
		`{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":"a\u00e9\ud83d\ude00\n"}}`,
		`{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}, {"type":"input_image","image_url":"data:x"} ]}}`,
		`{"type":"response_item","PAYLOAD":{"Type":"message","CONTENT":[1, "s",null,{"text":5}],"output":null},"payload":null}`,
		`{"type":"response_item","payload":{"type":"reasoning","summary":[{"type":"summary_text","text":"s"}],"content":[{"text":"a","text":null},{"text":"b","text":"c"}]}}`,
		`{"type":5,"payload":{}}`, `{"pay\u006coad":{"output":"x"}}`, `{"payload":{"output":"\ud800\x"}}`,
		`[{"text":"a"} , {"text":"\"b\\"}]`, `[]`, ` [ ] `, `[1,]`, `[1 2]`, `{"text":"x","type":["a"]}`,
		`{"a":1,}`, `null`, `"s"`, `{"text":"a\xffb"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var wantLine RolloutLine
		wantErr := json.Unmarshal(b, &wantLine)
		gotLine, err := decodeLine(b)
		same(t, "decodeLine", gotLine, err, wantLine, wantErr)

		var wantItem ResponseItem
		wantErr = json.Unmarshal(b, &wantItem)
		gotItem, err := decodeItem(b)
		same(t, "decodeItem", gotItem, err, wantItem, wantErr)

		var wantPart ContentItem
		json.Unmarshal(b, &wantPart)
		if got := decodePart(b); !reflect.DeepEqual(got, wantPart) {
			t.Errorf("decodePart(%s) = %s, encoding/json %s", b, show(got), show(wantPart))
		}

		// elements is given values of decoded lines: valid JSON.
		if json.Valid(b) {
			var want []json.RawMessage
			wantOK := json.Unmarshal(b, &want) == nil
			got, ok := elements(b)
			if ok != wantOK || ok && !reflect.DeepEqual(got, want) {
				t.Errorf("elements(%s) = %q %v, encoding/json %q %v", b, got, ok, want, wantOK)
			}
		}
	})
}

func same[T any](t *testing.T, name string, got T, err error, want T, wantErr error) {
	t.Helper()
	if fmt.Sprint(err) != fmt.Sprint(wantErr) {
		t.Fatalf("%s error %v, encoding/json %v", name, err, wantErr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%s = %s, encoding/json %s", name, show(got), show(want))
	}
}

func show(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestLentInLine: a long output is the line's own bytes in the item, not a
// copy, and its text is decoded once.
func TestLentInLine(t *testing.T) {
	text := strings.Repeat("words and more words\n", 1000)
	out, _ := json.Marshal(text)
	line := []byte(`{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":` + string(out) + `}}`)
	rec, err := decodeLine(line)
	if err != nil {
		t.Fatal(err)
	}
	it, err := decodeItem(rec.Payload)
	if err != nil {
		t.Fatal(err)
	}
	if !within(rec.Payload, line) || !within(it.Output, line) || !bytes.Equal(it.Output, out) {
		t.Fatalf("the output is not the line's bytes")
	}
}
