package jsonpatch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/quick"
	"unicode/utf8"
	"unsafe"
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

// DecodeInPlace gives what JSON gives, in the string's own bytes, for
// every string whose text fits there; it declines the others.
func TestDecodeInPlace(t *testing.T) {
	for _, q := range []string{`"plain"`, `""`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u0041\u00e9\u20ac"`, `"\ud83d\ude00"`, `"\ud83d x"`, `"\ude00"`, "\"caf\xc3\xa9\"", `"\u2028\u0000\\\\"`} {
		var want string
		if err := json.Unmarshal([]byte(q), &want); err != nil {
			t.Fatal(q, err)
		}
		b := []byte(q)
		got, ok := DecodeInPlace(b)
		if !ok || string(got) != want || len(got) > 0 && &got[0] != &b[1] {
			t.Errorf("DecodeInPlace(%s) = %q, %v, want %q in place", q, got, ok, want)
		}
	}
	for _, q := range []string{"\"bad\xff\"", `"\x"`, `"\u12"`, `"tail\"`, `"`, `x`} {
		b := []byte(q)
		if got, ok := DecodeInPlace(b); ok || string(b) != q {
			t.Errorf("DecodeInPlace(%s) = %q, %v; want it declined, the bytes left alone", q, got, ok)
		}
	}
}

func TestStringsMalformed(t *testing.T) {
	if err := Strings([]byte(`{"a":"x"`), nil, func(StringValue) {}); err == nil {
		t.Error("no error for a truncated object")
	}
}

// TextValues gives what Strings, DecodeString and JoinPath give, keys with
// escapes, invalid UTF-8 and long arrays included.
func TestTextValuesAgreesWithStrings(t *testing.T) {
	lines := []string{
		`{"a":"x\ny","b":[1,"two",{"c":"\u00e9\ud83d\ude00"}],"skip":{"d":"no"},"e.f":"dot","n":null}`,
		`{"k\u0065y":"v","q\"uote":["a","b","c","d","e","f","g","h","i","j","k","l",""]}`,
		"{\"bad\":\"x\xffy\",\"ok\":\"caf\xc3\xa9\",\"deep\":[[[\"z\"]]],\"skip\":\"s\"}",
		`{"a":"x"`,
		`"top"`,
	}
	f, g := viaStrings, viaTextValues
	for _, line := range lines {
		if want, got := f(line), g(line); got != want {
			t.Errorf("%s:\ngot  %s\nwant %s", line, got, want)
		}
	}
	if err := quick.Check(func(v map[string][]string) bool {
		line, _ := json.Marshal(v)
		return f(string(line)) == g(string(line))
	}, nil); err != nil {
		t.Error(err)
	}
}

// The text values of a line the two ways TestTextValuesAgreesWithStrings
// compares, one per line: path, start, end, text. Values under a key
// "skip" and empty texts are left out.
func viaStrings(line string) string {
	var b strings.Builder
	Strings([]byte(line), skipKey, func(v StringValue) {
		if len(v.Path) > 0 && skipKey(v.Path) {
			return
		}
		if text := DecodeString([]byte(line)[v.Start:v.End]); keepText(text) {
			fmt.Fprintf(&b, "%s %d %d %q\n", JoinPath(v.Path), v.Start, v.End, text)
		}
	})
	return b.String()
}

func viaTextValues(line string) string {
	var b strings.Builder
	for _, v := range TextValues[TextValue]([]byte(line), skipKey, keepText) {
		fmt.Fprintf(&b, "%s %d %d %q\n", v.Path, v.Start, v.End, v.Text)
	}
	return b.String()
}

func skipKey(p []string) bool { return p[len(p)-1] == "skip" }
func keepText(s string) bool  { return s != "" }

// FuzzTextValues: on any bytes, JSON or not, TextValues gives what
// Strings, DecodeString and JoinPath give, and never panics.
func FuzzTextValues(f *testing.F) {
	for _, s := range []string{
		`{"a":"x\ny","b":[1,"two",{"c":"\u00e9\ud83d\ude00"}],"skip":{"d":"no"},"e.f":"dot","n":null}`,
		`{"k\u0065y":"v","q\"uote":["a","b"]}`,
		"{\"bad\":\"x\xffy\"}",
		`{"a":"x"`,
		`[{"a":[{"b":"c"}]},"d"]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if want, got := viaStrings(string(line)), viaTextValues(string(line)); got != want {
			t.Errorf("%q:\ngot  %s\nwant %s", line, got, want)
		}
	})
}

// TestTextValuesLongTwice: a long text spelled twice in a line (a tool's
// output in the message and in toolUseResult) is decoded once, and both
// values share its string; a long text spelled otherwise is its own.
func TestTextValuesLongTwice(t *testing.T) {
	long := strings.Repeat("é\"\n", 40<<10)
	enc, _ := json.Marshal(long)
	other, _ := json.Marshal(long[:len(long)-1] + "x")
	line := fmt.Sprintf(`{"message":{"content":%s},"toolUseResult":{"stdout":%s,"stderr":%s},"other":%s}`, enc, enc, enc, other)
	if got, want := viaTextValues(line), viaStrings(line); got != want {
		t.Fatal("TextValues and Strings differ")
	}
	vs := TextValues[TextValue]([]byte(line), skipKey, keepText)
	if len(vs) != 4 {
		t.Fatalf("%d values", len(vs))
	}
	for _, v := range vs[1:3] {
		if unsafe.StringData(v.Text) != unsafe.StringData(vs[0].Text) {
			t.Errorf("%s: decoded again", v.Path)
		}
	}
	if unsafe.StringData(vs[3].Text) == unsafe.StringData(vs[0].Text) {
		t.Error("a different text shares the first one's string")
	}
}

// FuzzDecodeInPlace: a string JSON reads, in valid UTF-8, is decoded in
// place to what JSON gives.
func FuzzDecodeInPlace(f *testing.F) {
	for _, s := range []string{`plain`, `a\"b\\c\/d\b\f\n\r\t`, `\ud83d\ude00`, `\ud83d x`, "caf\xc3\xa9", `\x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		q := append(append([]byte{'"'}, s...), '"')
		var want string
		err := json.Unmarshal(q, &want)
		got, ok := DecodeInPlace(bytes.Clone(q))
		if err == nil && utf8.Valid(s) && !ok {
			t.Fatalf("DecodeInPlace(%s) declined a string JSON reads", q)
		}
		if err == nil && ok && string(got) != want {
			t.Fatalf("DecodeInPlace(%s) = %q, want %q", q, got, want)
		}
	})
}
