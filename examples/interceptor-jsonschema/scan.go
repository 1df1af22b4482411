package main

import (
	"encoding/json"
	"math"
	"math/bits"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// The fast path: one pass over the document's bytes that checks its
// syntax and the schema together, building nothing and allocating
// nothing for the common case, and says only "valid" or "not sure". Only
// a document it does not accept goes through the tree (parse.go) and
// check, which find the failing path and word the message, and which
// have the last word: the fast path accepts a subset of what check
// accepts (it checks every duplicate of a property where the tree keeps
// the last, and gives up past maxDepth), never more. In a WebAssembly
// guest the tree cost ~20 µs per KiB of JSON, most of it allocating and
// collecting maps, slices and strings that a passing record never needs.

// Value kinds, as bits of a schema's allowed types.
const (
	kindObject uint8 = 1 << iota
	kindArray
	kindString
	kindInteger
	kindFraction // a number that is not an integer
	kindBoolean
	kindNull
)

var typeBits = map[string]uint8{
	"object": kindObject, "array": kindArray, "string": kindString,
	"number": kindInteger | kindFraction, "integer": kindInteger,
	"boolean": kindBoolean, "null": kindNull,
}

// field is what an object schema knows of one property name.
type field struct {
	sub *Schema // from properties; nil when the name is only required
	req int     // bit in the required set, or -1
}

// fast is the part of a Schema the fast path reads, derived once by
// prepare.
type fast struct {
	free   bool  // no constraint at all: check the syntax only
	slow   bool  // enum or const with an object or array: check through the tree
	kinds  uint8 // allowed kinds; 0 for any
	fields map[string]field
	// names and byName are fields as two slices when there are few: a
	// linear scan comparing lengths first beats hashing in a guest.
	names    []string
	byName   []field
	words    []uint64 // names[i] as a little-endian word when at most 8 bytes
	reqMask  uint64   // every required bit set
	strings  bool     // the string's content matters (length, pattern, enum, const)
	floats   bool     // the number's value matters (bounds, enum, const, integer)
	literals []any    // enum values, and the const as the last one when there is one
}

// prepare derives the fast-path view of s and of its sub-schemas.
func (s *Schema) prepare() {
	if s == noneAllowed {
		return
	}
	f := &s.fast
	for _, t := range s.Types {
		f.kinds |= typeBits[t]
	}
	f.literals = append(f.literals, s.Enum...)
	if s.HasConst {
		f.literals = append(f.literals, s.Const)
	}
	for _, v := range f.literals {
		switch v.(type) {
		case map[string]any, []any:
			f.slow = true
		}
	}
	if len(s.Required) > 64 {
		f.slow = true
	}
	if len(s.Properties) > 0 || len(s.Required) > 0 {
		f.fields = make(map[string]field, len(s.Properties)+len(s.Required))
		for name, sub := range s.Properties {
			sub.prepare()
			f.fields[name] = field{sub: sub, req: -1}
		}
		n := 0
		for _, name := range s.Required {
			fd, ok := f.fields[name]
			if !ok {
				fd.req = -1
			}
			if fd.req < 0 && n < 64 {
				fd.req = n
				f.reqMask |= 1 << n
				n++
			}
			f.fields[name] = fd
		}
	}
	if len(f.fields) <= 8 {
		for name, fd := range f.fields {
			f.names = append(f.names, name)
			f.byName = append(f.byName, fd)
			var w uint64
			if len(name) <= 8 {
				for i := len(name) - 1; i >= 0; i-- {
					w = w<<8 | uint64(name[i])
				}
			}
			f.words = append(f.words, w)
		}
	}
	if s.Additional != nil {
		s.Additional.prepare()
	}
	if s.Items != nil {
		s.Items.prepare()
	}
	f.strings = s.MinLength > 0 || s.MaxLength >= 0 || s.Pattern != nil || len(f.literals) > 0
	integerOnly := f.kinds&(kindInteger|kindFraction) == kindInteger
	f.floats = integerOnly || s.Minimum != nil || s.Maximum != nil || s.ExclMin != nil || s.ExclMax != nil || len(f.literals) > 0
	f.free = f.kinds == 0 && !f.slow && len(f.literals) == 0 && f.fields == nil && s.Additional == nil &&
		s.Items == nil && s.MinItems == 0 && s.MaxItems < 0 && !f.strings && !f.floats && !s.never
}

// field looks up a property name. When avail >= 8 bytes can be read
// from the name's first byte, a name of 1 to 8 bytes is compared as
// one masked word: a string comparison is two calls in a guest.
func (f *fast) field(name string, avail int) (field, bool) {
	if f.names == nil {
		fd, ok := f.fields[name]
		return fd, ok
	}
	if len(name) > 0 && len(name) <= 8 && avail >= 8 {
		w := *(*uint64)(unsafe.Pointer(unsafe.StringData(name))) & (^uint64(0) >> (64 - 8*uint(len(name))))
		for i, n := range f.names {
			if len(n) == len(name) && f.words[i] == w {
				return f.byName[i], true
			}
		}
		return field{}, false
	}
	for i, n := range f.names {
		if len(n) == len(name) && n == name {
			return f.byName[i], true
		}
	}
	return field{}, false
}

// scanner walks one document for the fast path.
type scanner struct {
	b     []byte
	i     int
	depth int
}

// valid reports whether doc is one JSON document that s accepts; false
// means "look closer", not "invalid".
func (s *Schema) valid(doc []byte) bool {
	sc := scanner{b: doc}
	if !sc.value(s) {
		return false
	}
	sc.space()
	return sc.i == len(sc.b)
}

func (sc *scanner) space() {
	for sc.i < len(sc.b) {
		switch sc.b[sc.i] {
		case ' ', '\t', '\n', '\r':
			sc.i++
		default:
			return
		}
	}
}

// value checks the value at sc.i against s (nil: anything).
func (sc *scanner) value(s *Schema) bool {
	sc.space()
	if sc.i >= len(sc.b) {
		return false
	}
	if s == nil || s.fast.free {
		return sc.skip()
	}
	if s.never {
		return false
	}
	if s.fast.slow {
		start := sc.i
		if !sc.skip() {
			return false
		}
		v, err := parseJSON(sc.b[start:sc.i])
		return err == nil && s.check(v, nil) == nil
	}
	k := s.fast.kinds
	switch c := sc.b[sc.i]; {
	case c == '{':
		// Scalar literals never equal an object or an array.
		return (k == 0 || k&kindObject != 0) && len(s.fast.literals) == 0 && sc.object(s)
	case c == '[':
		return (k == 0 || k&kindArray != 0) && len(s.fast.literals) == 0 && sc.array(s)
	case c == '"':
		return (k == 0 || k&kindString != 0) && sc.str(s)
	case c == '-' || c >= '0' && c <= '9':
		return sc.number(s)
	case c == 't':
		return (k == 0 || k&kindBoolean != 0) && sc.literal("true") && s.literal(true)
	case c == 'f':
		return (k == 0 || k&kindBoolean != 0) && sc.literal("false") && s.literal(false)
	case c == 'n':
		return (k == 0 || k&kindNull != 0) && sc.literal("null") && s.literal(nil)
	}
	return false
}

// literal checks a boolean or null against enum and const.
func (s *Schema) literal(v any) bool {
	return len(s.fast.literals) == 0 || s.matches(func(e any) bool { return e == v })
}

// skip checks the syntax of the value at sc.i.
func (sc *scanner) skip() bool {
	sc.space()
	if sc.i >= len(sc.b) {
		return false
	}
	switch c := sc.b[sc.i]; {
	case c == '{':
		return sc.object(nil)
	case c == '[':
		return sc.array(nil)
	case c == '"':
		_, _, ok := sc.stringEnd(false)
		return ok
	case c == '-' || c >= '0' && c <= '9':
		_, ok := sc.numberEnd()
		return ok
	case c == 't':
		return sc.literal("true")
	case c == 'f':
		return sc.literal("false")
	case c == 'n':
		return sc.literal("null")
	}
	return false
}

func (sc *scanner) literal(word string) bool {
	if len(sc.b)-sc.i < len(word) || string(sc.b[sc.i:sc.i+len(word)]) != word {
		return false
	}
	sc.i += len(word)
	return true
}

// object checks an object at sc.i ('{') against s (nil: anything).
func (sc *scanner) object(s *Schema) bool {
	if sc.depth++; sc.depth > maxDepth {
		return false
	}
	sc.i++
	var seen uint64
	sc.space()
	if sc.i < len(sc.b) && sc.b[sc.i] == '}' {
		sc.i++
		sc.depth--
		return s == nil || s.fast.reqMask == 0
	}
	for {
		sc.space()
		if sc.i >= len(sc.b) || sc.b[sc.i] != '"' {
			return false
		}
		start := sc.i
		end, plain, ok := sc.stringEnd(s != nil)
		if !ok {
			return false
		}
		sc.space()
		if sc.i >= len(sc.b) || sc.b[sc.i] != ':' {
			return false
		}
		sc.i++
		var sub *Schema
		if s != nil {
			var name string
			avail := 0 // bytes readable from name's first
			if plain {
				name = alias(sc.b[start+1 : end])
				avail = len(sc.b) - start - 1
			} else {
				p := parser{b: sc.b, i: start}
				v, err := p.str() // escapes or bad UTF-8: decode as the tree does
				if err != nil {
					return false
				}
				name = v.(string)
			}
			fd, ok := s.fast.field(name, avail)
			if fd.req >= 0 && ok {
				seen |= 1 << fd.req
			}
			sub = fd.sub
			if sub == nil {
				if s.Additional == noneAllowed {
					return false
				}
				sub = s.Additional
			}
		}
		if !sc.value(sub) {
			return false
		}
		sc.space()
		if sc.i >= len(sc.b) {
			return false
		}
		switch sc.b[sc.i] {
		case ',':
			sc.i++
		case '}':
			sc.i++
			sc.depth--
			return s == nil || seen == s.fast.reqMask
		default:
			return false
		}
	}
}

// array checks an array at sc.i ('[') against s (nil: anything).
func (sc *scanner) array(s *Schema) bool {
	if sc.depth++; sc.depth > maxDepth {
		return false
	}
	sc.i++
	var items *Schema
	if s != nil {
		items = s.Items
	}
	n := 0
	sc.space()
	if sc.i < len(sc.b) && sc.b[sc.i] == ']' {
		sc.i++
	} else {
		for {
			if !sc.value(items) {
				return false
			}
			n++
			sc.space()
			if sc.i >= len(sc.b) {
				return false
			}
			if sc.b[sc.i] == ']' {
				sc.i++
				break
			}
			if sc.b[sc.i] != ',' {
				return false
			}
			sc.i++
		}
	}
	sc.depth--
	return s == nil || n >= s.MinItems && (s.MaxItems < 0 || n <= s.MaxItems)
}

// stringEnd finds the end of the string at sc.i ('"'), checking its
// escapes and control characters as the tree's parser does, and moves
// past it. end is the closing quote's offset; plain says the string has
// no escape and is valid UTF-8, so its bytes are its value (checked only
// when want is set: a string whose content no keyword reads needs no
// UTF-8 pass).
func (sc *scanner) stringEnd(want bool) (end int, plain, ok bool) {
	b := sc.b
	i := sc.i + 1
	start := i
	escapes := false
	base := unsafe.Pointer(unsafe.SliceData(b))
	for {
		// Move i to the next '"', '\\' or control character: 16, then 8
		// bytes at a time with unaligned loads (the Go wasm compiler does
		// not combine byte loads, and a loop iteration costs more than its
		// arithmetic), and the first such byte of a word found from its
		// mask's lowest bit, so that a string's bytes are never stepped
		// through one by one (which cost ~0.5 µs per record for the five
		// short strings of the benchmark's document in a guest).
	find:
		for {
			switch {
			case len(b)-i >= 16:
				p := unsafe.Add(base, i)
				m0, m1 := special(*(*uint64)(p)), special(*(*uint64)(unsafe.Add(p, 8)))
				if m0|m1 == 0 {
					i += 16
					continue
				}
				if m0 != 0 {
					i += bits.TrailingZeros64(m0) >> 3
				} else {
					i += 8 + bits.TrailingZeros64(m1)>>3
				}
				break find
			case len(b)-i >= 8:
				if m := special(*(*uint64)(unsafe.Add(base, i))); m != 0 {
					i += bits.TrailingZeros64(m) >> 3
					break find
				}
				i += 8
			default:
				for i < len(b) && b[i] != '"' && b[i] != '\\' && b[i] >= 0x20 {
					i++
				}
				break find
			}
		}
		if i >= len(b) {
			return 0, false, false
		}
		c := b[i]
		switch {
		case c == '"':
			sc.i = i + 1
			plain = want && !escapes && utf8.Valid(b[start:i])
			return i, plain, true
		case c == '\\':
			escapes = true
			if i+1 >= len(b) {
				return 0, false, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if len(b)-i < 6 || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					return 0, false, false
				}
				i += 6
			default:
				return 0, false, false
			}
		case c < 0x20:
			return 0, false, false
		default:
			i++
		}
	}
}

