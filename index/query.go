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
//
// Scripts written without spaces between words (isCJK) are the exception:
// unicode61 would make a whole sentence one token, and a word inside it
// could not be found. Their runs are cut into overlapping pairs of letters,
// one token at each letter: the letter and the next one, the last letter
// of the run alone ("连接超时" is 连接 接超 超时 时), as Lucene's CJK
// bigrams and the index's text (cjkText) have them. A word of the run is
// then the phrase of its pairs.
func isTokenRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r)
}

func isTokenByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// isCJK reports whether r is a letter (or digit) of a script written
// without spaces between words, whose runs the index cuts into pairs: Han,
// Hiragana, Katakana, Hangul and Bopomofo, with the marks of length and
// repetition written among them.
func isCJK(r rune) bool {
	switch {
	case r < 0x1100:
		return false
	case r == 0x30FC || r == 0xFF70 || r == 0x3005 || r == 0x303B || r == 0x309D || r == 0x309E || r == 0x30FD || r == 0x30FE:
		return true // ー ｰ 々 〻 ゝ ゞ ヽ ヾ: of no script of their own
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul, unicode.Bopomofo) &&
		(unicode.IsLetter(r) || unicode.IsNumber(r))
}

// cjkAt returns the CJK rune that starts at byte i of s, and its length;
// 0 if there is none.
func cjkAt(s string, i int) (rune, int) {
	if i >= len(s) || s[i] < 0xE1 { // every CJK rune is U+1100 or above
		return 0, 0
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	if !isCJK(r) {
		return 0, 0
	}
	return r, n
}

// nextToken returns the first token of s at or after byte i, as s[start:end],
// and where the token after it may start (next: end, but inside a run of
// CJK letters, whose tokens overlap, the next letter); start is len(s) when
// there is none.
func nextToken(s string, i int) (start, end, next int) {
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
	end, next = tokenAt(s, i)
	return i, end, next
}

// tokenAt returns where the token that starts at byte i of s ends, and
// where the one after it may start (nextToken).
func tokenAt(s string, i int) (end, next int) {
	if _, n := cjkAt(s, i); n > 0 {
		end = i + n
		if _, m := cjkAt(s, end); m > 0 {
			return end + m, end
		}
		return end, end
	}
	end = tokenEnd(s, i)
	return end, end
}

// tokenEnd returns where the token that starts at byte i of s ends, a
// token of letters that are not CJK: at a separator or a CJK letter.
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
		if !isTokenRune(r) || isCJK(r) {
			break
		}
		i += n
	}
	return i
}

// isTokenStart reports whether a token of s starts at byte i: a letter or
// digit not preceded by one of its own kind (every CJK letter starts one).
func isTokenStart(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	if _, n := cjkAt(s, i); n > 0 {
		return true
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	if !isTokenRune(r) {
		return false
	}
	if i == 0 {
		return true
	}
	p, _ := utf8.DecodeLastRuneInString(s[:i])
	return !isTokenRune(p) || isCJK(p)
}

// tokens returns the tokens of s.
func tokens(s string) []string {
	var out []string
	for i := 0; ; {
		start, end, next := nextToken(s, i)
		if start == len(s) {
			return out
		}
		out = append(out, s[start:end])
		i = next
	}
}

// wordPhrase returns the phrase a word of a literal query is: its tokens
// (phraseTokens), the last a prefix if the word ends in '*' or in a lone
// CJK letter (the text may go on with more: the letter starts the pair
// the text has there).
func wordPhrase(w string) phrase {
	p := phrase{prefix: strings.HasSuffix(w, "*")}
	p.tokens = phraseTokens(strings.TrimRight(w, "*"))
	if n := len(p.tokens); n > 0 && !p.prefix && isLoneCJK(p.tokens[n-1]) && (n == 1 || !strings.HasSuffix(p.tokens[n-2], p.tokens[n-1])) {
		p.prefix = true
	}
	return p
}

// phraseTokens returns the tokens of a phrase: where a run of CJK letters
// ends it, the text may go on with more, so the token of the run's last
// letter alone is dropped (the pair before it has the letter).
func phraseTokens(s string) []string {
	toks := tokens(s)
	if n := len(toks); n >= 2 && isLoneCJK(toks[n-1]) && strings.HasSuffix(toks[n-2], toks[n-1]) {
		toks = toks[:n-1]
	}
	return toks
}

// isLoneCJK reports whether a token is one CJK letter.
func isLoneCJK(tok string) bool {
	r, n := utf8.DecodeRuneInString(tok)
	return n == len(tok) && isCJK(r)
}

// cjkQuery returns an FTS5 query with its CJK letters as the index has
// them (cjkText): a bareword that has some becomes the phrase of its
// tokens (wordPhrase), and a run of them in a string its tokens
// (phraseTokens, where the run ends the string).
func cjkQuery(q string) string {
	if cjkText(q) == q {
		return q
	}
	var sb strings.Builder
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == '"':
			j := i + 1
			for j < len(q) {
				if q[j] == '"' {
					if j+1 < len(q) && q[j+1] == '"' {
						j += 2
						continue
					}
					break
				}
				j++
			}
			inner := q[i+1 : min(j, len(q))]
			if cjkText(inner) != inner {
				inner = strings.Join(phraseTokens(inner), " ")
				// The tokens drop what is not a letter or digit: a
				// quote among them is gone too.
			}
			sb.WriteString(`"` + inner)
			if j < len(q) {
				sb.WriteByte('"')
			}
			i = j + 1
		case c >= utf8.RuneSelf || isTokenByte(c) || c == '_' || c == 0x1a:
			j := i
			for j < len(q) && (q[j] >= utf8.RuneSelf || isTokenByte(q[j]) || q[j] == '_' || q[j] == 0x1a) {
				j++
			}
			word := q[i:j]
			if cjkText(word) == word {
				sb.WriteString(word)
			} else {
				star := j < len(q) && q[j] == '*'
				if star {
					j++
					word += "*"
				}
				sb.WriteString(quotePhrase(wordPhrase(word)))
			}
			i = j
		default:
			sb.WriteByte(c)
			i++
		}
	}
	return sb.String()
}

// cjkText returns s as the full-text index reads it: each run of CJK
// letters replaced by its tokens (nextToken), each between spaces, the
// rest as it is; s itself when it has no CJK letter.
func cjkText(s string) string {
	first := -1
	for i := 0; i < len(s); i++ {
		if _, n := cjkAt(s, i); n > 0 {
			first = i
			break
		}
	}
	if first < 0 {
		return s
	}
	var sb strings.Builder
	sb.Grow(len(s) * 2)
	sb.WriteString(s[:first])
	for i := first; i < len(s); {
		if _, n := cjkAt(s, i); n == 0 {
			sb.WriteByte(s[i])
			i++
			continue
		}
		for {
			end, next := tokenAt(s, i)
			sb.WriteByte(' ')
			sb.WriteString(s[i:end])
			i = next
			if _, n := cjkAt(s, i); n == 0 {
				break
			}
		}
		sb.WriteByte(' ')
	}
	return sb.String()
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
		p := wordPhrase(w)
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
		var p phrase
		switch {
		case bare && j < len(q) && q[j] == '*':
			p = wordPhrase(word + "*")
		case bare:
			p = wordPhrase(word)
		default:
			p = phrase{tokens: phraseTokens(word), prefix: j < len(q) && q[j] == '*'}
		}
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
