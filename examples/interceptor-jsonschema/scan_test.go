package main

import (
	"strings"
	"testing"
)

// scanSchemas cover every keyword the fast path reads.
var scanSchemas = []string{
	orderSchema,
	`true`, `false`, `{}`,
	`{"type": ["string", "null"], "minLength": 2, "maxLength": 4}`,
	`{"type": "number", "minimum": -1.5, "exclusiveMaximum": 10}`,
	`{"type": "integer", "maximum": 1e3, "exclusiveMinimum": 0}`,
	`{"enum": ["a", 1, true, null, 2.5]}`,
	`{"enum": [{"a": 1}, [1, 2]]}`,
	`{"const": "é"}`, `{"const": false}`, `{"const": 1}`,
	`{"type": "object", "properties": {"a": false, "b": {"type": "boolean"}}, "required": ["b", "c", "b"]}`,
	`{"properties": {"x": {"pattern": "^é+$"}}, "additionalProperties": {"type": "integer"}}`,
	`{"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": ["integer", "string"]}}`,
	`{"items": {"items": {"const": [1]}}}`,
}

// scanDocs are valid and invalid documents, syntax errors among them.
var scanDocs = []string{
	`{"id":"o-1","qty":2}`, `{"id":"o-1","qty":2,"tags":["a"],"ship":{"country":"FR"}}`, `{"id":"o-1"}`,
	`{"id":"o-1","qty":"2"}`, `{"id":"o-1","qty":2.5}`, `{"id":"o-1","qty":2.0}`, `{"id":"o-1","qty":2e0}`, `{"id":"o-1","qty":0}`,
	`{"id":"x","qty":1}`, `{"id":"o-1","qty":1,"tags":["a",3]}`, `{"id":"o-1","qty":1,"ship":{"country":"US"}}`,
	`{"id":"o-1","qty":1,"extra":true}`, `{"id":"o-1","qty":1,"qty":"x"}`, `{"id":"o-1","qty":"x","qty":1}`,
	`{"id":"o-\u0031","qty":1}`, `{"i\u0064":"o-1","qty":1}`, `{"id":"o-1","qty":1e400}`, `{"id":"o-1","qty":123456789012345678901234567890}`,
	`[1]`, `[]`, `[1,2,3]`, `["a",1]`, `[[1]]`, `[[1],[2]]`, `[1.5]`, `{}`, `{"a":1}`, `{"b":true}`, `{"b":true,"c":0}`,
	`{"b":true,"c":0,"a":1}`, `{"x":"éé","b":true,"c":1}`, `{"x":"e","y":1}`, `{"y":1.5}`,
	`"a"`, `"ab"`, `"abcd"`, `"abcde"`, `"é"`, `"\u00e9"`, `"\u00e9\u00e9"`, "\"\xff\xfe\"", `null`, `true`, `false`,
	`1`, `-0`, `0`, `-1.5`, `-2`, `10`, `9.99`, `1000`, `1001`, `2.5`, `25e-1`, `1E3`,
	`{"a":1}`, `[1, 2]`, `{"a": 1}`, `[ ]`, ` { } `,
	// refused by the parser
	``, `{`, `[1,]`, `{"a":}`, `{"a" 1}`, `01`, `1.`, `1e`, `-`, `.5`, `+1`, `tru`, `nul`, `"abc`, "\"a\tb\"", `"\x"`, `"\u12"`,
	`{} {}`, `[1] x`, `{"a":1,}`, `[1 2]`, `{"a":1 "b":2}`, `{1:2}`, `"\ud800\u00zz"`,
	`"a longer string of more than eight bytes with an \" escape inside"`,
	`"` + strings.Repeat("x", 1000) + `"`, `"` + strings.Repeat("x", 1001) + "\x01" + `"`,
	strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1),
	strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth),
}

