package auth

import (
	"crypto/tls"
	"fmt"
	"regexp"
	"strings"

	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// PrincipalMapper turns a client certificate's subject into a principal with
// Kafka's ssl.principal.mapping.rules: a comma-separated list of
// "RULE:pattern/replacement/[LU]" and "DEFAULT", tried in order; the first
// rule whose pattern matches the whole distinguished name (RFC 2253 form,
// "CN=alice,OU=eng,O=Example") wins. DEFAULT keeps the name unchanged.
type PrincipalMapper struct {
	rules []mappingRule
}

type mappingRule struct {
	isDefault   bool
	pattern     *regexp.Regexp
	replacement string
	caseOp      byte // 0, 'L' or 'U'
}

// ParseMappingRules parses a rule list; "" means DEFAULT.
func ParseMappingRules(s string) (*PrincipalMapper, error) {
	m := &PrincipalMapper{}
	rest := strings.TrimSpace(s)
	if rest == "" {
		rest = "DEFAULT"
	}
	for rest != "" {
		switch {
		case strings.HasPrefix(rest, "DEFAULT"):
			m.rules = append(m.rules, mappingRule{isDefault: true})
			rest = rest[len("DEFAULT"):]
		case strings.HasPrefix(rest, "RULE:"):
			pat, after, err := cutUnescaped(rest[len("RULE:"):])
			if err != nil {
				return nil, fmt.Errorf("auth: mapping rule %q: %w", rest, err)
			}
			repl, after, err := cutUnescaped(after)
			if err != nil {
				return nil, fmt.Errorf("auth: mapping rule %q: %w", rest, err)
			}
			r := mappingRule{replacement: javaReplacement(repl)}
			if after != "" && (after[0] == 'L' || after[0] == 'U') {
				r.caseOp, after = after[0], after[1:]
			}
			re, err := regexp.Compile("^(?:" + pat + ")$")
			if err != nil {
				return nil, fmt.Errorf("auth: mapping rule pattern %q: %w", pat, err)
			}
			r.pattern = re
			m.rules = append(m.rules, r)
			rest = after
		default:
			return nil, fmt.Errorf("auth: mapping rules: cannot parse %q (want RULE:pattern/replacement/[LU] or DEFAULT)", rest)
		}
		rest = strings.TrimSpace(rest)
		if rest != "" {
			if rest[0] != ',' {
				return nil, fmt.Errorf("auth: mapping rules: expected a comma before %q", rest)
			}
			rest = strings.TrimSpace(rest[1:])
		}
	}
	return m, nil
}

// cutUnescaped splits at the first '/' not preceded by a backslash and
// unescapes "\/".
func cutUnescaped(s string) (string, string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == '/':
			b.WriteByte('/')
			i++
		case s[i] == '/':
			return b.String(), s[i+1:], nil
		default:
			b.WriteByte(s[i])
		}
	}
	return "", "", fmt.Errorf("missing '/'")
}

var javaGroupRef = regexp.MustCompile(`\$(\d+)`)

// javaReplacement turns Java's "$1" group references into Go's "${1}".
func javaReplacement(s string) string { return javaGroupRef.ReplaceAllString(s, "$${$1}") }

// Map applies the rules to a distinguished name and returns the principal
// name.
func (m *PrincipalMapper) Map(dn string) (string, error) {
	for _, r := range m.rules {
		if r.isDefault {
			return dn, nil
		}
		idx := r.pattern.FindStringSubmatchIndex(dn)
		if idx == nil {
			continue
		}
		out := string(r.pattern.ExpandString(nil, r.replacement, dn, idx))
		switch r.caseOp {
		case 'L':
			out = strings.ToLower(out)
		case 'U':
			out = strings.ToUpper(out)
		}
		return out, nil
	}
	return "", fmt.Errorf("auth: no mapping rule matches %q", dn)
}

// TLSPrincipal maps the verified leaf certificate's subject to a User
// principal, for protocol.Server.TLSPrincipal.
func (m *PrincipalMapper) TLSPrincipal(st *tls.ConnectionState) (string, error) {
	if len(st.PeerCertificates) == 0 {
		return sdkauth.Anonymous.String(), nil
	}
	name, err := m.Map(st.PeerCertificates[0].Subject.ToRDNSequence().String())
	if err != nil {
		return "", err
	}
	if name == "" {
		return "", fmt.Errorf("auth: certificate subject maps to an empty name")
	}
	return sdkauth.User(name).String(), nil
}
