package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Capabilities is what the target says it can do: the ApiVersions answer of its PLAINTEXT
// listener and the mechanisms of its SASL listener.
type Capabilities struct {
	Versions   map[int16][2]int16 // key -> {min, max}
	SASLAddr   string
	Mechanisms []string
	SASLErr    string
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

// maxResponse bounds what the probe reads from a peer before allocating.
const maxResponse = 16 << 20

// rawConn speaks just enough of the wire protocol for capability probes and the
// differential check: request header v1/v2, response header v0/v1.
type rawConn struct {
	c    net.Conn
	r    *bufio.Reader
	corr int32
}

func dialRaw(addr string, timeout time.Duration) (*rawConn, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, fmt.Errorf("interop: dial %s: %w", addr, err)
	}
	_ = c.SetDeadline(time.Now().Add(timeout))
	return &rawConn{c: c, r: bufio.NewReader(c)}, nil
}

func (rc *rawConn) Close() error { return rc.c.Close() }

// roundTrip sends req at its set version and decodes the answer into resp.
func (rc *rawConn) roundTrip(req kmsg.Request, resp kmsg.Response) error {
	rc.corr++
	body := []byte{0, 0, 0, 0}
	body = binary.BigEndian.AppendUint16(body, uint16(req.Key()))
	body = binary.BigEndian.AppendUint16(body, uint16(req.GetVersion()))
	body = binary.BigEndian.AppendUint32(body, uint32(rc.corr))
	id := "gregor-interop"
	body = binary.BigEndian.AppendUint16(body, uint16(len(id)))
	body = append(body, id...)
	if req.IsFlexible() {
		body = append(body, 0) // empty tagged fields
	}
	body = req.AppendTo(body)
	binary.BigEndian.PutUint32(body, uint32(len(body)-4))
	if _, err := rc.c.Write(body); err != nil {
		return fmt.Errorf("interop: write %s: %w", apiName(req.Key()), err)
	}
	var sz [4]byte
	if _, err := io.ReadFull(rc.r, sz[:]); err != nil {
		return fmt.Errorf("interop: read %s size: %w", apiName(req.Key()), err)
	}
	n := int32(binary.BigEndian.Uint32(sz[:]))
	if n < 4 || n > maxResponse {
		return fmt.Errorf("interop: %s response size %d out of range", apiName(req.Key()), n)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(rc.r, buf); err != nil {
		return fmt.Errorf("interop: read %s body: %w", apiName(req.Key()), err)
	}
	if got := int32(binary.BigEndian.Uint32(buf)); got != rc.corr {
		return fmt.Errorf("interop: %s correlation id %d, want %d", apiName(req.Key()), got, rc.corr)
	}
	buf = buf[4:]
	resp.SetVersion(req.GetVersion())
	// ApiVersions always answers with header v0, whatever its version.
	if resp.IsFlexible() && req.Key() != keyApiVersions {
		if len(buf) == 0 {
			return fmt.Errorf("interop: %s response header truncated", apiName(req.Key()))
		}
		// Skip the response header's tagged fields (the count is 0 for every broker we meet).
		if buf[0] != 0 {
			return fmt.Errorf("interop: %s response header carries %d tagged fields", apiName(req.Key()), buf[0])
		}
		buf = buf[1:]
	}
	if err := resp.ReadFrom(buf); err != nil {
		return fmt.Errorf("interop: decode %s v%d: %w", apiName(req.Key()), req.GetVersion(), err)
	}
	return nil
}

func apiVersions(addr string) (*kmsg.ApiVersionsResponse, error) {
	rc, err := dialRaw(addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName = "gregor-interop"
	req.ClientSoftwareVersion = "1"
	resp := kmsg.NewPtrApiVersionsResponse()
	if err := rc.roundTrip(req, resp); err != nil {
		return nil, err
	}
	if resp.ErrorCode != 0 {
		return resp, fmt.Errorf("interop: ApiVersions: %w", kerr.ErrorForCode(resp.ErrorCode))
	}
	return resp, nil
}

// probe asks the target what it can do.
func probe(bootstrap, saslBootstrap string) (Capabilities, error) {
	addr := strings.Split(bootstrap, ",")[0]
	av, err := apiVersions(addr)
	if err != nil {
		return Capabilities{}, err
	}
	c := Capabilities{Versions: map[int16][2]int16{}, SASLAddr: strings.Split(saslBootstrap, ",")[0]}
	for _, k := range av.ApiKeys {
		c.Versions[k.ApiKey] = [2]int16{k.MinVersion, k.MaxVersion}
	}
	c.Mechanisms, c.SASLErr = saslMechanisms(c.SASLAddr)
	return c, nil
}

// saslMechanisms asks a listener which mechanisms it enables: a SaslHandshake naming a
// mechanism nobody enables answers UNSUPPORTED_SASL_MECHANISM with the enabled list.
func saslMechanisms(addr string) ([]string, string) {
	av, err := apiVersions(addr)
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
	rc, err := dialRaw(addr, 10*time.Second)
	if err != nil {
		return nil, err.Error()
	}
	defer rc.Close()
	req := kmsg.NewPtrSASLHandshakeRequest()
	req.Version = 1
	req.Mechanism = "GREGOR-INTEROP-PROBE"
	resp := kmsg.NewPtrSASLHandshakeResponse()
	if err := rc.roundTrip(req, resp); err != nil {
		return nil, err.Error()
	}
	if len(resp.SupportedMechanisms) == 0 {
		return nil, "SaslHandshake lists no mechanisms (error code " + strconv.Itoa(int(resp.ErrorCode)) + ")"
	}
	return resp.SupportedMechanisms, ""
}
