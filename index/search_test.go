package index

import (
	"strings"
	"testing"
)

func marked(s string) string {
	return strings.NewReplacer(HighlightStart, "«", HighlightEnd, "»").Replace(s)
}

// TestSnippet: the window around the first match, matches marked, "…"
// where the body is cut; SQLite's snippet() gave the same, at a cost that
// grows with the square of the matches in a round.
func TestSnippet(t *testing.T) {
	long := strings.Repeat("lorem ipsum dolor sit amet ", 40)
	for _, c := range []struct {
		body, query, want string
	}{
		{"third question\nAnswer number 3.", "third question", "«third» «question»\nAnswer number 3."},
		{"  > third question!", "question", "  > third «question»!"},
		{"create hello.py please", `"hello.py"`, "create «hello.py» please"},
		{"Hello.PY and hello py", `"hello.py"`, "«Hello.PY» and «hello py»"},
		{"helpful hello help", "hel*", "«helpful» «hello» «help»"},
		{"the théâtre Théâtre", "théâtre", "the «théâtre» «Théâtre»"},
		{"a b c d e f g h i j k l m n o p q r s t u v w x y z", "k", "…h i j «k» l m n o p q r s t u v w…"},
		{"a b c d e f g h i j k l m n o p q r s t u v w x y z", "y", "…k l m n o p q r s t u v w x «y» z"},
		{"a b c d e f g h i j k l m n o p q r s t u v w x y z", "c", "a b «c» d e f g h i j k l m n o p…"},
		{long + "needle in the haystack " + long, "needle", "…dolor sit amet «needle» in the haystack lorem ipsum dolor sit amet lorem ipsum dolor sit…"},
		{"nothing matches here", "absent", "nothing matches here"},
		{"foo bar baz", `"bar baz" OR foo NOT qux`, "«foo» «bar baz»"},
		{"a 5 b c body", `NEAR(a c, 5) OR {body}: b OR body : c`, "«a» 5 «b» «c» body"},
		{"x " + strings.Repeat("ab", 1000) + " needle", "needle", "…b" + strings.Repeat("ab", 29) + " «needle»"},
	} {
		if got := marked(snippet(c.body, rawPhrases(c.query))); got != c.want {
			t.Errorf("%q in %.40q…:\n got %q\nwant %q", c.query, c.body, got, c.want)
		}
	}
}

// TestSnippetFarMatch: the first match is found wherever it is in a large
// round, across the chunks the search reads.
func TestSnippetFarMatch(t *testing.T) {
	body := strings.Repeat("the quick brown fox ", 1<<16) + "Zanzibar! " + strings.Repeat("jumps ", 10)
	for _, q := range []string{"zanzibar", "zanz*", `"ZANZIBAR" jumps`} {
		if got := marked(snippet(body, rawPhrases(q))); !strings.Contains(got, "«Zanzibar»! «jumps»") && !strings.Contains(got, "«Zanzibar»! jumps") {
			t.Errorf("%q: %q", q, got)
		}
	}
}
