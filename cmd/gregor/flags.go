package main

import (
	"fmt"
	"io"
	"strings"
)

// keyValue is one parsed k=v flag value.
type keyValue struct {
	key, value string
}

// parseKeyValues parses repeated "k=v" values of flag. The key ends at the
// first '='; the value may be empty or hold more '='. With unique set, a key
// given twice is an error (configs); headers may repeat keys as Kafka allows.
func parseKeyValues(flag string, vals []string, unique bool) ([]keyValue, error) {
	out := make([]keyValue, 0, len(vals))
	seen := make(map[string]bool, len(vals))
	for _, v := range vals {
		k, val, ok := strings.Cut(v, "=")
		if !ok {
			return nil, usagef("--%s %q: want key=value", flag, v)
		}
		if k == "" {
			return nil, usagef("--%s %q: empty key", flag, v)
		}
		if unique && seen[k] {
			return nil, usagef("--%s: %q given twice", flag, k)
		}
		seen[k] = true
		out = append(out, keyValue{k, val})
	}
	return out, nil
}

// configMap turns parsed --config values into the form CreateTopics takes.
func configMap(kvs []keyValue) map[string]*string {
	if len(kvs) == 0 {
		return nil
	}
	m := make(map[string]*string, len(kvs))
	for _, kv := range kvs {
		v := kv.value
		m[kv.key] = &v
	}
	return m
}

// multiError reports several per-item failures: each is printed on w and a
// summary error is returned. A single failure is returned as is.
func multiError(w io.Writer, what string, total int, errs []error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	for _, err := range errs {
		fmt.Fprintf(w, "gregor: %v\n", err)
	}
	return fmt.Errorf("%d of %d %s failed", len(errs), total, what)
}
