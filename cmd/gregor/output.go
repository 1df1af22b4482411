package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

// Output formats of the listing and describe commands (--output).
const (
	outputTable = "table"
	outputJSON  = "json"
	outputYAML  = "yaml"
)

// outputFlag is a command's --output: a table for people, JSON or YAML for
// programs. The structured forms carry the same facts as the table.
type outputFlag struct{ format string }

// addOutputFlag registers --output (-o) on cmd, with shell completion of
// its values.
func addOutputFlag(cmd *cobra.Command) *outputFlag {
	o := &outputFlag{}
	cmd.Flags().StringVarP(&o.format, "output", "o", outputTable, "output format: table, json or yaml")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(
		[]string{outputTable, outputJSON, outputYAML}, cobra.ShellCompDirectiveNoFileComp))
	return o
}

// check rejects an unknown format before any request is made.
func (o *outputFlag) check() error {
	switch o.format {
	case outputTable, outputJSON, outputYAML:
		return nil
	}
	return usagef("--output %q: want table, json or yaml", o.format)
}

// structured reports whether the output is JSON or YAML rather than a table.
func (o *outputFlag) structured() bool { return o.format == outputJSON || o.format == outputYAML }

// write prints v as JSON or YAML.
func (o *outputFlag) write(w io.Writer, v any) error {
	var (
		b   []byte
		err error
	)
	if o.format == outputYAML {
		b, err = marshalYAML(v)
	} else {
		b, err = json.MarshalIndent(v, "", "  ")
		b = append(b, '\n')
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", o.format, err)
	}
	_, err = w.Write(b)
	return err
}

// marshalYAML renders v as YAML by way of its JSON form, so the json tags
// name the fields and keep their order. Strings are quoted whenever a
// plain scalar could be read back as something else.
func marshalYAML(v any) ([]byte, error) {
	j, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	var buf bytes.Buffer
	if err := yamlValue(&buf, dec, 0, ctxTop); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Where a YAML value is written: at the top, after "key:" or after "- ".
const (
	ctxTop = iota
	ctxKey
	ctxItem
)

// yamlValue writes the next JSON value from dec in block style.
func yamlValue(w *bytes.Buffer, dec *json.Decoder, indent, where int) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	pad := strings.Repeat("  ", indent)
	switch t := tok.(type) {
	case json.Delim:
		closing := json.Delim('}')
		if t == '[' {
			closing = ']'
		}
		if !dec.More() {
			if _, err := dec.Token(); err != nil {
				return err
			}
			if where == ctxKey {
				w.WriteByte(' ')
			}
			if t == '{' {
				w.WriteString("{}\n")
			} else {
				w.WriteString("[]\n")
			}
			return nil
		}
		if where == ctxKey {
			w.WriteByte('\n')
		}
		first := true
		for dec.More() {
			// The first entry of a list item sits on the "- " line.
			if !(first && where == ctxItem) {
				w.WriteString(pad)
			}
			first = false
			if t == '[' {
				w.WriteString("- ")
				if err := yamlValue(w, dec, indent+1, ctxItem); err != nil {
					return err
				}
				continue
			}
			kt, err := dec.Token()
			if err != nil {
				return err
			}
			w.WriteString(yamlString(kt.(string)))
			w.WriteByte(':')
			if err := yamlValue(w, dec, indent+1, ctxKey); err != nil {
				return err
			}
		}
		end, err := dec.Token()
		if err != nil {
			return err
		}
		if end != closing {
			return fmt.Errorf("yaml: unbalanced %v", end)
		}
		return nil
	case string:
		yamlScalar(w, yamlString(t), where)
	case json.Number:
		yamlScalar(w, t.String(), where)
	case bool:
		yamlScalar(w, strconv.FormatBool(t), where)
	case nil:
		yamlScalar(w, "null", where)
	}
	return nil
}

func yamlScalar(w *bytes.Buffer, s string, where int) {
	if where == ctxKey {
		w.WriteByte(' ')
	}
	w.WriteString(s)
	w.WriteByte('\n')
}

// yamlString writes s plain when YAML reads it back as the same string,
// and as a double-quoted scalar (JSON's escapes are YAML's) otherwise.
func yamlString(s string) string {
	if yamlPlain(s) {
		return s
	}
	b, _ := json.Marshal(s)
	return string(b)
}

func yamlPlain(s string) bool {
	if s == "" || strings.TrimSpace(s) != s {
		return false
	}
	switch strings.ToLower(s) {
	case "null", "~", "true", "false", "yes", "no", "on", "off", "y", "n", ".nan", ".inf", "-.inf", "+.inf":
		return false
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return false
	}
	if _, err := strconv.ParseInt(s, 0, 64); err == nil {
		return false
	}
	if strings.ContainsAny(s[:1], "-?:,[]{}#&*!|>'\"%@`") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f || c >= 0x80 {
			return false
		}
	}
	return !strings.Contains(s, ": ") && !strings.Contains(s, " #") && !strings.HasSuffix(s, ":")
}
