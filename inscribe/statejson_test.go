package inscribe

import (
	"encoding/json"
	"reflect"
	"testing"
)

// noteSamples are read notes as writeState writes them.
func noteSamples(t testing.TB) [][]byte {
	n := int64(954)
	full := docState{Version: stateVersion, Source: "/tmp/p/00303c01-3980-4c31-826e-ff679c16ad71.jsonl", Size: 910256,
		TailHash: "5c06be59", Seen: 910256, OpenOffset: 786064, OpenLine: 201, ClosedHash: "c2hhAyvo8SUk+/wA=", ClosedTail: "f08a279b",
		OpenFirstID: "127eef30", DocOpenAt: 92242, DocTailHash: "d1503fe9",
		Builder:   json.RawMessage(`{"round":13,"recent":["4f99","7fd6"],"first_prompt":"a \"quoted\" {brace} [and] \\ slash","n":-1.5e3,"t":true,"z":null}`),
		DocFormat: "scribe/2", GraphSize: 8019, RoundsSize: &n, OpenRound: &roundSum{Round: 14, Size: 125457, SHA256: "b3867a6c"}}
	next := full
	next.Size, next.Seen = 920000, 920000
	pending := full
	pending.Next = &next
	none := docState{Version: stateVersion, None: true, Next: &next}
	old := docState{Version: stateVersion, Source: "é/ü.jsonl", Size: 10}
	var out [][]byte
	for _, st := range []docState{full, pending, none, old} {
		data, err := json.MarshalIndent(st, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, append(data, '\n'))
	}
	return out
}

// TestDecodeStateTakesWhatScribeWrites: the fast decoder reads the notes
// writeState writes, as encoding/json does.
func TestDecodeStateTakesWhatScribeWrites(t *testing.T) {
	for _, data := range noteSamples(t) {
		var got, want docState
		if !decodeState(data, &got) {
			t.Fatalf("not decoded:\n%s", data)
		}
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("decoded %+v, encoding/json %+v", got, want)
		}
	}
}

// FuzzDecodeState checks the fast decoder against encoding/json: whatever
// it accepts, encoding/json accepts and decodes the same.
func FuzzDecodeState(f *testing.F) {
	for _, data := range noteSamples(f) {
		f.Add(data)
	}
	for _, s := range []string{`{}`, `{"version":1,"VERSION":2}`, `{"size":1.0}`, `{"size":01}`, `{"source":"a\u00e9"}`,
		`{"builder":{"a":"}"} }`, `{"builder":"x"}`, `{"builder":[1,{"b":"\""}],"seen":2}`, `{"builder":}`, `{"builder":1 2}`,
		`{"next":{"next":{"next":{"next":{"next":{}}}}}}`, `{"open_round":{"round":1}} x`, `{"none":true,"none":false}`, `{"rounds_size":null}`,
		`{"next":{"size":1},"next":{"seen":2}}`, `{"open_round":{"round":1},"open_round":{"size":2}}`, `{"size":1 "seen":2}`, `{"size":1,}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got, want docState
		if !decodeState(data, &got) {
			return
		}
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("%q: decoded, but encoding/json fails: %v", data, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: decoded %+v, encoding/json %+v", data, got, want)
		}
	})
}
