package claude

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"testing/iotest"
)

// FuzzTopLevelKeys checks the detection's scan of a first object against
// encoding/json: for any input that starts with a JSON object, it finds
// that object's keys, however the reads split it.
func FuzzTopLevelKeys(f *testing.F) {
	for _, s := range []string{
		`{"type":"user","message":{"content":"x"}}` + "\n{}",
		`{"timestamp":"t","type":"session_meta","payload":{"id":"x"}}`,
		` {"a\"b":1,"c":[{"type":1}],"ty\u0070e":"}","payload":null}`,
		`{"a":"\\","type":"\\\"{"}`,
		`[1,2]`, ``, `   `, `{"type"`, `{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, split := range []bool{false, true} {
			var r = bytes.NewReader(data)
			var got map[string]bool
			var ok, empty bool
			if split {
				got, ok, empty = topLevelKeys(iotest.OneByteReader(r))
			} else {
				got, ok, empty = topLevelKeys(r)
			}
			if empty != (len(data) == 0) {
				t.Fatalf("empty %v for %d bytes", empty, len(data))
			}
			dec := json.NewDecoder(bytes.NewReader(data))
			var obj map[string]json.RawMessage
			if dec.Decode(&obj) != nil || obj == nil {
				continue // not an object: the scan may say anything but empty
			}
			want := map[string]bool{}
			for k := range obj {
				want[k] = true
			}
			if !ok || !maps.Equal(got, want) {
				t.Fatalf("%q (split %v): keys %v, ok %v; want %v", data, split, got, ok, want)
			}
		}
	})
}

// TestIsTranscript: detection by the first entry, whatever its length.
func TestIsTranscript(t *testing.T) {
	dir := t.TempDir()
	long := bytes.Repeat([]byte("x"), 100<<10)
	for name, c := range map[string]struct {
		data []byte
		want bool
	}{
		"empty.jsonl":    {nil, true},
		"empty.txt":      {nil, false},
		"entry.jsonl":    {[]byte(`{"type":"user","uuid":"u"}` + "\n"), true},
		"long.jsonl":     {append(append([]byte(`{"message":"`), long...), `","type":"user"}`+"\n"...), true},
		"rollout.jsonl":  {[]byte(`{"timestamp":"t","type":"session_meta","payload":{}}` + "\n"), false},
		"notype.jsonl":   {[]byte(`{"uuid":"u"}` + "\n"), false},
		"array.jsonl":    {[]byte(`[{"type":"user"}]` + "\n"), false},
		"binary.jsonl":   {[]byte{0x89, 'P', 'N', 'G', 0, 1}, false},
		"nested.jsonl":   {[]byte(`{"message":{"type":"x"}}` + "\n"), false},
		"escaped.jsonl":  {[]byte(`{"\u0074ype":"user"}` + "\n"), true},
		"keyinstr.jsonl": {[]byte(`{"uuid":"\",\"type\":1"}` + "\n"), false},
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, c.data, 0o600); err != nil {
			t.Fatal(err)
		}
		if got := isTranscript(p); got != c.want {
			t.Errorf("%s: isTranscript %v, want %v", name, got, c.want)
		}
	}
	if _, err := readsAsTranscript(filepath.Join(dir, "missing.jsonl")); err == nil {
		t.Error("a missing file reads as a transcript or not, without an error")
	}
}
