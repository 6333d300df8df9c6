package redact

import "strings"

// A hotRule is a gitleaks rule whose keywords are so common ("key",
// "token", "ey", "s.") that gitleaks runs its regular expression over
// almost every text, which costs more than all other rules together. may
// is a cheap test that is true wherever the rule's expression could match
// (it may be true where it does not): where it is false, gitleaks would
// find nothing with the rule, so the rule is not run. The test is written
// against the expression in regex (gitleaks', its delimiter widened); a store or a gitleaks version that
// changes the rule runs it as any other (NewDetector).
type hotRule struct {
	id    string
	regex string
	may   func(string) bool
}

var hotRules = []hotRule{
	{
		id:    "generic-api-key",
		regex: `(?i)[\w.-]{0,50}?(?:access|auth|(?-i:[Aa]pi|API)|credential|creds|key|passw(?:or)?d|secret|token)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([\w.=-]{10,150}|[a-z0-9][a-z0-9+/]{11,}={0,3})(?:[\x60'"\s;]|\\[nr]|$)`,
		may:   mayGeneric,
	},
	{
		id:    "vault-service-token",
		regex: widened(`\b((?:hvs\.[\w-]{90,120}|s\.(?i:[a-z0-9]{24})))(?:[\x60'"\s;]|\\[nr]|$)`),
		may:   mayVault,
	},
	{
		id:    "twilio-api-key",
		regex: `SK[0-9a-fA-F]{32}`,
		may:   mayTwilio,
	},
	{
		id:    "url-password",
		regex: urlPasswordRegex,
		may:   mayURLPassword,
	},
	{
		id:    "jwt",
		regex: widened(`\b(ey[a-zA-Z0-9]{17,}\.ey[a-zA-Z0-9\/\\_-]{17,}\.(?:[a-zA-Z0-9\/\\_-]{10,}={0,2})?)(?:[\x60'"\s;]|\\[nr]|$)`),
		may:   mayJWT,
	},
}

// folds reports whether s holds a character that case-insensitive
// matching folds to an ASCII letter (K, the Kelvin sign, is k; ſ, the long
// s, is s): the tests below read ASCII only, so such a text is always
// scanned.
func folds(s string) bool {
	return strings.Contains(s, "\u212a") || strings.Contains(s, "\u017f")
}

// mayGeneric: a keyword (access, auth, api, credential, creds, key,
// password, passwd, secret, token, in any case), then at most 23
// characters of word characters, '.', '-', white space and quotes, then an
// operator (=, >, :, ||, ?=, ',').
func mayGeneric(s string) bool {
	if folds(s) {
		return true
	}
	for i := 0; i+3 <= len(s); i++ {
		if !keywordStart[s[i]] {
			continue
		}
		n := genericKeyword(s, i)
		if n == 0 {
			continue
		}
		for j, gap := i+n, 0; j < len(s) && gap <= 23*3; j, gap = j+1, gap+1 {
			c := s[j]
			if c == '=' || c == '>' || c == ':' || c == '|' || c == '?' || c == ',' {
				return true
			}
			if !(isWord(c) || c == '.' || c == '-' || c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
				c == '\v' || c == '\f' || c == '\'' || c == '"' || c >= 0x80) {
				break
			}
		}
	}
	return false
}

// keywordStart marks the bytes a generic keyword starts with.
var keywordStart = func() (t [256]bool) {
	for _, c := range "acdkpstACDKPST" {
		t[c] = true
	}
	return t
}()

// genericKeyword returns the length of the keyword at s[i:], or 0.
func genericKeyword(s string, i int) int {
	for _, k := range [...]string{"access", "auth", "api", "cred", "key", "passw", "secret", "token"} {
		if len(s)-i >= len(k) && strings.EqualFold(s[i:i+len(k)], k) {
			return len(k)
		}
	}
	return 0
}

func isWord(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// mayVault: "s." (as in "hvs.") followed by at least 24 word characters or
// dashes.
func mayVault(s string) bool {
	if folds(s) {
		return true
	}
	for i := 0; ; {
		j := strings.Index(s[i:], "s.")
		if j < 0 {
			return false
		}
		k := i + j + 2
		n := 0
		for k+n < len(s) && (isWord(s[k+n]) || s[k+n] == '-') {
			n++
		}
		if n >= 24 {
			return true
		}
		i = k
	}
}

// mayJWT: "ey", at least 17 letters or digits, then ".ey".
func mayJWT(s string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], ".ey")
		if j < 0 {
			return false
		}
		k := i + j
		n := 0
		for k-n-1 >= 0 && isAlnum(s[k-n-1]) {
			n++
		}
		if n >= 19 && strings.Contains(s[k-n:k], "ey") {
			return true
		}
		i = k + 1
	}
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// mayTwilio: "SK" and 32 hex digits.
func mayTwilio(s string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], "SK")
		if j < 0 {
			return false
		}
		k := i + j + 2
		n := 0
		for k+n < len(s) && n < 32 && isHex(s[k+n]) {
			n++
		}
		if n == 32 {
			return true
		}
		i = k - 1
	}
}

// mayURLPassword: "://", then, before white space or any of / ? # ' " < >,
// a ':' and after it an '@'.
func mayURLPassword(s string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], "://")
		if j < 0 {
			return false
		}
		k := i + j + 3
		colon := false
		for n := 0; k+n < len(s) && n < 64+1+128+1; n++ {
			c := s[k+n]
			if c == ':' {
				colon = true
			} else if c == '@' {
				if colon {
					return true
				}
				break
			} else if c <= ' ' || strings.IndexByte("/?#'\"<>", c) >= 0 {
				break
			}
		}
		i = k
	}
}
