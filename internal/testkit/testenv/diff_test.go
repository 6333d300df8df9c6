package testenv

import (
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	lines := func(n int, change map[int]string) string {
		var sb strings.Builder
		for i := 1; i <= n; i++ {
			if s, ok := change[i]; ok {
				sb.WriteString(s)
				continue
			}
			sb.WriteString("line " + string(rune('a'+i-1)) + "\n")
		}
		return sb.String()
	}
	cases := []struct {
		name, old, new, want string
	}{
		{"equal", "a\nb\n", "a\nb\n", ""},
		{"one-line-changed", lines(10, nil), lines(10, map[int]string{5: "line E\n"}), `--- old
+++ new
@@ -2,7 +2,7 @@
 line b
 line c
 line d
-line e
+line E
 line f
 line g
 line h
`},
		{"two-hunks", lines(20, nil), lines(20, map[int]string{2: "", 18: "line R\nline R2\n"}), `--- old
+++ new
@@ -1,5 +1,4 @@
 line a
-line b
 line c
 line d
 line e
@@ -15,6 +14,7 @@
 line o
 line p
 line q
-line r
+line R
+line R2
 line s
 line t
`},
		{"no-final-newline", "a\nb\n", "a\nb", `--- old
+++ new
@@ -1,2 +1,2 @@
 a
-b
+b
\ No newline at end of file
`},
		{"from-nothing", "", "a\n", `--- old
+++ new
@@ -0,0 +1 @@
+a
`},
	}
	for _, c := range cases {
		if got := Diff("old", []byte(c.old), "new", []byte(c.new)); got != c.want {
			t.Errorf("%s: got\n%s\nwant\n%s", c.name, got, c.want)
		}
	}
}