// special has a high bit set in each byte of x that is '"', '\\' or a
// control character (plain8's test, as bits). A byte above a special one
// may be marked too (a borrow), never one below it: the lowest set bit
// is the first special byte.
func special(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	quote := x ^ (ones * '"')
	slash := x ^ (ones * '\\')
	return ((quote-ones)&^quote | (slash-ones)&^slash | (x-ones*0x20)&^x) & highs
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// str checks a string at sc.i against s.
func (sc *scanner) str(s *Schema) bool {
	start := sc.i
	end, plain, ok := sc.stringEnd(s.fast.strings)
	if !ok {
		return false
	}
	if !s.fast.strings {
		return true
	}
	var v string
	if plain {
		v = alias(sc.b[start+1 : end])
	} else {
		p := parser{b: sc.b, i: start}
		d, err := p.str()
		if err != nil {
			return false
		}
		v = d.(string)
	}
	if s.MinLength > 0 || s.MaxLength >= 0 {
		n := utf8.RuneCountInString(v)
		if n < s.MinLength || s.MaxLength >= 0 && n > s.MaxLength {
			return false
		}
	}
	if s.Pattern != nil && !s.Pattern.MatchString(v) {
		return false
	}
	return s.matches(func(e any) bool { str, ok := e.(string); return ok && str == v })
}

// matches checks enum and const with eq, which compares a literal of the
// schema with the value.
func (s *Schema) matches(eq func(any) bool) bool {
	if s.Enum != nil {
		found := false
		for _, e := range s.Enum {
			if eq(e) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return !s.HasConst || eq(s.Const)
}

// numberEnd moves past the number at sc.i, checking its grammar as the
// tree's parser does, and reports whether it has only digits (an
// optional '-', no fraction or exponent).
func (sc *scanner) numberEnd() (digitsOnly, ok bool) {
	b := sc.b
	i := sc.i
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return false, false
	}
	digitsOnly = true
	if i < len(b) && b[i] == '.' {
		i++
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return false, false
		}
		digitsOnly = false
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return false, false
		}
		digitsOnly = false
	}
	sc.i = i
	return digitsOnly, true
}

