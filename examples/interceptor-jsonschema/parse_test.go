package main

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// TestParseMatchesEncodingJSON checks that the validator's parser builds
// the tree encoding/json's Decoder builds with UseNumber, and refuses what
// it refuses.
func TestParseMatchesEncodingJSON(t *testing.T) {
	docs := []string{
		`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.5e-3`, `-12E+4`, `"x"`, ` {"a" : [1, "b", null, {"c":false}] } `,
		`{"a":1,"a":2}`, `{"":3}`, `"esc \" \\ \/ \b \f \n \r \t \u00e9 \ud83d\ude00"`, `"lone \ud800 x"`, `"\ud800\u0041"`,
		`"héllo wörld, a longer string of more than eight bytes"`, `"bad utf8 ` + "\xff\xfe" + ` here"`,
		`{"note":"` + string(bytes.Repeat([]byte("x"), 1000)) + `"}`,
		// refused
		``, `{`, `[1,]`, `{"a":}`, `{"a" 1}`, `01`, `1.`, `1e`, `-`, `.5`, `+1`, `tru`, `nul`, `"abc`, "\"a\tb\"", `"\x"`, `"\u12"`,
		`{} {}`, `[1] x`, `{"a":1,}`, `[1 2]`,
	}
	for _, doc := range docs {
		var want any
		d := json.NewDecoder(bytes.NewReader([]byte(doc)))
		d.UseNumber()
		werr := d.Decode(&want)
		if werr == nil {
			var rest any
			if d.Decode(&rest) == nil || d.More() {
				werr = errNotJSON
			}
		}
		got, gerr := parseJSON([]byte(doc))
		if (werr == nil) != (gerr == nil) {
			t.Errorf("%q: encoding/json %v, parser %v", doc, werr, gerr)
			continue
		}
		if werr == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("%q: got %#v, want %#v", doc, got, want)
		}
	}
}

func TestPlain8(t *testing.T) {
	for _, c := range []byte{'"', '\\', 0, 0x1f, '\n'} {
		for pos := range 8 {
			b := []byte("abcdefgh")
			b[pos] = c
			if plain8(leUint64(b)) {
				t.Errorf("byte %#x at %d not seen", c, pos)
			}
		}
	}
	if !plain8(leUint64([]byte("ab cd~\x7f\xff"))) {
		t.Error("plain bytes refused")
	}
}

func leUint64(b []byte) uint64 {
	var x uint64
	for i := 7; i >= 0; i-- {
		x = x<<8 | uint64(b[i])
	}
	return x
}
