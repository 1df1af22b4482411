package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Rules are the module's configuration: which fields to mask, with what,
// and for whom not.
type Rules struct {
	// fields are the paths to mask, each split at dots ("card.number" is
	// the number field of the card object).
	fields [][]string
	// allow holds the principals ("User:alice") that see clear values.
	allow    map[string]bool
	maskJSON []byte // the mask as a JSON string
	// DropUnmaskable drops a value that is not a JSON object for a masked
	// principal (the default); false returns it as stored.
	DropUnmaskable bool
}

type rawConfig struct {
	Fields         []string `json:"fields"`
	Allow          []string `json:"allow"`
	Mask           *string  `json:"mask"`
	DropUnmaskable *bool    `json:"drop_unmaskable"`
}

// ParseConfig reads the extension's config: fields (required), allow,
// mask (default "****") and drop_unmaskable (default true).
func ParseConfig(raw []byte) (*Rules, error) {
	var c rawConfig
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("mask: config: %w", err)
	}
	if len(c.Fields) == 0 {
		return nil, errors.New("mask: config: fields is missing: name at least one JSON field to mask")
	}
	r := &Rules{allow: map[string]bool{}, DropUnmaskable: true}
	mask := "****"
	for _, f := range c.Fields {
		path := strings.Split(f, ".")
		for _, p := range path {
			if p == "" {
				return nil, fmt.Errorf("mask: config: field %q has an empty name", f)
			}
		}
		r.fields = append(r.fields, path)
	}
	for _, p := range c.Allow {
		if typ, name, ok := strings.Cut(p, ":"); !ok || typ == "" || name == "" {
			return nil, fmt.Errorf("mask: config: allow entry %q is not a principal such as User:alice", p)
		}
		r.allow[p] = true
	}
	if c.Mask != nil {
		mask = *c.Mask
	}
	r.maskJSON, _ = json.Marshal(mask)
	if c.DropUnmaskable != nil {
		r.DropUnmaskable = *c.DropUnmaskable
	}
	return r, nil
}

// Allowed reports whether the principal sees clear values.
func (r *Rules) Allowed(typ, name string) bool { return r.allow[typ+":"+name] }

// Mask replaces the configured fields of the JSON object value by the
// mask. It reports whether any field was there (else value is returned
// unchanged); a value that is not one JSON object is an error. The value
// is rewritten in place of the masked fields only: everything else, key
// order and spacing included, stays as produced, and a key given twice is
// masked both times.
func (r *Rules) Mask(value []byte) ([]byte, bool, error) {
	if !json.Valid(value) {
		return value, false, errors.New("value is not a JSON object")
	}
	i := skipWS(value, 0)
	if value[i] != '{' {
		return value, false, errors.New("value is not a JSON object")
	}
	out := make([]byte, 0, len(value)+16)
	out = append(out, value[:i]...)
	out, end, changed := maskObject(value, i, r.fields, r.maskJSON, out)
	if !changed {
		return value, false, nil
	}
	return append(out, value[end:]...), true, nil
}

// The scanner below walks a document json.Valid accepted, so it checks
// nothing: it only finds where keys and values start and end.

// maskObject copies the object at b[i] to out, masking paths, and returns
// out, the index after the object and whether anything was masked.
func maskObject(b []byte, i int, paths [][]string, mask, out []byte) ([]byte, int, bool) {
	changed := false
	out = append(out, '{')
	i++
	for {
		j := skipWS(b, i)
		out, i = append(out, b[i:j]...), j
		switch b[i] {
		case '}':
			return append(out, '}'), i + 1, changed
		case ',':
			out, i = append(out, ','), i+1
			continue
		}
		ke := skipString(b, i)
		key := keyName(b[i:ke])
		out, i = append(out, b[i:ke]...), ke
		j = skipWS(b, i) + 1 // past the colon
		j = skipWS(b, j)
		out, i = append(out, b[i:j]...), j
		whole := false
		var sub [][]string
		for _, p := range paths {
			if p[0] == key {
				if len(p) == 1 {
					whole = true
				} else {
					sub = append(sub, p[1:])
				}
			}
		}
		var c bool
		switch {
		case whole:
			out, i, changed = append(out, mask...), skipValue(b, i), true
		case len(sub) > 0 && (b[i] == '{' || b[i] == '['):
			out, i, c = maskIn(b, i, sub, mask, out)
			changed = changed || c
		default:
			e := skipValue(b, i)
			out, i = append(out, b[i:e]...), e
		}
	}
}

// maskIn masks paths in the object or array at b[i]; in an array, every
// element is masked as the array itself would be.
func maskIn(b []byte, i int, paths [][]string, mask, out []byte) ([]byte, int, bool) {
	if b[i] == '{' {
		return maskObject(b, i, paths, mask, out)
	}
	changed := false
	out = append(out, '[')
	i++
	for {
		j := skipWS(b, i)
		out, i = append(out, b[i:j]...), j
		switch b[i] {
		case ']':
			return append(out, ']'), i + 1, changed
		case ',':
			out, i = append(out, ','), i+1
			continue
		case '{', '[':
			var c bool
			out, i, c = maskIn(b, i, paths, mask, out)
			changed = changed || c
		default:
			e := skipValue(b, i)
			out, i = append(out, b[i:e]...), e
		}
	}
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i].
func skipString(b []byte, i int) int {
	for i++; ; i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
}

// skipValue returns the index after the value starting at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; ; i++ {
			switch b[i] {
			case '"':
				i = skipString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
	}
	for i < len(b) && !strings.ContainsRune(",}] \t\r\n", rune(b[i])) {
		i++
	}
	return i
}

// keyName is the key a quoted JSON string spells.
func keyName(raw []byte) string {
	if !bytes.ContainsRune(raw, '\\') {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	_ = json.Unmarshal(raw, &s) // valid: json.Valid passed the document
	return s
}
