package testenv

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestFreshUUIDs: each uuid gets one fresh counterpart, everywhere it
// appears; the rest of the line is left as it is.
func TestFreshUUIDs(t *testing.T) {
	const a, b = "22222222-2222-4222-8222-222222222222", "33333333-3333-4333-8333-333333333333"
	line := []byte(`{"uuid":"` + a + `","parentUuid":"` + b + `","again":"` + a + `","not":"2222222-2222-4222-8222-222222222222x"}`)
	fresh := map[string]string{}
	got := string(FreshUUIDs(line, fresh, rand.New(rand.NewPCG(1, 2))))
	if len(fresh) != 2 || strings.Contains(got, a) || strings.Contains(got, b) {
		t.Fatalf("%s (mapping %v)", got, fresh)
	}
	want := strings.NewReplacer(a, fresh[a], b, fresh[b]).Replace(string(line))
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	for _, v := range fresh {
		if !isUUID([]byte(v)) || v[14] != '4' || !strings.ContainsRune("89ab", rune(v[19])) {
			t.Errorf("%s is not a version 4 uuid", v)
		}
	}
}
