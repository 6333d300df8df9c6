package document

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"testing"
)

// decodeTreeByTokens is what decodeTree was: encoding/json's Decoder, token
// by token. FuzzDecodeTree holds decodeTree to it.
func decodeTreeByTokens(data []byte) (*jnode, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := decodeTokens(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("JSON value followed by more data")
	}
	return n, nil
}

func decodeTokens(dec *json.Decoder) (*jnode, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch v := tok.(type) {
	case json.Delim:
		n := &jnode{kind: 'a'}
		if v == '{' {
			n.kind = 'o'
		}
		for dec.More() {
			if n.kind == 'o' {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, k.(string))
			}
			kid, err := decodeTokens(dec)
			if err != nil {
				return nil, err
			}
			n.kids = append(n.kids, kid)
		}
		_, err := dec.Token()
		return n, err
	case string:
		return &jnode{kind: 's', str: v}, nil
	case json.Number:
		return &jnode{kind: 'n', str: string(v)}, nil
	case bool:
		return &jnode{kind: 'b', str: strconv.FormatBool(v)}, nil
	case nil:
		return &jnode{kind: 'z'}, nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

// FuzzDecodeTree: decodeTree accepts what encoding/json's Decoder accepts
// and gives the same tree: keys in order, repeated keys, number literals,
// strings decoded alike (escapes, surrogates, bytes that are not UTF-8).
func FuzzDecodeTree(f *testing.F) {
	for _, s := range []string{
		`{"command":"ls -la","description":"List files"}`,
		`{"a":1,"a":2,"b":[1.50,-0,2e10,true,false,null,{}],"c":{"d":[]}}`,
		` [ "x" , "\u00e9\ud83d\ude00\ud800\\\"\/\b\f\n\r\t" ] `,
		"\"bad \xff byte \xe2\x82\"",
		`"\udc00\ud800\u0041"`,
		`{"k\u0022":"v"}`,
		`1 2`, `{"a":}`, `[1,]`, `01`, `"`, ``, `{"a":1}x`, "\"ctl\x01\"", `nul`, `-`, `1.`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := decodeTree(data)
		want, werr := decodeTreeByTokens(data)
		if (err == nil) != (werr == nil) {
			t.Fatalf("%q: decodeTree error %v, the Decoder's %v", data, err, werr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: decodeTree gives %s, the Decoder %s", data, got.bytes(false), want.bytes(false))
		}
	})
}
