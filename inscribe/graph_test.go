package inscribe

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/internal/atomicfile"
	"github.com/scribe-archive/scribe/session/source"
)

// refGraph is what the builder and the graph did before fileGraph: the
// nodes of earlier runs in a map (the first of an identity), then the
// builder's own nodes, searched from the last; the items of earlier runs
// (the first item of an identity, as a builder of the whole session lists
// them).
type refGraph struct {
	earlier map[string]source.Node
	items   []source.Node
	run     []source.Node
}

func (r *refGraph) lookup(u string) (source.Node, bool) {
	if n, ok := r.earlier[u]; ok {
		return n, true
	}
	for i := len(r.run) - 1; i >= 0; i-- {
		if r.run[i].UUID == u {
			return r.run[i], true
		}
	}
	return source.Node{}, false
}

// itemsThen is Items as branches saw it: the earlier items, then the run's
// items not seen yet.
func (r *refGraph) itemsThen() []source.Node {
	items := append([]source.Node(nil), r.items...)
	seen := make(map[string]bool)
	for _, n := range items {
		seen[n.UUID] = true
	}
	for _, n := range r.run {
		if n.IsItem() && !seen[n.UUID] {
			seen[n.UUID] = true
			items = append(items, n)
		}
	}
	return items
}

// TestFileGraph: the graph of an update finds what the builder's nodes and
// the loaded graph found, with repeated identities, odd fields (not
// written) and every hash colliding; the file holds the lines appendGraph
// wrote; an update that fails leaves the file as it was.
func TestFileGraph(t *testing.T) {
	for _, collide := range []bool{false, true} {
		t.Run(fmt.Sprintf("collide=%v", collide), func(t *testing.T) {
			if collide {
				old := graphHash
				graphHash = func([]byte) uint32 { return 7 }
				defer func() { graphHash = old }()
			}
			rng := rand.New(rand.NewPCG(1, 2))
			ids := make([]string, 40)
			for i := range ids {
				ids[i] = fmt.Sprintf("%08x-id", i)
			}
			ids[3] = "odd\tid"
			node := func() source.Node {
				u := ids[rng.IntN(len(ids))]
				n := source.Node{UUID: u, Anchor: ids[rng.IntN(len(ids))]}
				if rng.IntN(3) == 0 {
					n.Anchor = u
					n.Parent = ids[rng.IntN(len(ids))]
				}
				if rng.IntN(20) == 0 {
					n.Parent = "a\nb"
				}
				return n
			}
			dir := t.TempDir()
			path := filepath.Join(dir, graphFile)
			var earlier []source.Node
			for range 60 {
				earlier = append(earlier, node())
			}
			var b atomicfile.Batch
			size, err := appendGraph(&b, path, 0, earlier)
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(path+".keep", mustRead(t, path), 0o644)
			ref := &refGraph{earlier: make(map[string]source.Node)}
			for _, n := range earlier {
				if strings.ContainsAny(n.UUID+n.Anchor+n.Parent, "\t\n") {
					continue
				}
				if _, dup := ref.earlier[n.UUID]; !dup {
					ref.earlier[n.UUID] = n
				}
				if n.IsItem() && !slices.ContainsFunc(ref.items, func(m source.Node) bool { return m.UUID == n.UUID }) {
					ref.items = append(ref.items, n)
				}
			}
			for _, fail := range []bool{true, false} {
				ref.run = nil
				g := newFileGraph(&b, path, size)
				var all []source.Node
				for round := range 30 {
					var nodes []source.Node
					for range rng.IntN(5) {
						nodes = append(nodes, node())
					}
					g.Record(nodes)
					ref.run = append(ref.run, nodes...)
					all = append(all, nodes...)
					for _, u := range append(ids, "absent") {
						got, ok := g.Lookup(u)
						want, wok := ref.lookup(u)
						if got != want || ok != wok {
							t.Fatalf("round %d: Lookup(%q) = %v %v, want %v %v", round, u, got, ok, want, wok)
						}
					}
				}
				if got, want := g.Items(), ref.itemsThen(); !reflect.DeepEqual(got, want) {
					t.Fatalf("Items:\n%v\nwant\n%v", got, want)
				}
				if fail {
					g.close()
					if got := mustRead(t, path); string(got) != string(mustRead(t, path+".keep")) {
						t.Fatal("a failed update changed the graph")
					}
					continue
				}
				end, err := g.finish()
				if err != nil {
					t.Fatal(err)
				}
				want := filepath.Join(dir, "want.tsv")
				os.WriteFile(want, mustRead(t, path+".keep"), 0o644)
				wantEnd, _ := appendGraph(&b, want, size, all)
				if got := mustRead(t, path); end != wantEnd || string(got) != string(mustRead(t, want)) {
					t.Fatalf("the file (%d bytes):\n%s\nwant (%d bytes):\n%s", end, got, wantEnd, mustRead(t, want))
				}
			}
		})
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestGraphLongAndTornLines: the lines of earlier updates are found and
// listed whatever their length (one longer than a read's buffer), and a
// torn last line (no line end) is not.
func TestGraphLongAndTornLines(t *testing.T) {
	long := strings.Repeat("x", 200_000)
	path := filepath.Join(t.TempDir(), graphFile)
	data := "a\ta\t\n" + long + "\t" + long + "\ta\n" + "c\tc\t" + long + "\n" + "d\td\tc"
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	var b atomicfile.Batch
	g := newFileGraph(&b, path, int64(len(data)))
	defer g.close()
	for _, n := range []source.Node{{UUID: "a", Anchor: "a"}, {UUID: long, Anchor: long, Parent: "a"}, {UUID: "c", Anchor: "c", Parent: long}} {
		if got, ok := g.Lookup(n.UUID); !ok || got != n {
			t.Errorf("Lookup(%.10q) = %.40v, %v", n.UUID, got, ok)
		}
	}
	if _, ok := g.Lookup("d"); ok {
		t.Error("the torn last line was found")
	}
	if items := g.Items(); len(items) != 3 || items[1].UUID != long || items[2].UUID != "c" {
		t.Errorf("Items: %d, want a, the long one, c", len(items))
	}
}
