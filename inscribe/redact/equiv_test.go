package redact

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/zricethezav/gitleaks/v8/detect"
)

// TestSameAsGitleaks checks that the detector (its prefilter, its cheap
// tests for the hot rules, its chunks) finds every secret that gitleaks
// itself, with its default rules, finds in a text: over the text of the bundled transcripts, with
// secrets of many kinds planted at random places.
func TestSameAsGitleaks(t *testing.T) {
	// gitleaks as it comes (its stop words in a trie, where scribe looks
	// for them one by one: withoutTries).
	plain, err := detect.NewDetectorDefaultConfig()
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDetector(nil)
	if err != nil {
		t.Fatal(err)
	}
	texts := transcriptStrings(t)
	planted := []string{
		"aws_access_key_id = AKIAQ4Z7VB2XKM5NPT3W",
		"export GITHUB_TOKEN=ghp_K8r2Xq7mLv4Tz9Wc1Np5Hs3Jd6Fb0Ga2YeQ4",
		"SLACK=xoxb-285719364082-4917382645091-Qm8Lr2Xv7Kp4Tz9Wc1Np5Hs3",
		"Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ4In0.Qm8Lr2Xv7Kp4Tz9Wc1Np5Hs3",
		"token: eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJzY3JpYmUtdGVzdCJ9.Qm8Lr2Xv7Kp4Tz9Wc1Np5Hs3Jd",
		"STRIPE_SECRET_KEY=sk_live_51Hx8Qm2Lr7Xv4Kp9Tz3Wc6Np1Hs5Jd",
		"api_key = \"Zq8Lr2Xv7Kp4Tz9Wc1Np5Hs3Jd6Fb0\"",
		"password: Hx8Qm2Lr7Xv4Kp9Tz3Wc6Np1",
		"DATABASE_URL=postgres://app:Vq7mK2xL9pR4tZ8w@db.example:5432/x",
		"twilio SK0123456789abcdef0123456789abcdef here",
		"vault hvs.CAESIJ8Lr2Xv7Kp4Tz9Wc1Np5Hs3Jd6Fb0Ga2YeQ4K8r2Xq7mLv4Tz9Wc1Np5Hs3Jd6Fb0Ga2YeQ4K8r2Xq7mLv4Tz9Wc1Np5Hs3Jd6ab ok",
		"glpat-Xq7mLv4Tz9Wc1Np5Hs3J",
		"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n-----END RSA PRIVATE KEY-----",
	}
	rng := rand.New(rand.NewSource(7))
	for i := 0; i < 300 && len(texts) > 0; i++ {
		s := texts[rng.Intn(len(texts))]
		at := rng.Intn(len(s) + 1)
		for at > 0 && at < len(s) && s[at]&0xC0 == 0x80 {
			at--
		}
		texts = append(texts, s[:at]+"\n"+planted[rng.Intn(len(planted))]+"\n"+s[at:])
	}
	missed := 0
	for _, text := range texts {
		got := map[string]bool{}
		for _, f := range d.Find(text) {
			got[f.Secret] = true
		}
		for _, f := range plain.DetectString(text) {
			s := strings.TrimRight(f.Secret, `\`)
			if len(s) < minSecret || got[s] {
				continue
			}
			covered := false
			for g := range got {
				covered = covered || strings.Contains(g, s)
			}
			if !covered {
				missed++
				if missed < 10 {
					t.Errorf("gitleaks finds %s %q that the detector misses", f.RuleID, s)
				}
			}
		}
	}
	if missed > 0 {
		t.Errorf("%d secrets missed", missed)
	}
}
