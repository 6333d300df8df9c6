package testenv

import (
	"fmt"
	"math/rand/v2"
)

// FreshUUIDs replaces every uuid in line by its counterpart in fresh, a new
// random (version 4) uuid made the first time one is met: so a session can
// be copied into a benchmark archive under identities of its own.
func FreshUUIDs(line []byte, fresh map[string]string, rng *rand.Rand) []byte {
	var out []byte
	last := 0
	for i := 0; i+36 <= len(line); i++ {
		if line[i+8] != '-' || !isUUID(line[i:i+36]) {
			continue
		}
		k := string(line[i : i+36])
		v, ok := fresh[k]
		if !ok {
			hi, lo := rng.Uint64(), rng.Uint64()
			hi = hi&^0xf000 | 0x4000     // version 4
			lo = lo&^(0xc<<60) | 0x8<<60 // variant
			v = fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", hi>>32, (hi>>16)&0xffff, hi&0xffff, lo>>48, lo&0xffffffffffff)
			fresh[k] = v
		}
		if out == nil {
			out = make([]byte, 0, len(line))
		}
		out = append(append(out, line[last:i]...), v...)
		last = i + 36
		i += 35
	}
	if out == nil {
		return line
	}
	return append(out, line[last:]...)
}

// isUUID reports whether s is a uuid in lowercase hex.
func isUUID(s []byte) bool {
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
		}
	}
	return true
}
