package check

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// marker matches the markers that replace secrets in a redacting store
// (inscribe/redact): [REDACTED:<rule>:<hash>].
var marker = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[REDACTED:[A-Za-z0-9_.-]+(?::[0-9a-f]+)?\]`) })

// redactedOnly reports whether the export's entry b differs from the
// source's a only where b has markers: every other value equal, and each
// string that differs is the source's with some of its parts replaced by
// markers. It returns the paths of the strings that differ and the
// markers.
func redactedOnly(a, b any, path string) (fields, markers []string, ok bool) {
	switch x := a.(type) {
	case map[string]any:
		y, isMap := b.(map[string]any)
		if !isMap || len(x) != len(y) {
			return nil, nil, false
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		used := map[string]bool{}
		for _, k := range keys {
			yk := k
			yv, present := y[k]
			if !present {
				// A key with a marker in it (scribe forget replaces in keys
				// that are data, such as a file's path).
				yk = ""
				for k2, v2 := range y {
					if _, inX := x[k2]; !inX && !used[k2] && marker().MatchString(k2) && coveredBy(k, k2) {
						yk, yv = k2, v2
						break
					}
				}
				if yk == "" {
					return nil, nil, false
				}
				fields, markers = append(fields, join(path, yk)), append(markers, marker().FindAllString(yk, -1)...)
			}
			used[yk] = true
			f, m, ok := redactedOnly(x[k], yv, join(path, yk))
			if !ok {
				return nil, nil, false
			}
			fields, markers = append(fields, f...), append(markers, m...)
		}
		return fields, markers, true
	case []any:
		y, isList := b.([]any)
		if !isList || len(x) != len(y) {
			return nil, nil, false
		}
		for i := range x {
			f, m, ok := redactedOnly(x[i], y[i], join(path, fmt.Sprint(i)))
			if !ok {
				return nil, nil, false
			}
			fields, markers = append(fields, f...), append(markers, m...)
		}
		return fields, markers, true
	case string:
		y, isString := b.(string)
		if !isString {
			return nil, nil, false
		}
		if x == y {
			return nil, nil, true
		}
		ms := marker().FindAllString(y, -1)
		if len(ms) == 0 || !coveredBy(x, y) {
			return nil, nil, false
		}
		return []string{path}, ms, true
	}
	return nil, nil, fmt.Sprint(a) == fmt.Sprint(b)
}

// coveredBy reports whether redacted is source with some non-empty parts
// replaced by markers: the text between markers is kept, in order.
func coveredBy(source, redacted string) bool {
	locs := marker().FindAllStringIndex(redacted, -1)
	var re strings.Builder
	re.WriteString(`^(?s)`)
	prev := 0
	for _, l := range locs {
		re.WriteString(regexp.QuoteMeta(redacted[prev:l[0]]))
		re.WriteString(`.+?`)
		prev = l[1]
	}
	re.WriteString(regexp.QuoteMeta(redacted[prev:]))
	re.WriteString(`$`)
	rx, err := regexp.Compile(re.String())
	return err == nil && rx.MatchString(source)
}

// redactedFinding describes an entry whose secrets were replaced. It holds
// no diff: the diff would show the secret.
func redactedFinding(f Finding, fields, markers []string) Finding {
	f.Kind = Redacted
	f.Field = strings.Join(fields, ", ")
	seen := map[string]bool{}
	var uniq []string
	for _, m := range markers {
		if !seen[m] {
			seen[m] = true
			uniq = append(uniq, m)
		}
	}
	f.Msg = fmt.Sprintf("secrets replaced by %s in %s", strings.Join(uniq, ", "), f.Field)
	return f
}

// removedText returns the text a string lost between the source
// (a) and the export (b) when b is a with a part deleted (or replaced by
// white space), and the same masked; "" when it is not so.
func removedText(a, b any) (raw, masked string) {
	x, okA := a.(string)
	y, okB := b.(string)
	if !okA || !okB || len(y) >= len(x) {
		return "", ""
	}
	p := 0
	for p < len(y) && x[p] == y[p] {
		p++
	}
	s := 0
	for s < len(y)-p && x[len(x)-1-s] == y[len(y)-1-s] {
		s++
	}
	if strings.TrimSpace(y[p:len(y)-s]) != "" {
		return "", ""
	}
	removed := strings.TrimSpace(x[p : len(x)-s])
	if removed == "" {
		return "", ""
	}
	rs := []rune(removed)
	return removed, string(rs[:min(4, len(rs)/4)]) + fmt.Sprintf("…(%d chars)", len(rs))
}
