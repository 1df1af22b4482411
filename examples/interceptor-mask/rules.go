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
	allow map[string]bool
	mask  string
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
	r := &Rules{allow: map[string]bool{}, mask: "****", DropUnmaskable: true}
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
		r.mask = *c.Mask
	}
	if c.DropUnmaskable != nil {
		r.DropUnmaskable = *c.DropUnmaskable
	}
	return r, nil
}

// Allowed reports whether the principal sees clear values.
func (r *Rules) Allowed(typ, name string) bool { return r.allow[typ+":"+name] }

// Mask replaces the configured fields of the JSON object value by the
// mask. It reports whether any field was there (else value is returned
// unchanged); a value that is not a JSON object is an error. A masked
// value is encoded again: its fields come out in sorted order, numbers
// as written.
func (r *Rules) Mask(value []byte) ([]byte, bool, error) {
	dec := json.NewDecoder(bytes.NewReader(value))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil || doc == nil {
		return value, false, errors.New("value is not a JSON object")
	}
	if dec.More() {
		return value, false, errors.New("value holds more than one JSON document")
	}
	changed := false
	for _, path := range r.fields {
		if maskPath(doc, path, r.mask) {
			changed = true
		}
	}
	if !changed {
		return value, false, nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return value, false, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), true, nil
}

// maskPath masks the field at path below obj, also inside arrays of
// objects on the way ("items.card" masks the card of every item).
func maskPath(obj map[string]any, path []string, mask string) bool {
	v, ok := obj[path[0]]
	if !ok {
		return false
	}
	if len(path) == 1 {
		obj[path[0]] = mask
		return true
	}
	return maskIn(v, path[1:], mask)
}

func maskIn(v any, path []string, mask string) bool {
	switch v := v.(type) {
	case map[string]any:
		return maskPath(v, path, mask)
	case []any:
		changed := false
		for _, e := range v {
			if maskIn(e, path, mask) {
				changed = true
			}
		}
		return changed
	}
	return false
}
