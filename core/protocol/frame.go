package protocol

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Frame and header errors. Each closes the connection; none affects others.
var (
	ErrFrameSize      = errors.New("protocol: invalid frame size")
	ErrHeader         = errors.New("protocol: malformed request header")
	ErrUnknownAPI     = errors.New("protocol: unknown API key")
	ErrUnsupportedVer = errors.New("protocol: unsupported API version")
	ErrBody           = errors.New("protocol: malformed request body")
)

// ReadFrame reads one size-prefixed frame. The size is checked against max
// before anything is allocated for the body.
func ReadFrame(r io.Reader, max int32, buf []byte) ([]byte, error) {
	var sz [4]byte
	if _, err := io.ReadFull(r, sz[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(sz[:]))
	if n < 8 { // api key, version and correlation id at the least
		return nil, fmt.Errorf("%w: %d bytes", ErrFrameSize, n)
	}
	if n > max {
		return nil, fmt.Errorf("%w: %d bytes is over the limit of %d", ErrFrameSize, n, max)
	}
	if cap(buf) >= int(n) || n <= frameChunk {
		if cap(buf) < int(n) {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, truncated(err)
		}
		return buf, nil
	}
	// A large frame's buffer grows with the bytes that actually arrive, so
	// a peer that announces a large size and sends little (or stalls) pins
	// little memory (CVE-2022-34917): it doubles until the bytes received
	// are a 1/frameTrust of the frame, then takes the frame's exact size, so
	// that a frame arriving whole is allocated about once and copied little.
	buf = make([]byte, 0, frameChunk)
	for len(buf) < int(n) {
		next := min(int(n), 2*len(buf))
		if next < frameChunk {
			next = min(int(n), frameChunk)
		}
		if len(buf) > 0 && int(n) <= frameTrust*len(buf) {
			next = int(n)
		}
		if cap(buf) < next {
			grown := make([]byte, len(buf), next)
			copy(grown, buf)
			buf = grown
		}
		if _, err := io.ReadFull(r, buf[len(buf):next]); err != nil {
			return nil, truncated(err)
		}
		buf = buf[:next]
	}
	return buf, nil
}

// frameChunk is the first allocation for a large frame.
const frameChunk = 64 << 10

// frameTrust bounds a large frame's buffer to this many times the bytes
// received of it (plus frameChunk) before it has all arrived.
const frameTrust = 16

func truncated(err error) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("protocol: truncated frame: %w", err)
}

const apiVersionsKey = 18

// Header is a parsed request header (v1 or v2).
type Header struct {
	Key           int16
	Version       int16
	CorrelationID int32
	ClientID      string
}

// ParseRequest parses the header and body of a frame. It returns the header
// even when the body cannot be decoded, so that the caller can log the
// correlation id. The registry decides which versions are accepted; ApiVersions
// at a version above our range is decoded as v0, as KIP-511 asks.
func ParseRequest(reg *Registry, frame []byte) (Header, kmsg.Request, error) {
	rd := kbin.Reader{Src: frame}
	h := Header{Key: rd.Int16(), Version: rd.Int16(), CorrelationID: rd.Int32()}
	if rd.Complete() != nil {
		return h, nil, ErrHeader
	}
	api, ok := reg.Lookup(h.Key)
	if !ok {
		return h, nil, fmt.Errorf("%w %d", ErrUnknownAPI, h.Key)
	}
	clientID := rd.NullableString()
	if clientID != nil {
		h.ClientID = *clientID
	}
	if rd.Complete() != nil {
		return h, nil, ErrHeader
	}
	if h.Key == apiVersionsKey && h.Version > api.Max {
		// KIP-511: a client newer than us gets a v0 answer listing our
		// versions; its body may be in a format we cannot read.
		req := kmsg.NewPtrApiVersionsRequest()
		req.SetVersion(0)
		return h, req, nil
	}
	if h.Version < api.Min || h.Version > api.Max {
		return h, nil, fmt.Errorf("%w: %s v%d (supported %d..%d)", ErrUnsupportedVer,
			kmsg.NameForKey(h.Key), h.Version, api.Min, api.Max)
	}
	req := kmsg.RequestForKey(h.Key)
	req.SetVersion(h.Version)
	if req.IsFlexible() {
		kmsg.SkipTags(&rd)
		if rd.Complete() != nil {
			return h, nil, ErrHeader
		}
	}
	if err := readFromSafe(req, rd.Src); err != nil {
		return h, nil, fmt.Errorf("%w: %s v%d: %v", ErrBody, kmsg.NameForKey(h.Key), h.Version, err)
	}
	return h, req, nil
}

// readFromSafe decodes a body; the codec bounds array lengths by the bytes
// left, but a panic in a decoder must still never take the broker down.
func readFromSafe(req kmsg.Request, b []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("decoder panic: %v", r)
		}
	}()
	return req.ReadFrom(b)
}

// AppendResponse appends a size-prefixed response frame to dst.
func AppendResponse(dst []byte, corr int32, resp kmsg.Response) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = kbin.AppendInt32(dst, corr)
	// Response header v1 (tagged fields) for flexible versions, except
	// ApiVersions, whose response header is always v0 (KIP-511).
	if resp.IsFlexible() && resp.Key() != apiVersionsKey {
		dst = append(dst, 0)
	}
	dst = resp.AppendTo(dst)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst
}
