package redact

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"testing"
)

var fuzzRedactor struct {
	once sync.Once
	r    *Redactor
}

// FuzzLine: redacting any JSON value in all its string values keeps it
// JSON of the same shape: the same keys in the same places, every number,
// boolean and null as it was, every string either as it was or holding a
// marker, and no secret found in it left behind.
func FuzzLine(f *testing.F) {
	for _, secret := range planted {
		b, _ := json.Marshal(map[string]any{"id": "x", "message": map[string]any{"content": []any{
			map[string]any{"type": "text", "text": "key: " + secret},
			map[string]any{"type": "text", "text": secret[:len(secret)/2]},
			map[string]any{"type": "text", "text": secret[len(secret)/2:]},
		}}, "n": 1.5, "ok": true, "nil": nil})
		f.Add(b)
	}
	f.Add([]byte(`{"a":"AKIAZ7QX3M5N2PLKWJ4R\n\u00e9","b":["postgres://u:s3cr3tPassw0rd@db/x"]}`))
	f.Add([]byte(`"ghp_R8x2mQ7vLk4Tz9Wc1Np5Hs3Jd6Fb0Ga2Ye4U"`))
	f.Fuzz(func(t *testing.T, line []byte) {
		var before any
		if json.Unmarshal(line, &before) != nil {
			return
		}
		fuzzRedactor.once.Do(func() { fuzzRedactor.r = newRedactor(t) })
		r := fuzzRedactor.r
		out, reps := r.Line(line, AllStrings(line))
		var after any
		if err := json.Unmarshal(out, &after); err != nil {
			t.Fatalf("%q redacted is not JSON: %q: %v", line, out, err)
		}
		if len(reps) == 0 && string(out) != string(line) {
			t.Fatalf("nothing replaced, yet the line changed: %q → %q", line, out)
		}
		sameShape(t, before, after)
		left := strings.Join(stringsOf(after, nil), "\x00")
		for _, s := range stringsOf(before, nil) {
			for _, f := range r.Detector.Find(s) {
				if strings.Contains(left, f.Secret) {
					t.Errorf("%q: the %s secret %q is left in %q", line, f.Rule, f.Secret, out)
				}
			}
		}
	})
}

// stringsOf appends the string values of v to out.
func stringsOf(v any, out []string) []string {
	switch v := v.(type) {
	case map[string]any:
		for _, w := range v {
			out = stringsOf(w, out)
		}
	case []any:
		for _, w := range v {
			out = stringsOf(w, out)
		}
	case string:
		out = append(out, v)
	}
	return out
}

func sameShape(t *testing.T, a, b any) {
	t.Helper()
	switch a := a.(type) {
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(bm) != len(a) {
			t.Fatalf("object %v became %v", a, b)
		}
		for k, v := range a {
			w, ok := bm[k]
			if !ok {
				t.Fatalf("key %q lost", k)
			}
			sameShape(t, v, w)
		}
	case []any:
		bs, ok := b.([]any)
		if !ok || len(bs) != len(a) {
			t.Fatalf("array %v became %v", a, b)
		}
		for i := range a {
			sameShape(t, a[i], bs[i])
		}
	case string:
		bs, ok := b.(string)
		if !ok || (bs != a && !strings.Contains(bs, "[REDACTED:")) {
			t.Fatalf("string %q became %v", a, b)
		}
	default:
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%v became %v", a, b)
		}
	}
}
