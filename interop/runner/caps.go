package main

import (
	"crypto/tls"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gregorbroker/gregor/interop/wire"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Capabilities is what the target says it can do: the ApiVersions answer of its PLAINTEXT
// listener, the mechanisms of its SASL listener, and whether it has SSL and SASL_SSL listeners
// (and which mechanisms the latter enables).
type Capabilities struct {
	Versions   map[int16][2]int16 // key -> {min, max}
	SASLAddr   string
	Mechanisms []string
	SASLErr    string
	// SSLAddr and SASLSSLAddr are empty when the run was given no such listener.
	SSLAddr, SASLSSLAddr string
	SASLSSLMechanisms    []string
	SASLSSLErr           string
}

func (c Capabilities) Has(key int16) bool { _, ok := c.Versions[key]; return ok }

// keyList is the advertised API keys as a comma-separated list, for drivers whose client
// needs an API the scenario itself does not (kafkajs consumes only through a group).
func (c Capabilities) keyList() string {
	var ks []int
	for k := range c.Versions {
		ks = append(ks, int(k))
	}
	sort.Ints(ks)
	var b strings.Builder
	for i, k := range ks {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(k))
	}
	return b.String()
}

func (c Capabilities) HasMechanism(m string) bool {
	for _, x := range c.Mechanisms {
		if strings.EqualFold(x, m) {
			return true
		}
	}
	return false
}

func apiVersions(addr string, tlsCfg *tls.Config) (*kmsg.ApiVersionsResponse, error) {
	rc, err := dialProbe(addr, tlsCfg)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName = "gregor-interop"
	req.ClientSoftwareVersion = "1"
	resp := kmsg.NewPtrApiVersionsResponse()
	if err := rc.RoundTrip(req, resp); err != nil {
		return nil, err
	}
	if resp.ErrorCode != 0 {
		return resp, fmt.Errorf("interop: ApiVersions: %w", kerr.ErrorForCode(resp.ErrorCode))
	}
	return resp, nil
}

// dialProbe opens a probe connection, over TLS when tlsCfg is set.
func dialProbe(addr string, tlsCfg *tls.Config) (*wire.Conn, error) {
	if tlsCfg != nil {
		return wire.DialTLS(addr, 10*time.Second, tlsCfg)
	}
	return wire.Dial(addr, 10*time.Second)
}

// probe asks the target what it can do. The TLS listeners are probed with sec's CA; an empty
// address means the run has no such listener.
func probe(bootstrap, saslBootstrap string, sec securityTargets) (Capabilities, error) {
	addr := strings.Split(bootstrap, ",")[0]
	av, err := apiVersions(addr, nil)
	if err != nil {
		return Capabilities{}, err
	}
	c := Capabilities{Versions: map[int16][2]int16{}, SASLAddr: strings.Split(saslBootstrap, ",")[0]}
	for _, k := range av.ApiKeys {
		c.Versions[k.ApiKey] = [2]int16{k.MinVersion, k.MaxVersion}
	}
	c.Mechanisms, c.SASLErr = saslMechanisms(c.SASLAddr, nil)
	c.SSLAddr = strings.Split(sec.SSL, ",")[0]
	if c.SASLSSLAddr = strings.Split(sec.SASLSSL, ",")[0]; c.SASLSSLAddr != "" {
		cfg, err := sec.tlsConfig(c.SASLSSLAddr, true)
		if err != nil {
			return c, err
		}
		c.SASLSSLMechanisms, c.SASLSSLErr = saslMechanisms(c.SASLSSLAddr, cfg)
	}
	return c, nil
}

// saslMechanisms asks a listener which mechanisms it enables: a SaslHandshake naming a
// mechanism nobody enables answers UNSUPPORTED_SASL_MECHANISM with the enabled list.
func saslMechanisms(addr string, tlsCfg *tls.Config) ([]string, string) {
	av, err := apiVersions(addr, tlsCfg)
	if err != nil {
		return nil, err.Error()
	}
	has := false
	for _, k := range av.ApiKeys {
		has = has || k.ApiKey == keySaslHandshake
	}
	if !has {
		return nil, "SaslHandshake not advertised"
	}
	rc, err := dialProbe(addr, tlsCfg)
	if err != nil {
		return nil, err.Error()
	}
	defer rc.Close()
	req := kmsg.NewPtrSASLHandshakeRequest()
	req.Version = 1
	req.Mechanism = "GREGOR-INTEROP-PROBE"
	resp := kmsg.NewPtrSASLHandshakeResponse()
	if err := rc.RoundTrip(req, resp); err != nil {
		return nil, err.Error()
	}
	if len(resp.SupportedMechanisms) == 0 {
		return nil, "SaslHandshake lists no mechanisms (error code " + strconv.Itoa(int(resp.ErrorCode)) + ")"
	}
	return resp.SupportedMechanisms, ""
}