// number checks a number at sc.i against s.
func (sc *scanner) number(s *Schema) bool {
	start := sc.i
	digitsOnly, ok := sc.numberEnd()
	if !ok {
		return false
	}
	k := s.fast.kinds
	if k != 0 && k&(kindInteger|kindFraction) == 0 {
		return false
	}
	if !s.fast.floats {
		return true
	}
	text := sc.b[start:sc.i]
	var f float64
	integer := false
	if digitsOnly && len(text) <= 15 {
		// Exact in a float64, and what strconv would return.
		neg := text[0] == '-'
		for _, c := range text[btoi(neg):] {
			f = f*10 + float64(c-'0')
		}
		if neg {
			f = -f
		}
		integer = true
	} else {
		var err error
		f, err = strconv.ParseFloat(alias(text), 64)
		integer = err == nil && f == math.Trunc(f) && !math.IsInf(f, 0)
	}
	if k != 0 && !integer && k&kindFraction == 0 {
		return false
	}
	switch {
	case s.Minimum != nil && f < *s.Minimum,
		s.Maximum != nil && f > *s.Maximum,
		s.ExclMin != nil && f <= *s.ExclMin,
		s.ExclMax != nil && f >= *s.ExclMax:
		return false
	}
	if len(s.fast.literals) == 0 {
		return true
	}
	return s.matches(func(e any) bool {
		n, ok := e.(json.Number)
		if !ok {
			return false
		}
		ef, _ := n.Float64()
		return ef == f
	})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
