package exportclaude

import (
	"regexp"
	"strings"
	"testing"
)

// validToolID accepts exactly what the API's pattern for call ids and tool
// names does.
func TestValidToolID(t *testing.T) {
	api := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	cases := []string{"", "toolu_01ABCxyz", "call-1", "a b", "a.b", "Bash", "mcp__server__tool", "é", "a\n", "\x00",
		strings.Repeat("a", 64), strings.Repeat("a", 65), strings.Repeat("-", 63) + "é"}
	for c := range 256 {
		cases = append(cases, string([]byte{byte(c)}), "x"+string([]byte{byte(c)}))
	}
	for _, s := range cases {
		if got, want := validToolID(s), api.MatchString(s); got != want {
			t.Errorf("validToolID(%q) = %v, the API's pattern says %v", s, got, want)
		}
	}
}
