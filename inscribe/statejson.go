package inscribe

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/scribe-archive/scribe/internal/jsonpatch"
)

// decodeState decodes a read note into st as encoding/json would, in one
// pass over the bytes, for a note as scribe writes it: the fields of a
// docState, strings without escapes, whole numbers. Anything else (an
// escape, a fraction, a null, a key it does not know) makes it report
// false, and the caller decodes the note with encoding/json, whose answer
// is the reference (FuzzDecodeState). An append over an unchanged tree
// reads one note per document, and encoding/json, which scans the bytes
// twice and fills the fields by reflection, was a tenth of its time.
func decodeState(data []byte, st *docState) bool { return decodeNote(data, st, 0) }

// maxNoteDepth bounds the notes within notes (Next) the fast decoder
// follows: a note holds one at most.
const maxNoteDepth = 4

func decodeNote(data []byte, st *docState, depth int) bool {
	if depth > maxNoteDepth {
		return false
	}
	return jsonpatch.Members(data, func(key []byte, start, end int) bool {
		v := data[start:end]
		switch string(key) {
		case "version":
			return intValue(v, &st.Version)
		case "source":
			return stringValue(v, &st.Source)
		case "size":
			return int64Value(v, &st.Size)
		case "tail_hash":
			return stringValue(v, &st.TailHash)
		case "seen":
			return int64Value(v, &st.Seen)
		case "open_offset":
			return int64Value(v, &st.OpenOffset)
		case "open_line":
			return intValue(v, &st.OpenLine)
		case "closed_hash":
			return stringValue(v, &st.ClosedHash)
		case "closed_tail":
			return stringValue(v, &st.ClosedTail)
		case "open_first_id":
			return stringValue(v, &st.OpenFirstID)
		case "doc_open_at":
			return int64Value(v, &st.DocOpenAt)
		case "doc_tail_hash":
			return stringValue(v, &st.DocTailHash)
		case "builder":
			if !json.Valid(v) {
				return false
			}
			st.Builder = append(json.RawMessage(nil), v...)
			return true
		case "doc_format":
			return stringValue(v, &st.DocFormat)
		case "graph_size":
			return int64Value(v, &st.GraphSize)
		// A pointer already set is decoded into again, as encoding/json
		// does with a key given twice.
		case "rounds_size":
			if st.RoundsSize == nil {
				st.RoundsSize = new(int64)
			}
			return int64Value(v, st.RoundsSize)
		case "open_round":
			if st.OpenRound == nil {
				st.OpenRound = &roundSum{}
			}
			return decodeRoundSum(v, st.OpenRound)
		case "next":
			if st.Next == nil {
				st.Next = &docState{}
			}
			return decodeNote(v, st.Next, depth+1)
		case "none":
			return boolValue(v, &st.None)
		}
		return false
	})
}

func decodeRoundSum(data []byte, r *roundSum) bool {
	return jsonpatch.Members(data, func(key []byte, start, end int) bool {
		v := data[start:end]
		switch string(key) {
		case "round":
			return intValue(v, &r.Round)
		case "size":
			return int64Value(v, &r.Size)
		case "sum":
			return stringValue(v, &r.Sum)
		case "sha256":
			return stringValue(v, &r.SHA256)
		}
		return false
	})
}

// stringValue reads a JSON string without escapes, of valid UTF-8.
func stringValue(v []byte, to *string) bool {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return false
	}
	s := v[1 : len(v)-1]
	for _, c := range s {
		if c == '\\' || c < 0x20 {
			return false
		}
	}
	if !utf8.Valid(s) {
		return false
	}
	*to = string(s)
	return true
}

// integer reads a JSON number that is a whole number of bits bits.
func integer(v []byte, bits int) (int64, bool) {
	digits := v
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 1 && digits[0] == '0' {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(string(v), 10, bits)
	return n, err == nil
}

func int64Value(v []byte, to *int64) bool {
	n, ok := integer(v, 64)
	*to = n
	return ok
}

func intValue(v []byte, to *int) bool {
	n, ok := integer(v, strconv.IntSize)
	*to = int(n)
	return ok
}

func boolValue(v []byte, to *bool) bool {
	switch string(v) {
	case "true":
		*to = true
	case "false":
		*to = false
	default:
		return false
	}
	return true
}
