package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// maxDepth bounds the nesting of a validated document, as encoding/json
// does (10,000), so a hostile value cannot exhaust the guest's stack.
const maxDepth = 10000

// parser decodes one JSON document into the tree encoding/json's Decoder
// with UseNumber builds (map[string]any, []any, string, json.Number, bool,
// nil) in one pass over the bytes. encoding/json's scanner makes an
// indirect call per byte and reads the document twice (once to find its
// end, once to decode it), which in a WebAssembly guest cost about 100 µs
// per KiB; this costs a few.
type parser struct {
	b     []byte
	i     int
	depth int
}

type syntaxError struct {
	msg string
	off int
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%s at offset %d", e.msg, e.off) }

// parseJSON decodes doc, which must hold exactly one JSON value surrounded
// by optional whitespace.
func parseJSON(doc []byte) (any, error) {
	p := &parser{b: doc}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i < len(p.b) {
		return nil, fmt.Errorf("more than one document")
	}
	return v, nil
}

func (p *parser) fail(msg string) error { return &syntaxError{msg: msg, off: p.i} }

func (p *parser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value() (any, error) {
	p.space()
	if p.i >= len(p.b) {
		return nil, p.fail("unexpected end of JSON input")
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		return p.str()
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	}
	return nil, p.fail(fmt.Sprintf("invalid character %q looking for beginning of value", p.b[p.i]))
}

func (p *parser) literal(word string) error {
	if len(p.b)-p.i < len(word) || string(p.b[p.i:p.i+len(word)]) != word {
		return p.fail("invalid literal")
	}
	p.i += len(word)
	return nil
}

func (p *parser) enter() error {
	if p.depth++; p.depth > maxDepth {
		return p.fail("exceeded max depth")
	}
	return nil
}

func (p *parser) object() (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	p.i++ // '{'
	m := map[string]any{}
	p.space()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return m, nil
	}
	for {
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return nil, p.fail("expected a property name")
		}
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return nil, p.fail("expected ':' after a property name")
		}
		p.i++
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		m[k.(string)] = v // the last of duplicate names wins, as in encoding/json
		p.space()
		if p.i >= len(p.b) {
			return nil, p.fail("unexpected end of JSON input")
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return m, nil
		default:
			return nil, p.fail("expected ',' or '}' after an object value")
		}
	}
}

func (p *parser) array() (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	p.i++ // '['
	a := []any{}
	p.space()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return a, nil
	}
	for {
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		p.space()
		if p.i >= len(p.b) {
			return nil, p.fail("unexpected end of JSON input")
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return a, nil
		default:
			return nil, p.fail("expected ',' or ']' after an array element")
		}
	}
}

// str decodes a string at p.i (which holds '"'). Invalid UTF-8 becomes
// U+FFFD, as encoding/json does. A string without escapes aliases the
// document (see alias).
func (p *parser) str() (any, error) {
	p.i++
	start := p.i
	for len(p.b)-p.i >= 8 && plain8(binary.LittleEndian.Uint64(p.b[p.i:])) {
		p.i += 8
	}
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			s := p.b[start:p.i]
			p.i++
			if utf8.Valid(s) {
				return alias(s), nil
			}
			return string([]rune(string(s))), nil // each bad byte becomes U+FFFD
		case c == '\\':
			return p.escaped(start)
		case c < 0x20:
			return nil, p.fail("invalid control character in string")
		}
		p.i++
	}
	return nil, p.fail("unexpected end of JSON input")
}

// escaped finishes a string that has an escape, from start.
func (p *parser) escaped(start int) (any, error) {
	out := append([]byte(nil), p.b[start:p.i]...)
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			if !utf8.Valid(out) {
				return string([]rune(string(out))), nil
			}
			return string(out), nil
		case c < 0x20:
			return nil, p.fail("invalid control character in string")
		case c != '\\':
			out = append(out, c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.b) {
			break
		}
		e := p.b[p.i+1]
		p.i += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return nil, p.fail("invalid \\u escape")
			}
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if len(p.b)-p.i >= 6 && p.b[p.i] == '\\' && p.b[p.i+1] == 'u' {
					save := p.i
					p.i += 2
					if x, ok := p.hex4(); ok {
						r2 = x
					} else {
						p.i = save
					}
				}
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					r = d
				} else {
					if r2 >= 0 {
						p.i -= 6 // not a pair: the second escape stands alone
					}
					r = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return nil, p.fail("invalid escape in string")
		}
	}
	return nil, p.fail("unexpected end of JSON input")
}

// plain8 reports whether none of the 8 bytes in x is '"', '\\' or a
// control character, which lets str skip them together.
func plain8(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	quote := x ^ (ones * '"')
	slash := x ^ (ones * '\\')
	has := (quote - ones) &^ quote & highs // a zero byte: '"'
	has |= (slash - ones) &^ slash & highs // '\\'
	has |= (x - ones*0x20) &^ x & highs    // below 0x20
	return has == 0
}

// alias views b as a string without copying. The tree lives only while
// Validate runs over a document that does not change meanwhile, and every
// string that leaves Validate (paths, messages) is built anew.
func alias(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

func (p *parser) hex4() (rune, bool) {
	if len(p.b)-p.i < 4 {
		return 0, false
	}
	n, err := strconv.ParseUint(string(p.b[p.i:p.i+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	p.i += 4
	return rune(n), true
}

// number reads a JSON number (the grammar, not Go's) as a json.Number.
func (p *parser) number() (any, error) {
	start := p.i
	if p.b[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.b) && p.b[p.i] == '0':
		p.i++
	case p.i < len(p.b) && p.b[p.i] >= '1' && p.b[p.i] <= '9':
		p.digits()
	default:
		return nil, p.fail("invalid number")
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if p.digits() == 0 {
			return nil, p.fail("invalid number")
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if p.digits() == 0 {
			return nil, p.fail("invalid number")
		}
	}
	return json.Number(p.b[start:p.i]), nil
}

func (p *parser) digits() int {
	n := 0
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
		n++
	}
	return n
}
