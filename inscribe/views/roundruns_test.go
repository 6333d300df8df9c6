package views

import (
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"
)

// TestRoundRuns: the runs of a list of round numbers answer as the list
// would: its length, its chunks (past its end too), and what follows a
// round, over lists with and without gaps.
func TestRoundRuns(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 1))
	for range 300 {
		var ns []int
		for n := 1 + r.IntN(3); len(ns) < r.IntN(40); n++ {
			if r.IntN(6) == 0 {
				n += r.IntN(4)
			}
			ns = append(ns, n)
		}
		rs := runsOf(ns)
		if whole := len(ns) > 0 && ns[len(ns)-1]-ns[0]+1 == len(ns); whole && len(rs) != 1 {
			t.Fatalf("%v: %d runs, want 1", ns, len(rs))
		}
		if rs.len() != len(ns) {
			t.Fatalf("%v: len %d", ns, rs.len())
		}
		for c := 1; c <= 5; c++ {
			for i := 0; i == 0 || i < len(ns); i += c {
				want := ns[i:min(len(ns), i+c)]
				if got := rs.slice(i, i+c); len(got)+len(want) > 0 && !reflect.DeepEqual(got, want) {
					t.Fatalf("%v: slice(%d, %d) = %v, want %v", ns, i, i+c, got, want)
				}
			}
		}
		for n := 0; n <= len(ns)+5; n++ {
			want := ns[sort.SearchInts(ns, n):]
			if got := rs.from(n).slice(0, len(ns)); len(got)+len(want) > 0 && !reflect.DeepEqual(got, want) {
				t.Fatalf("%v: from(%d) = %v, want %v", ns, n, got, want)
			}
		}
	}
}
