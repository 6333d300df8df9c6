package exportcore

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strings"
)

// ID derives an identity for something an export mints (an entry, a turn, a
// message id), deterministically: the same session and name always give
// the same identity, so two exports of a session are identical. It is a
// name-based UUID (RFC 9562 version 5) in the namespace of the session id
// (when that is a UUID; else of its bytes).
func ID(session string, name ...any) string {
	ns, ok := parseUUID(session)
	if !ok {
		sum := sha1.Sum([]byte("scribe session " + session))
		copy(ns[:], sum[:16])
	}
	h := sha1.New()
	h.Write(ns[:])
	h.Write([]byte("scribe:" + fmt.Sprint(name...)))
	var u [16]byte
	copy(u[:], h.Sum(nil))
	u[6] = u[6]&0x0f | 0x50 // version 5
	u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
	s := hex.EncodeToString(u[:])
	return s[0:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:32]
}

// IsUUID reports whether s is a UUID in its canonical text form.
func IsUUID(s string) bool {
	_, ok := parseUUID(s)
	return ok
}

func parseUUID(s string) ([16]byte, bool) {
	var u [16]byte
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return u, false
	}
	b, err := hex.DecodeString(strings.ReplaceAll(s, "-", ""))
	if err != nil || len(b) != 16 {
		return u, false
	}
	copy(u[:], b)
	return u, true
}
