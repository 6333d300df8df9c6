package claude

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/scribe-archive/scribe/internal/jsonpatch"
	_ "github.com/scribe-archive/scribe/internal/testkit/testenv" // understands -update (go test ./... -update)
)

// FuzzDecodeEntry checks the one-pass decoder against encoding/json: it
// accepts exactly the lines encoding/json accepts as objects, and decodes the
// same envelope.
func FuzzDecodeEntry(f *testing.F) {
	for _, s := range []string{
		`{"type":"user","uuid":"u","parentUuid":null,"message":{"role":"user","content":"hi"}}`,
		`{"type":"x","a":[1,2.5e-3,-0,true,false,null,{"b":"\u00e9\ud83d\ude00\n"}]}`,
		`{"type":"a\"b","timestamp":"t\\u"}`,
		`{}`, `{"type":}`, `[]`, `{"a":1,}`, `{"a":"\x01"}`, `{"a":01}`, `{"a":"\ud800"}`,
		` {"uuid" : "x" } `, `{"isMeta":true,"isSidechain":false}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		got, err := decodeEntry(line)
		var want Entry
		var obj map[string]json.RawMessage
		wantErr := json.Unmarshal(line, &obj)
		if wantErr == nil {
			wantErr = json.Unmarshal(line, &want)
		}
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("decodeEntry error %v, encoding/json error %v", err, wantErr)
		}
		if err != nil {
			return
		}
		for k := range obj {
			if _, exact := envelopeKeys[k]; !exact {
				for known := range envelopeKeys {
					if strings.EqualFold(k, known) {
						t.Skip("encoding/json matches keys case-insensitively; Claude Code's keys are exact, and so is scribe")
					}
				}
			}
		}
		a, _ := json.Marshal(got)
		b, _ := json.Marshal(&want)
		if string(a) != string(b) {
			t.Fatalf("decodeEntry:\n%s\nencoding/json:\n%s", a, b)
		}
	})
}

func TestPlain8(t *testing.T) {
	for _, c := range []byte{'"', '\\', 0, 0x1f} {
		for pos := 0; pos < 8; pos++ {
			b := []byte("abcdefgh")
			b[pos] = c
			x := uint64(0)
			for i := 7; i >= 0; i-- {
				x = x<<8 | uint64(b[i])
			}
			if plain8(x) {
				t.Errorf("plain8 missed %q at %d", c, pos)
			}
		}
	}
	if !plain8(0x6867666564636261) || !plain8(0xffe0c3a9807f2020) {
		t.Error("plain8 rejected plain bytes")
	}
}

// FuzzSkip checks the skipper of validated JSON (jsonpatch.ValueEnd)
// against the lexer: on any valid value, it ends where the lexer does; splitArray and
// objectSpans, which skip, agree with encoding/json on a line's parts.
func FuzzSkip(f *testing.F) {
	for _, s := range []string{
		`"a\"b\\"`, `"\\\\"`, `{"a":[1,"]",{"b":"}"}],"c":null}`, `[]`, `{}`, `-1.5e3`, `true`,
		`[1, 2 ,"x\\\"y" , {"k" : [ ] } ]`, `{"a":"\u0022"}`, `"é\n"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v := lexer{b: b}
		v.space()
		start := v.i
		if v.value(0) != nil {
			return
		}
		end := v.i
		if v.space(); v.i != len(b) {
			return // not one value: never a part of a valid line
		}
		v.i = end
		if end := jsonpatch.ValueEnd(b, start); end != v.i {
			t.Fatalf("ValueEnd ended at %d, the lexer at %d", end, v.i)
		}
		val := b[start:v.i]
		var any any
		if !utf8.Valid(val) || json.Unmarshal(val, &any) != nil {
			return // encoding/json replaces invalid UTF-8; otherwise it and the lexer agree (FuzzDecodeEntry)
		}
		switch val[0] {
		case '[':
			elems, err := splitArray(val)
			var want []json.RawMessage
			json.Unmarshal(val, &want)
			if err != nil || len(elems) != len(want) {
				t.Fatalf("splitArray: %d elements (%v), encoding/json %d", len(elems), err, len(want))
			}
			for i := range elems {
				if !bytes.Equal(bytes.TrimSpace(want[i]), elems[i]) {
					t.Fatalf("element %d: %s, encoding/json %s", i, elems[i], want[i])
				}
			}
		case '{':
			var want map[string]json.RawMessage
			json.Unmarshal(val, &want)
			keys := map[string]int{}
			for k := range want {
				if !strings.ContainsRune(k, '\\') {
					keys[k] = len(keys)
				}
			}
			out := make([]span, len(keys))
			if !objectSpans(val, keys, out) {
				t.Fatal("objectSpans failed on a valid object")
			}
			for k, i := range keys {
				if got := val[out[i].start:out[i].end]; strings.IndexByte(string(val), '\\') < 0 && !bytes.Equal(got, bytes.TrimSpace(want[k])) {
					t.Fatalf("key %q: %s, encoding/json %s", k, got, want[k])
				}
			}
		}
	})
}

// FuzzUsage checks decodeUsage against encoding/json.
func FuzzUsage(f *testing.F) {
	for _, s := range []string{
		`{"input_tokens":3,"output_tokens":5,"cache_creation_input_tokens":0,"cache_read_input_tokens":12,"service_tier":"standard"}`,
		`{"input_tokens":null}`, `{"input_tokens":1.5}`, `{"Input_Tokens":4}`, `{"input_tokens":"4"}`,
		`{"input_tokens":true,"input_tokens":4}`, `{"input_tokens":4,"input_tokens":5}`, `{"output_tokens":99999999999999999999}`,
		`{"cache_creation":{"ephemeral_5m_input_tokens":7,"input_tokens":1},"input_tokens":2}`, `{"input_tokens":-0}`, `{"ınput_tokens":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		l := lexer{b: b}
		l.space()
		if l.peek() != '{' || l.value(0) != nil || !utf8.Valid(b) {
			return
		}
		if l.space(); l.i != len(b) {
			return
		}
		var want Usage
		wantErr := json.Unmarshal(b, &want)
		got := decodeUsage(b)
		if (got != nil) != (wantErr == nil) {
			t.Fatalf("decodeUsage %+v, encoding/json error %v", got, wantErr)
		}
		if got != nil && *got != want {
			t.Fatalf("decodeUsage %+v, encoding/json %+v", *got, want)
		}
	})
}
