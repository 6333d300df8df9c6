package redact

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/scribe-archive/scribe/internal/jsonpatch"
	"github.com/scribe-archive/scribe/session/source"
)

// withWindow sets the window of long texts for a test.
func withWindow(t *testing.T, n int) {
	old := window
	window = n
	t.Cleanup(func() { window = old })
}

// lineFields returns the text fields of a JSON line as the adapters give
// them (long ones undecoded), and the same fields decoded.
func lineFields(line []byte) (long, decoded []source.TextField) {
	notText := func(p []string) bool { return p[len(p)-1] == "type" || p[len(p)-1] == "role" }
	long = jsonpatch.TextValues[source.TextField](line, notText, func(s string) bool { return s != "" })
	for _, f := range long {
		f.Text, f.Long = FieldText(line, f), false
		decoded = append(decoded, f)
	}
	return long, decoded
}

// longPrompt returns a line whose text fields are texts, JSON-encoded
// (each of 1 MiB or more is long), as message.content.N.text blocks.
func longPrompt(texts ...string) []byte {
	type block struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	var blocks []block
	for _, s := range texts {
		blocks = append(blocks, block{"text", s})
	}
	line, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": blocks}})
	return line
}

// filler returns about n bytes of prose with escapes (tabs, quotes,
// non-ASCII letters), in lines of 60 or so.
func filler(rng *rand.Rand, n int) string {
	words := strings.Fields("the of and to é→ \"quoted\" tab\there build test go func 😀 return value")
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(words[rng.IntN(len(words))])
		if rng.IntN(10) == 0 {
			b.WriteByte('\n')
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// TestLongLineSameAsWhole: a line whose long fields are scanned a window
// at a time is redacted as the line whose fields are decoded whole: the
// same bytes and the same replacements, with secrets planted across the
// windows' edges, repeated in a short field, cut between two blocks, in a
// key block, or nowhere.
func TestLongLineSameAsWhole(t *testing.T) {
	r := newRedactor(t)
	rng := rand.New(rand.NewPCG(7, 18))
	secrets := []string{
		"aws_access_key_id = " + planted["aws-access-token"],
		"export GITHUB_TOKEN=" + planted["github-pat"],
		"SLACK=" + planted["slack-bot-token"],
		"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n-----END RSA PRIVATE KEY-----",
	}
	for _, w := range []int{4096, 70_000, 100_003, 1 << 20} {
		withWindow(t, w)
		for trial := 0; trial < 6; trial++ {
			text := filler(rng, jsonpatch.LongText+rng.IntN(200_000))
			var plantedAt []string
			switch trial {
			case 0: // nothing to find
			case 5: // a secret cut between a long block and the next
				text += "the npm token is npm_Xq7mLv4Tz9Wc1Np5"
			default:
				// Secrets around multiples of the window (in text
				// bytes, near enough), and at random places.
				for k := 0; k < 4; k++ {
					s := secrets[rng.IntN(len(secrets))]
					at := rng.IntN(len(text))
					if k%2 == 0 {
						at = min(len(text)-1, (1+rng.IntN(8))*w-len(s)/2-rng.IntN(8))
					}
					for at > 0 && !isRuneStart(text[at]) {
						at--
					}
					text = text[:at] + "\n" + s + "\n" + text[at:]
					plantedAt = append(plantedAt, s)
				}
			}
			next := "Hs3Jd6Fb0Ga2YeQ4K8r2 and more"
			short := "and a short field"
			if trial == 2 {
				short += " " + secrets[0]
			}
			line := longPrompt(text, next, short)
			long, decoded := lineFields(line)
			if !long[0].Long || decoded[0].Long {
				t.Fatalf("the first field is not long")
			}
			got, gotReps := r.Line(line, long)
			want, wantReps := r.Line(line, decoded)
			if !bytes.Equal(got, want) {
				t.Fatalf("window %d, trial %d: the lines differ (%d and %d bytes)", w, trial, len(got), len(want))
			}
			if !reflect.DeepEqual(gotReps, wantReps) {
				t.Fatalf("window %d, trial %d: replacements\n got %+v\nwant %+v", w, trial, gotReps, wantReps)
			}
			for _, s := range plantedAt {
				if bytes.Contains(got, []byte(jsonpatch.EncodeString(s[strings.LastIndexAny(s, " =\n")+1:])[1:20])) {
					t.Errorf("window %d, trial %d: %q is still in the line", w, trial, s)
				}
			}
			if trial == 5 && len(gotReps) == 0 {
				t.Errorf("window %d: the token cut between the blocks is not found", w)
			}
		}
	}
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// TestStraddlingWindowEdge: a secret whose text straddles the edge of two
// windows of a long field is found and replaced.
func TestStraddlingWindowEdge(t *testing.T) {
	r := newRedactor(t)
	const w = 100_000
	withWindow(t, w)
	secret := planted["github-pat"]
	for _, cut := range []int{1, len(secret) / 2, len(secret) - 1} {
		// The stream's first window holds about w bytes of text (ASCII
		// here, one byte a character): put the edge inside the token.
		head := strings.Repeat("x", 59) + "\n"
		text := strings.Repeat(head, (w-cut-len("token: "))/len(head))
		text += strings.Repeat("y", w-cut-len("token: ")-len(text))
		text += "token: " + secret + "\n" + strings.Repeat(head, jsonpatch.LongText/len(head))
		line := longPrompt(text)
		long, _ := lineFields(line)
		got, reps := r.Line(line, long)
		if bytes.Contains(got, []byte(secret)) || len(reps) == 0 {
			t.Errorf("a token cut %d bytes into it by the window's edge is not replaced: %+v", cut, reps)
		}
	}
}

// TestFindStreamSameAsWhole: the detector finds in a text read a window at
// a time what it finds in the whole, in the same order.
func TestFindStreamSameAsWhole(t *testing.T) {
	d := newRedactor(t).detector()
	rng := rand.New(rand.NewPCG(3, 18))
	key := "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACDzJ4VJm8CjPqNx2bY5cWqVhGz3h0c5zYc3bqZtqWn7PwAAAJgAAAAAAAAAA\n-----END OPENSSH PRIVATE KEY-----"
	for i := 0; i < 20; i++ {
		text := filler(rng, 300_000)
		for k := 0; k < 3; k++ {
			at := rng.IntN(len(text))
			for at > 0 && !isRuneStart(text[at]) {
				at--
			}
			s := []string{key, "aws_access_key_id = " + planted["aws-access-token"], "STRIPE=" + planted["stripe-access-token"]}[k]
			text = text[:at] + "\n" + s + "\n" + text[at:]
		}
		if i%3 == 0 {
			text = strings.ReplaceAll(text, "\n", " ") // lines longer than a chunk
		}
		line, _ := json.Marshal(text)
		withWindow(t, 1000+rng.IntN(100_000))
		got := d.find(func() *textStream { return &textStream{src: jsonpatch.NewTextWindows(line)} })
		want := d.Find(text)
		if !reflect.DeepEqual(got, want) || len(want) < 3 {
			t.Fatalf("text %d: got %v, want %v", i, got, want)
		}
	}
}
