package config

import "fmt"

// MirrorTable is one [mirror.NAME] section of broker.toml as decoded TOML:
// the keys of a mirror.toml. The mirror package decodes it strictly (unknown
// keys are errors there); config only checks that it is a table.
type MirrorTable map[string]any

// UnmarshalTOML keeps the section as it was decoded.
func (t *MirrorTable) UnmarshalTOML(v any) error {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("config: mirror: want [mirror.NAME] tables, got a %T", v)
	}
	*t = m
	return nil
}
