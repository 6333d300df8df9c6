package jsonpatch

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestStrings(t *testing.T) {
	line := []byte(`{"a":"x\ny","b":[1,"two",{"c":"\u00e9\ud83d\ude00"}],"skip":{"d":"no"},"e.f":"dot","n":null}`)
	var got []string
	err := Strings(line, func(p []string) bool { return p[len(p)-1] == "skip" }, func(v StringValue) {
		got = append(got, strings.Join(v.Path, ".")+"="+DecodeString(line[v.Start:v.End]))
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a=x\ny", "b.1=two", "b.2.c=é😀", "e.f=dot"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestDecodeStringAgreesWithJSON(t *testing.T) {
	for _, q := range []string{`"plain"`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u0041\u00e9\u20ac"`, `"\ud83d\ude00"`, `"\ud83d x"`, `"\ude00"`, "\"caf\xc3\xa9\"", "\"bad\xff\""} {
		var want string
		if err := json.Unmarshal([]byte(q), &want); err != nil {
			t.Fatal(q, err)
		}
		if got := DecodeString([]byte(q)); got != want {
			t.Errorf("DecodeString(%s) = %q, want %q", q, got, want)
		}
	}
}

func TestStringsMalformed(t *testing.T) {
	if err := Strings([]byte(`{"a":"x"`), nil, func(StringValue) {}); err == nil {
		t.Error("no error for a truncated object")
	}
}
