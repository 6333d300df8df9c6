package inscribe

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// checkTable runs ops on a hashTable and a map[uint32]uint32 and fails
// where they answer differently: each op is a put, a delete or a get of a
// hash keyOf draws.
func checkTable(t *testing.T, ops int, op func() (kind int, h, v uint32)) {
	t.Helper()
	var tab hashTable
	ref := map[uint32]uint32{}
	for i := range ops {
		kind, h, v := op()
		switch kind {
		case 0:
			ok := tab.Put(h, v)
			if ok != (v != math.MaxUint32) {
				t.Fatalf("op %d: Put(%#x, %#x) = %v", i, h, v, ok)
			}
			if ok {
				ref[h] = v
			}
		case 1:
			tab.Delete(h)
			delete(ref, h)
		}
		got, ok := tab.Get(h)
		want, wok := ref[h]
		if got != want || ok != wok {
			t.Fatalf("op %d (%d %#x %#x): Get = %#x, %v; want %#x, %v", i, kind, h, v, got, ok, want, wok)
		}
		if tab.Len() != len(ref) {
			t.Fatalf("op %d: Len = %d, want %d", i, tab.Len(), len(ref))
		}
	}
	for h, want := range ref {
		if got, ok := tab.Get(h); !ok || got != want {
			t.Fatalf("at the end: Get(%#x) = %#x, %v; want %#x", h, got, ok, want)
		}
	}
	n := 0
	for _, p := range tab.parts {
		for _, s := range p.slots {
			if s != 0 {
				n++
			}
		}
	}
	if n != len(ref) {
		t.Fatalf("%d slots full, want %d", n, len(ref))
	}
}

// inPart returns the hash that scrambles to x: for x < 1<<24 one of part
// 0, its home slot the larger the larger x.
func inPart(x uint32) uint32 { return x * 0x0e8b2f51 }

// TestHashTable: the table answers as a map would, over hashes spread at
// random, hashes that all fall in one part (or a few slots of it), and
// sequences of puts that overwrite and deletes that leave runs of probes
// behind.
func TestHashTable(t *testing.T) {
	keys := map[string]func(r *rand.Rand) uint32{
		"random":   func(r *rand.Rand) uint32 { return r.Uint32() },
		"few":      func(r *rand.Rand) uint32 { return r.Uint32N(50) },
		"one part": func(r *rand.Rand) uint32 { return inPart(r.Uint32N(1 << 24)) },
		// Homes at the part's ends: probes wrap around to its start,
		// among entries at home there.
		"part's ends": func(r *rand.Rand) uint32 { return inPart((r.Uint32N(1<<14) - 1<<13) & (1<<24 - 1)) },
		"extremes":    func(r *rand.Rand) uint32 { return []uint32{0, 1, math.MaxUint32, math.MaxUint32 - 1}[r.IntN(4)] },
	}
	for name, key := range keys {
		for _, dels := range []int{0, 1, 4} {
			t.Run(fmt.Sprintf("%s/dels=%d", name, dels), func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(dels), 33))
				checkTable(t, 60000, func() (int, uint32, uint32) {
					kind := 0
					if x := r.IntN(10); x < dels {
						kind = 1
					} else if x > 6 {
						kind = 2
					}
					v := r.Uint32()
					if r.IntN(100) == 0 {
						v = []uint32{0, math.MaxUint32, math.MaxUint32 - 1}[r.IntN(3)]
					}
					return kind, key(r), v
				})
			})
		}
	}
	if inPart(hashScramble) != 1 {
		t.Fatal("inPart is not the scramble's inverse")
	}
}

// TestHashTableReserve: a table made room for n entries takes them
// without growing, and answers for them.
func TestHashTableReserve(t *testing.T) {
	const n = 5000
	var tb hashTable
	tb.Reserve(n)
	before := tb.Bytes()
	r := rand.New(rand.NewPCG(5, 33))
	want := map[uint32]uint32{}
	for len(want) < n {
		h, v := r.Uint32(), r.Uint32N(math.MaxUint32)
		want[h] = v
		tb.Put(h, v)
	}
	if tb.Bytes() != before {
		t.Errorf("%d entries grew a table made room for them from %d bytes to %d", n, before, tb.Bytes())
	}
	for h, v := range want {
		if got, ok := tb.Get(h); !ok || got != v {
			t.Fatalf("Get(%d) = %d, %v; want %d", h, got, ok, v)
		}
	}
}

// FuzzHashTable: any sequence of puts, deletes and gets (9 bytes each:
// the op, the hash, the value) answers as a map would; some hashes are
// narrowed to a part's first or last home slots so that probes run long
// and wrap around.
func FuzzHashTable(f *testing.F) {
	f.Add([]byte("\x00\x00\x00\x00\x01\x00\x00\x00\x02\x01\x00\x00\x00\x01\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkTable(t, len(b)/9, func() (int, uint32, uint32) {
			op := b[:9]
			b = b[9:]
			h := binary.LittleEndian.Uint32(op[1:])
			switch op[0] & 12 {
			case 4:
				h = inPart(h & 0xff)
			case 8:
				h = inPart((h&0xffff - 1<<15) & (1<<24 - 1))
			}
			return int(op[0] % 3), h, binary.LittleEndian.Uint32(op[5:])
		})
	})
}

// BenchmarkHashTable puts n random hashes and gets them back, reporting
// the bytes the table holds an entry (where a map[uint32]uint32 holds
// about 20).
func BenchmarkHashTable(b *testing.B) {
	for _, n := range []int{1000, 100_000, 1_000_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			hs := make([]uint32, n)
			r := rand.New(rand.NewPCG(1, 2))
			for i := range hs {
				hs[i] = r.Uint32()
			}
			var tab hashTable
			for b.Loop() {
				tab = hashTable{}
				for i, h := range hs {
					tab.Put(h, uint32(i))
				}
				for _, h := range hs {
					tab.Get(h)
				}
			}
			b.ReportMetric(float64(tab.Bytes())/float64(tab.Len()), "B/entry")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/entry")
		})
	}
}

// BenchmarkHashMap is BenchmarkHashTable's work on a Go map, for
// comparison (its bytes an entry are the heap's growth).
func BenchmarkHashMap(b *testing.B) {
	n := 1_000_000
	hs := make([]uint32, n)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range hs {
		hs[i] = r.Uint32()
	}
	for b.Loop() {
		m := map[uint32]uint32{}
		for i, h := range hs {
			m[h] = uint32(i)
		}
		for _, h := range hs {
			_ = m[h]
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/entry")
}
