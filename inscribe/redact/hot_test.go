package redact

import (
	"math/rand"
	"strings"
	"testing"
)

// TestHotGates checks that each hot rule's cheap test is true wherever
// gitleaks' expression matches: on random texts built from the pieces the
// expressions are made of.
func TestHotGates(t *testing.T) {
	d, err := NewDetector(nil)
	if err != nil {
		t.Fatal(err)
	}
	var hot []*ruleEntry
	for i := range d.rules.rules {
		if d.rules.rules[i].may != nil {
			hot = append(hot, &d.rules.rules[i])
		}
	}
	if len(hot) != len(hotRules) {
		t.Errorf("%d of %d hot rules are run as hot rules: a rule changed (update hot.go)", len(hot), len(hotRules))
	}
	pieces := []string{"key", "KEY", "Api", "api", "API", "token", "Token", "secret", "passwd", "password", "auth", "access", "creds", "credential",
		" ", "\t", "\n", "\"", "'", "=", ":", ":=", "::=", "=>", "?=", "||", ",", ">", "|", "_", "-", ".", "/", "+", "`", ";", "\\n",
		"ey", "eyJ", ".ey", "s.", "hvs.", "abcdefghij", "ABCDEFGHIJKLMNOPQRSTUVWX", "0123456789", "Zq8Lr2Xv7Kp4Tz9Wc1Np5Hs3Jd6Fb0", "K", "ſ", "é", "eyJhbGciOiJIUzI1NiIsInR5cCI6", "SK", "0123456789abcdef0123456789abcdef", "postgres://user", ":pa55w0rdX7@db.host", "https://a:b", "@x", "://", "postgres", "user", "@", "db.host", "pa55w0rd", "?", "#", ".eyJzdWIiOiIxMjM0NTY3ODkwIn0", ".Qm8Lr2Xv7Kp4Tz9Wc1N", "hvs.CAESIJ8Lr2Xv7Kp4Tz9Wc1Np5Hs3Jd6Fb0Ga2YeQ4K8r2Xq7mLv4Tz9Wc1Np5Hs3Jd6Fb0Ga2YeQ4K8r2Xq7mLv4Tz9Wc1Np5Hs3Jd6"}
	rng := rand.New(rand.NewSource(1))
	for _, h := range hot {
		if err := h.compile(); err != nil {
			t.Fatal(err)
		}
		matched := 0
		for i := 0; i < 30000; i++ {
			var b strings.Builder
			for n := rng.Intn(12) + 1; n > 0; n-- {
				b.WriteString(pieces[rng.Intn(len(pieces))])
			}
			s := b.String()
			if h.re.MatchString(s) {
				matched++
				if !h.may(s) {
					t.Errorf("%s: the expression matches %q, the test says it cannot", h.id, s)
				}
			}
		}
		if matched == 0 {
			t.Errorf("%s: no random text matched: the test proves nothing", h.id)
		}
	}
}
