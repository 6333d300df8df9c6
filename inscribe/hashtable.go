package inscribe

import "math"

// hashTable maps a 32-bit hash to a 32-bit value (the value MaxUint32
// excepted) in about 10 bytes an entry, where a Go map[uint32]uint32 takes
// about 20 (issue 33: the line index of a session of a million tiny lines).
// It is 256 parts, chosen by the top bits of the scrambled hash, each an
// open-addressed slice of slots with linear probing, a slot holding
// hash<<32 | value+1 (0 is empty). A part grows alone, by a quarter, once
// it is nine tenths full: growing never holds more than a part twice, where
// a single table that doubles would hold the old and the new whole at once.
type hashTable struct {
	parts []hashPart // 256 of them once something is put
	n     int
}

type hashPart struct {
	slots []uint64
	n     int
}

const (
	hashParts    = 256
	hashPartMin  = 8 // slots of a part's first table
	hashLoadNum  = 9 // a part grows when more than hashLoadNum/hashLoadDen full
	hashLoadDen  = 10
	hashGrowNum  = 5 // by hashGrowNum/hashGrowDen
	hashGrowDen  = 4
	hashScramble = 0x9e3779b1 // odd: a bijection of the 32-bit hashes
)

// The scrambled hash's top 8 bits choose the part (partOf), its other 24
// the home slot in a part of n slots (home: by multiplication, so n need
// not be a power of two).
func (t *hashTable) partOf(h uint32) *hashPart { return &t.parts[h*hashScramble>>24] }

func home(h uint32, n int) int { return int(uint64(h*hashScramble<<8) * uint64(n) >> 32) }

// Len returns the number of entries.
func (t *hashTable) Len() int { return t.n }

// Get returns the value of h.
func (t *hashTable) Get(h uint32) (uint32, bool) {
	if t.parts == nil {
		return 0, false
	}
	part := t.partOf(h)
	if i, ok := part.find(h); ok {
		return uint32(part.slots[i]) - 1, true
	}
	return 0, false
}

// find returns the slot of h, or the empty slot where it would go (ok
// false; i is -1 in a part with no slots).
func (p *hashPart) find(h uint32) (i int, ok bool) {
	n := len(p.slots)
	if n == 0 {
		return -1, false
	}
	for i = home(h, n); ; {
		s := p.slots[i]
		if s == 0 {
			return i, false
		}
		if uint32(s>>32) == h {
			return i, true
		}
		if i++; i == n {
			i = 0
		}
	}
}

// Reserve makes room for about n entries in all, so that putting them
// grows no part but by chance (an index of a file whose count of lines
// its size tells): each part has room for its share and four standard
// deviations more, as hashes spread at random fill them.
func (t *hashTable) Reserve(n int) {
	if n < hashParts*hashPartMin {
		return // each part's first table holds its share
	}
	if t.parts == nil {
		t.parts = make([]hashPart, hashParts)
	}
	share := float64(n) / hashParts
	per := int((share+4*math.Sqrt(share))*hashLoadDen/hashLoadNum) + hashPartMin
	for i := range t.parts {
		if p := &t.parts[i]; len(p.slots) < per && p.n == 0 {
			p.slots = make([]uint64, per)
		}
	}
}

// Put sets the value of h to v, and reports false (and does nothing) for
// v = MaxUint32, which a slot cannot hold.
func (t *hashTable) Put(h, v uint32) bool {
	if v == math.MaxUint32 {
		return false
	}
	if t.parts == nil {
		t.parts = make([]hashPart, hashParts)
	}
	part := t.partOf(h)
	slot := uint64(h)<<32 | uint64(v+1)
	i, ok := part.find(h)
	if ok {
		part.slots[i] = slot
		return true
	}
	if (part.n+1)*hashLoadDen > len(part.slots)*hashLoadNum {
		part.grow()
		i, _ = part.find(h)
	}
	part.slots[i] = slot
	part.n++
	t.n++
	return true
}

// grow moves the part's entries to a table a quarter larger.
func (p *hashPart) grow() {
	old := p.slots
	n := max(len(old)*hashGrowNum/hashGrowDen, len(old)+1, hashPartMin)
	p.slots = make([]uint64, n)
	for _, s := range old {
		if s != 0 {
			i, _ := p.find(uint32(s >> 32))
			p.slots[i] = s
		}
	}
}

// Delete removes h, moving back the entries after it that it displaced
// (Knuth's algorithm R: linear probing needs no tombstones).
func (t *hashTable) Delete(h uint32) {
	if t.parts == nil {
		return
	}
	part := t.partOf(h)
	i, ok := part.find(h)
	if !ok {
		return
	}
	n := len(part.slots)
	for j := i; ; {
		if j++; j == n {
			j = 0
		}
		s := part.slots[j]
		if s == 0 {
			break
		}
		// The entry at j stays if its home lies cyclically in (i, j].
		k := home(uint32(s>>32), n)
		if i <= j && i < k && k <= j || i > j && (i < k || k <= j) {
			continue
		}
		part.slots[i] = s
		i = j
	}
	part.slots[i] = 0
	part.n--
	t.n--
}

// Bytes returns the memory the table holds.
func (t *hashTable) Bytes() int {
	b := cap(t.parts) * 32
	for _, p := range t.parts {
		b += cap(p.slots) * 8
	}
	return b
}