// TestFastPathAgrees checks that the fast path accepts only what the tree
// accepts, and that it accepts the plain valid documents itself.
func TestFastPathAgrees(t *testing.T) {
	for _, raw := range scanSchemas {
		s, err := ParseSchema([]byte(raw))
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		for _, doc := range scanDocs {
			fast, tree := s.valid([]byte(doc)), s.explain([]byte(doc))
			if fast && tree != nil {
				t.Errorf("schema %s, doc %.60q: fast path accepts, tree says %v", raw, doc, tree)
			}
			// Duplicate names are the one case where the fast path may
			// defer to the tree for a valid document (it checks every
			// copy, the tree the last).
			if !fast && tree == nil && !strings.Contains(doc, `"qty":"x","qty"`) {
				t.Errorf("schema %s, doc %.60q: valid, but the fast path did not accept it", raw, doc)
			}
		}
	}
}

// TestValidateAllocs: a valid record costs no allocation, so a guest
// validating a stream never collects.
func TestValidateAllocs(t *testing.T) {
	s, err := ParseSchema([]byte(orderSchema))
	if err != nil {
		t.Fatal(err)
	}
	doc := []byte(`{"id":"o-12","qty":3,"tags":["` + strings.Repeat("x", 1000) + `"],"ship":{"country":"DE"}}`)
	if n := testing.AllocsPerRun(100, func() {
		if err := s.Validate(doc); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("%v allocations per valid document", n)
	}
}

// FuzzFastPath: for any schema of the seeds and any document, the fast
// path never accepts what the tree refuses.
func FuzzFastPath(f *testing.F) {
	for i, raw := range scanSchemas {
		for _, doc := range scanDocs {
			f.Add(i, []byte(doc))
		}
		f.Add(i, []byte(raw))
	}
	schemas := make([]*Schema, len(scanSchemas))
	for i, raw := range scanSchemas {
		s, err := ParseSchema([]byte(raw))
		if err != nil {
			f.Fatal(err)
		}
		schemas[i] = s
	}
	f.Fuzz(func(t *testing.T, i int, doc []byte) {
		s := schemas[uint(i)%uint(len(schemas))]
		if s.valid(doc) {
			if err := s.explain(doc); err != nil {
				t.Fatalf("fast path accepts %q, tree says %v", doc, err)
			}
		}
	})
}

func BenchmarkValidate(b *testing.B) {
	s, err := ParseSchema([]byte(`{"type": "object", "required": ["id", "qty"], "properties": {"id": {"type": "string"}, "qty": {"type": "integer", "minimum": 1}, "note": {"type": "string"}}}`))
	if err != nil {
		b.Fatal(err)
	}
	doc := []byte(`{"id":"o-1","qty":3,"note":"` + strings.Repeat("x", 1024-30) + `"}`)
	for _, tc := range []struct {
		name string
		fn   func([]byte) error
	}{{"fast", s.Validate}, {"tree", s.explain}} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				if err := tc.fn(doc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestFastPathEveryOffset places an escape, a control character, a
// multi-byte character and the closing quote at every offset of the 16-
// and 8-byte windows the string scan reads, and property names of every
// length around the 8-byte word the name lookup compares, at the end of
// the document too: the fast path and the tree agree on each.
func TestFastPathEveryOffset(t *testing.T) {
	s, err := ParseSchema([]byte(`{"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}, "abcdefgh": {"type": "integer"}, "abcdefg": {"type": "string"}, "": {"type": "boolean"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	var docs []string
	for n := 0; n <= 40; n++ {
		for _, mid := range []string{``, `\"`, `\\`, `\n`, `\u00e9`, "\x01", "é", "\xff"} {
			docs = append(docs, `{"id":"`+strings.Repeat("x", n)+mid+strings.Repeat("y", n%9)+`"}`)
		}
	}
	for n := 0; n <= 10; n++ {
		name := "abcdefghij"[:n]
		docs = append(docs, `{"id":"a","`+name+`":1}`, `{"id":"a","`+name+`":"s"}`, `{"`+name+`":true,"id":"a"}`, `{"id":"a","`+name+`"`)
	}
	for _, doc := range docs {
		for _, d := range []string{doc, doc[:len(doc)-1]} {
			fast, tree := s.valid([]byte(d)), s.explain([]byte(d))
			if fast != (tree == nil) {
				t.Errorf("doc %q: fast path %v, tree %v", d, fast, tree)
			}
		}
	}
}
