package index

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A token is what the full-text index stores and matches, as SQLite's
// unicode61 tokenizer (FTS5's default) cuts text: a run of letters,
// digits and private-use characters, without regard to case. Everything
// else (spaces, punctuation, symbols, '_') only separates tokens.
func isTokenRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r)
}

func isTokenByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// nextToken returns the first token of s at or after byte i, as s[start:end];
// start is len(s) when there is none.
func nextToken(s string, i int) (start, end int) {
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf {
			if isTokenByte(c) {
				break
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if isTokenRune(r) {
			break
		}
		i += n
	}
	return i, tokenEnd(s, i)
}

// tokenEnd returns where the token that starts at byte i of s ends.
func tokenEnd(s string, i int) int {
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf {
			if !isTokenByte(c) {
				break
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if !isTokenRune(r) {
			break
		}
		i += n
	}
	return i
}

// tokens returns the tokens of s.
func tokens(s string) []string {
	var out []string
	for i := 0; ; {
		start, end := nextToken(s, i)
		if start == len(s) {
			return out
		}
		out = append(out, s[start:end])
		i = end
	}
}

// A phrase is tokens that must follow one another; with prefix, the last
// one need only start a token of the text.
type phrase struct {
	tokens []string
	prefix bool
}

// QueryError is a query that cannot be searched: one with nothing to
// search for, or (with [Query.Raw]) one SQLite's full-text engine cannot
// read.
type QueryError struct {
	Query string // as given
	Raw   bool   // Query is FTS5 syntax SQLite could not read
	// Msg says what is wrong, e.g. `FTS5 syntax error near "AND" at the
	// end of the query`.
	Msg string
}

func (e *QueryError) Error() string { return fmt.Sprintf("search %q: %s", e.Query, e.Msg) }

// parseQuery returns the FTS5 query to run for q and the phrases to mark
// in snippets.
func parseQuery(q Query) (match string, phrases []phrase, err error) {
	if q.Raw {
		if strings.TrimSpace(q.Text) == "" {
			return "", nil, &QueryError{Query: q.Text, Msg: "the query is empty"}
		}
		return q.Text, rawPhrases(q.Text), nil
	}
	var parts []string
	for _, w := range strings.Fields(q.Text) {
		p := phrase{prefix: strings.HasSuffix(w, "*")}
		p.tokens = tokens(strings.TrimRight(w, "*"))
		if len(p.tokens) == 0 {
			// Punctuation alone: FTS5 would read it as a phrase of no
			// tokens, which matches no row at all.
			continue
		}
		part := `"` + strings.ReplaceAll(strings.Join(p.tokens, " "), `"`, `""`) + `"`
		if p.prefix {
			part += "*"
		}
		parts = append(parts, part)
		phrases = append(phrases, p)
	}
	if len(parts) == 0 {
		msg := "the query is empty"
		if strings.TrimSpace(q.Text) != "" {
			msg = "the query has no letters or digits: there is nothing to search for"
		}
		return "", nil, &QueryError{Query: q.Text, Msg: msg}
	}
	return strings.Join(parts, " AND "), phrases, nil
}

// rawPhrases picks the phrases out of an FTS5 query, to mark them in
// snippets: its strings and barewords, less operators, column names and
// NEAR's distance. An FTS5 query SQLite will refuse gets some phrases
// all the same; they are never used.
func rawPhrases(q string) []phrase {
	var out []phrase
	afterComma := false
	for i := 0; i < len(q); {
		c := q[i]
		var word string
		bare := false
		switch {
		case c == '"':
			var sb strings.Builder
			j := i + 1
			for j < len(q) {
				if q[j] == '"' {
					if j+1 < len(q) && q[j+1] == '"' {
						sb.WriteByte('"')
						j += 2
						continue
					}
					j++
					break
				}
				sb.WriteByte(q[j])
				j++
			}
			word, i = sb.String(), j
		case c == '{': // {col1 col2}: a column filter
			if j := strings.IndexByte(q[i:], '}'); j >= 0 {
				i += j + 1
			} else {
				i = len(q)
			}
			continue
		case c >= utf8.RuneSelf || isTokenByte(c) || c == '_' || c == 0x1a:
			j := i
			for j < len(q) && (q[j] >= utf8.RuneSelf || isTokenByte(q[j]) || q[j] == '_' || q[j] == 0x1a) {
				j++
			}
			word, i, bare = q[i:j], j, true
		default:
			if c != ' ' {
				afterComma = c == ','
			}
			i++
			continue
		}
		j := i
		for j < len(q) && q[j] == ' ' {
			j++
		}
		if j < len(q) && q[j] == ':' { // a column name
			continue
		}
		if bare && (word == "AND" || word == "OR" || word == "NOT" || word == "NEAR") {
			continue
		}
		if bare && afterComma && strings.Trim(word, "0123456789") == "" { // NEAR(a b, 5)
			continue
		}
		afterComma = false
		p := phrase{tokens: tokens(word), prefix: j < len(q) && q[j] == '*'}
		if len(p.tokens) > 0 {
			out = append(out, p)
		}
	}
	return out
}

// queryError turns SQLite's complaint about a full-text query into a
// *QueryError that says what is wrong; other errors pass through.
func queryError(q string, err error) error {
	s := err.Error()
	s = strings.TrimSuffix(strings.TrimSpace(s), " (1)") // SQLite's result code
	qe := &QueryError{Query: q, Raw: true}
	if i := strings.Index(s, "no such column: "); i >= 0 {
		qe.Msg = fmt.Sprintf("FTS5 read %q as a column name (a word before ':' or after '-' names a column to search in)", s[i+len("no such column: "):])
		return qe
	}
	if i := strings.Index(s, "fts5: syntax error near "); i >= 0 {
		near := s[i+len("fts5: syntax error near "):]
		if near == `""` {
			// SQLite names the end of the query as "": name its last word.
			f := strings.Fields(q)
			if len(f) == 0 {
				qe.Msg = "FTS5 syntax error: the query is empty"
			} else {
				qe.Msg = fmt.Sprintf("FTS5 syntax error near %q at the end of the query", f[len(f)-1])
			}
			return qe
		}
		qe.Msg = "FTS5 syntax error near " + near
		return qe
	}
	switch {
	case strings.Contains(s, "unknown special query"):
		qe.Msg = `FTS5 syntax error: "*" can only end a word (hel* finds the words that start with hel)`
	case strings.Contains(s, "unterminated string"):
		qe.Msg = "FTS5 syntax error: a double quote is not closed"
	case strings.Contains(s, "fts5: "):
		qe.Msg = "FTS5 " + s[strings.Index(s, "fts5: ")+len("fts5: "):]
	case strings.Contains(s, "malformed MATCH expression"):
		qe.Msg = "FTS5 " + s[strings.Index(s, "malformed MATCH expression"):]
	default:
		return err
	}
	return qe
}
