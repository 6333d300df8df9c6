package claude

import (
	"encoding/json"
	"strings"
	"testing"

	_ "github.com/scribe-archive/scribe/internal/testenv" // understands -update (go test ./... -update)
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
