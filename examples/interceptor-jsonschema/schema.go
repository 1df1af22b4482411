package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Schema is the subset of JSON Schema (draft 2020-12 keywords) the module
// checks: type, enum, const, properties, required, additionalProperties,
// items, minItems, maxItems, minLength, maxLength, pattern, minimum,
// maximum, exclusiveMinimum, exclusiveMaximum. A keyword outside the subset
// is refused at configuration, so a schema never silently checks less
// than it says.
type Schema struct {
	Types      []string
	Enum       []any
	Const      any
	HasConst   bool
	Properties map[string]*Schema
	Required   []string
	// Additional is nil when additional properties are allowed, else the
	// schema they must match (noneAllowed when they are forbidden).
	Additional *Schema
	Items      *Schema
	MinItems   int
	MaxItems   int // -1: no bound
	MinLength  int
	MaxLength  int // -1: no bound
	Pattern    *regexp.Regexp
	Minimum    *float64
	Maximum    *float64
	ExclMin    *float64
	ExclMax    *float64
	never      bool // the schema `false`
	fast       fast // derived for the fast path (scan.go)
}

var noneAllowed = &Schema{never: true, MaxItems: -1, MaxLength: -1}

var known = map[string]bool{
	"type": true, "enum": true, "const": true, "properties": true, "required": true,
	"additionalProperties": true, "items": true, "minItems": true, "maxItems": true,
	"minLength": true, "maxLength": true, "pattern": true, "minimum": true, "maximum": true,
	"exclusiveMinimum": true, "exclusiveMaximum": true,
	// Annotations, which do not constrain.
	"$schema": true, "$id": true, "title": true, "description": true, "examples": true, "default": true, "$comment": true,
}

// ParseSchema compiles a JSON Schema document.
func ParseSchema(raw []byte) (*Schema, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	s, err := compileSchema(v, "#")
	if err != nil {
		return nil, err
	}
	s.prepare()
	return s, nil
}

func compileSchema(v any, at string) (*Schema, error) {
	s := &Schema{MaxItems: -1, MaxLength: -1}
	switch t := v.(type) {
	case bool:
		if !t {
			return noneAllowed, nil
		}
		return s, nil
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !known[k] {
				return nil, fmt.Errorf("schema: %s: keyword %q is not supported", at, k)
			}
			if err := s.set(k, t[k], at+"/"+k); err != nil {
				return nil, err
			}
		}
		return s, nil
	}
	return nil, fmt.Errorf("schema: %s: a schema is an object or a boolean", at)
}

func (s *Schema) set(k string, v any, at string) error {
	var err error
	switch k {
	case "type":
		switch t := v.(type) {
		case string:
			s.Types = []string{t}
		case []any:
			for _, e := range t {
				str, ok := e.(string)
				if !ok {
					return fmt.Errorf("schema: %s: type names are strings", at)
				}
				s.Types = append(s.Types, str)
			}
		default:
			return fmt.Errorf("schema: %s: a string or an array of strings", at)
		}
		for _, t := range s.Types {
			switch t {
			case "object", "array", "string", "number", "integer", "boolean", "null":
			default:
				return fmt.Errorf("schema: %s: unknown type %q", at, t)
			}
		}
	case "enum":
		arr, ok := v.([]any)
		if !ok {
			return fmt.Errorf("schema: %s: an array", at)
		}
		s.Enum = arr
	case "const":
		s.Const, s.HasConst = v, true
	case "properties":
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("schema: %s: an object", at)
		}
		s.Properties = map[string]*Schema{}
		for name, sub := range m {
			if s.Properties[name], err = compileSchema(sub, at+"/"+escape(name)); err != nil {
				return err
			}
		}
	case "required":
		arr, ok := v.([]any)
		if !ok {
			return fmt.Errorf("schema: %s: an array of strings", at)
		}
		for _, e := range arr {
			str, ok := e.(string)
			if !ok {
				return fmt.Errorf("schema: %s: an array of strings", at)
			}
			s.Required = append(s.Required, str)
		}
	case "additionalProperties":
		if b, ok := v.(bool); ok && b {
			return nil
		}
		s.Additional, err = compileSchema(v, at)
	case "items":
		s.Items, err = compileSchema(v, at)
	case "minItems", "maxItems", "minLength", "maxLength":
		n, ok := count(v)
		if !ok {
			return fmt.Errorf("schema: %s: a non-negative integer", at)
		}
		switch k {
		case "minItems":
			s.MinItems = n
		case "maxItems":
			s.MaxItems = n
		case "minLength":
			s.MinLength = n
		case "maxLength":
			s.MaxLength = n
		}
	case "pattern":
		str, ok := v.(string)
		if !ok {
			return fmt.Errorf("schema: %s: a string", at)
		}
		if s.Pattern, err = regexp.Compile(str); err != nil {
			return fmt.Errorf("schema: %s: %w", at, err)
		}
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
		f, ok := number(v)
		if !ok {
			return fmt.Errorf("schema: %s: a number", at)
		}
		switch k {
		case "minimum":
			s.Minimum = &f
		case "maximum":
			s.Maximum = &f
		case "exclusiveMinimum":
			s.ExclMin = &f
		case "exclusiveMaximum":
			s.ExclMax = &f
		}
	}
	return err
}

func count(v any) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(n.String())
	return i, err == nil && i >= 0
}

func number(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}

// escape writes a property name as a JSON Pointer token.
func escape(name string) string {
	if !strings.ContainsAny(name, "~/") {
		return name
	}
	return pointerEscaper.Replace(name)
}

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// at is a place in the validated value, built into a JSON Pointer only
// when a check fails (a validation that passes allocates no paths).
type at struct {
	parent *at
	name   string // a property name, unless elem
	index  int    // an array index, if elem
	elem   bool
}

func (a *at) String() string {
	if a == nil {
		return ""
	}
	tok := escape(a.name)
	if a.elem {
		tok = strconv.Itoa(a.index)
	}
	return a.parent.String() + "/" + tok
}

// ValidationError is the first place a value fails its schema: Path is a
// JSON Pointer into the value ("" for the value itself).
type ValidationError struct {
	Path, Reason string
}

func (e *ValidationError) Error() string {
	path := e.Path
	if path == "" {
		path = "/"
	}
	return path + ": " + e.Reason
}

// errNotJSON is returned for a value that is not one JSON document.
var errNotJSON = errors.New("value is not valid JSON")

// Validate checks one JSON document against s. It returns a
// *ValidationError, or errNotJSON wrapped with the parser's complaint.
func (s *Schema) Validate(doc []byte) error {
	if s.valid(doc) {
		return nil // the common case, without building the tree
	}
	return s.explain(doc)
}

// explain is Validate through the tree: it finds the failing path and
// words the message.
func (s *Schema) explain(doc []byte) error {
	v, err := parseJSON(doc)
	if err != nil {
		return fmt.Errorf("%w: %w", errNotJSON, err)
	}
	return s.check(v, nil)
}

func (s *Schema) check(v any, path *at) error {
	fail := func(format string, args ...any) error {
		return &ValidationError{Path: path.String(), Reason: fmt.Sprintf(format, args...)}
	}
	if s.never {
		return fail("not allowed")
	}
	if len(s.Types) > 0 && !hasType(v, s.Types) {
		return fail("%s is not of type %s", kind(v), strings.Join(s.Types, " or "))
	}
	if s.HasConst && !equal(v, s.Const) {
		return fail("must be %s", show(s.Const))
	}
	if s.Enum != nil {
		found := false
		for _, e := range s.Enum {
			if equal(v, e) {
				found = true
				break
			}
		}
		if !found {
			return fail("%s is not one of the allowed values", show(v))
		}
	}
	switch t := v.(type) {
	case map[string]any:
		for _, r := range s.Required {
			if _, ok := t[r]; !ok {
				return &ValidationError{Path: (&at{parent: path, name: r}).String(), Reason: "required property is missing"}
			}
		}
		names := make([]string, 0, len(t))
		for k := range t {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			sub, ok := s.Properties[k]
			if !ok {
				sub = s.Additional
			}
			if sub == nil {
				continue
			}
			if sub == noneAllowed && !ok {
				return &ValidationError{Path: (&at{parent: path, name: k}).String(), Reason: "additional property is not allowed"}
			}
			if err := sub.check(t[k], &at{parent: path, name: k}); err != nil {
				return err
			}
		}
	case []any:
		if len(t) < s.MinItems {
			return fail("%d items, fewer than %d", len(t), s.MinItems)
		}
		if s.MaxItems >= 0 && len(t) > s.MaxItems {
			return fail("%d items, more than %d", len(t), s.MaxItems)
		}
		if s.Items != nil {
			for i, e := range t {
				if err := s.Items.check(e, &at{parent: path, index: i, elem: true}); err != nil {
					return err
				}
			}
		}
	case string:
		n := 0
		if s.MinLength > 0 || s.MaxLength >= 0 {
			n = utf8.RuneCountInString(t)
		}
		if n < s.MinLength {
			return fail("length %d is below %d", n, s.MinLength)
		}
		if s.MaxLength >= 0 && n > s.MaxLength {
			return fail("length %d is above %d", n, s.MaxLength)
		}
		if s.Pattern != nil && !s.Pattern.MatchString(t) {
			return fail("%s does not match %q", show(t), s.Pattern.String())
		}
	case json.Number:
		f, _ := t.Float64()
		switch {
		case s.Minimum != nil && f < *s.Minimum:
			return fail("%s is below the minimum %v", t, *s.Minimum)
		case s.Maximum != nil && f > *s.Maximum:
			return fail("%s is above the maximum %v", t, *s.Maximum)
		case s.ExclMin != nil && f <= *s.ExclMin:
			return fail("%s is not above %v", t, *s.ExclMin)
		case s.ExclMax != nil && f >= *s.ExclMax:
			return fail("%s is not below %v", t, *s.ExclMax)
		}
	}
	return nil
}

func hasType(v any, types []string) bool {
	k := kind(v)
	for _, t := range types {
		if t == k || t == "number" && k == "integer" {
			return true
		}
	}
	return false
}

// kind is v's JSON type; a number without a fraction is an integer.
func kind(v any) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case json.Number:
		if f, err := t.Float64(); err == nil && f == math.Trunc(f) && !math.IsInf(f, 0) {
			return "integer"
		}
		return "number"
	}
	return "unknown"
}

func equal(a, b any) bool {
	an, aok := a.(json.Number)
	bn, bok := b.(json.Number)
	if aok && bok {
		af, _ := an.Float64()
		bf, _ := bn.Float64()
		return af == bf
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// show renders a value for a message, cut to 64 bytes.
func show(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 64 {
		return string(b[:64]) + "…"
	}
	return string(b)
}
