package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// maxZstdWindow bounds the history a zstd frame may demand. 128 MiB is the
// largest window the reference implementation decodes without opting in.
const maxZstdWindow = 128 << 20

// xerialMagic starts the snappy framing the Java client writes.
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

const (
	xerialHeaderLen = 16       // magic, version, compatible version
	xerialBlockSize = 32 << 10 // the Java client's block size
)

var (
	gzipReaders sync.Pool // *gzip.Reader
	lz4Readers  = sync.Pool{New: func() any { return lz4.NewReader(nil) }}
	zstdReaders = sync.Pool{New: func() any {
		d, err := zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(maxZstdWindow),
			// Never decode a whole buffer ahead of the output bound.
			zstd.WithDecodeBuffersBelow(0))
		if err != nil {
			panic(fmt.Sprintf("record: zstd decoder options: %v", err)) // static options; cannot fail
		}
		return d
	}}
	// zstdCapped decodes whole frames into the caller's buffer, never past
	// its capacity.
	zstdCapped = sync.Pool{New: func() any {
		d, err := zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderMaxWindow(maxZstdWindow),
			zstd.WithDecodeAllCapLimit(true))
		if err != nil {
			panic(fmt.Sprintf("record: zstd decoder options: %v", err)) // static options; cannot fail
		}
		return d
	}}
	zstdWriters = sync.Pool{New: func() any {
		e, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedDefault))
		if err != nil {
			panic(fmt.Sprintf("record: zstd encoder options: %v", err)) // static options; cannot fail
		}
		return e
	}}
	gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}
	lz4Writers  = sync.Pool{New: func() any {
		w := lz4.NewWriter(nil)
		// Kafka's Java client writes 64 KiB independent blocks without a
		// content checksum; match it so every client can read what we build.
		if err := w.Apply(lz4.BlockSizeOption(lz4.Block64Kb), lz4.ChecksumOption(false)); err != nil {
			panic(fmt.Sprintf("record: lz4 writer options: %v", err)) // static options; cannot fail
		}
		return w
	}}
)

// Decompress returns the decompressed form of src, a batch's records section
// compressed with c. Snappy input may use the Java client's xerial framing or
// be a raw snappy block; lz4 input is the lz4 frame format. Output over max
// bytes fails with ErrTooLarge; undecodable input is ErrCorrupt-class. For
// CodecNone src itself is returned.
func Decompress(c Codec, src []byte, max int) ([]byte, error) {
	if c == CodecNone {
		if len(src) > max {
			return nil, fmt.Errorf("%w: %d bytes exceed the max of %d", ErrTooLarge, len(src), max)
		}
		return src, nil
	}
	return decompressAppend(nil, c, src, max)
}

// decompressAppend decompresses src into dst[:0]'s storage, growing it as
// needed but never past limit+1 bytes.
func decompressAppend(dst []byte, c Codec, src []byte, limit int) ([]byte, error) {
	if limit < 0 {
		limit = 0
	}
	dst = dst[:0]
	decompressions.Add(1)
	var err error
	switch c {
	case CodecGzip:
		dst, err = gunzip(dst, src, limit)
	case CodecSnappy:
		dst, err = unsnappy(dst, src, limit)
	case CodecLZ4:
		r := lz4Readers.Get().(*lz4.Reader)
		r.Reset(bytes.NewReader(src))
		dst, err = readBounded(dst, r, limit, len(src))
		r.Reset(nil)
		lz4Readers.Put(r)
	case CodecZstd:
		dst, err = unzstd(dst, src, limit)
	default:
		return dst, corruptf("unknown compression codec %d", int8(c))
	}
	if err != nil {
		if errors.Is(err, ErrTooLarge) {
			return dst, err
		}
		return dst, fmt.Errorf("%w: %s: %v", ErrCorrupt, c, err)
	}
	return dst, nil
}

// unzstd decodes in one call when the frame declares a content size within the
// limit (the common case: clients compress whole buffers), else streams.
func unzstd(dst, src []byte, limit int) ([]byte, error) {
	var fh zstd.Header
	if fh.Decode(src) == nil && fh.HasFCS && fh.FrameContentSize <= uint64(limit) {
		if uint64(cap(dst)) < fh.FrameContentSize {
			dst = make([]byte, 0, fh.FrameContentSize)
		}
		d := zstdCapped.Get().(*zstd.Decoder)
		out, err := d.DecodeAll(src, dst[:0])
		zstdCapped.Put(d)
		if err == nil {
			return out, nil
		}
		if !errors.Is(err, zstd.ErrDecoderSizeExceeded) {
			return dst, err
		}
		// More frames follow the first: stream with the bound.
	}
	d := zstdReaders.Get().(*zstd.Decoder)
	defer zstdReaders.Put(d)
	err := d.Reset(bytes.NewReader(src))
	if err == nil {
		dst, err = readBounded(dst[:0], d, limit, len(src))
	}
	_ = d.Reset(bytes.NewReader(nil))
	return dst, err
}

func gunzip(dst, src []byte, limit int) ([]byte, error) {
	var r *gzip.Reader
	if v := gzipReaders.Get(); v != nil {
		r = v.(*gzip.Reader)
		if err := r.Reset(bytes.NewReader(src)); err != nil {
			gzipReaders.Put(r)
			return dst, err
		}
	} else {
		var err error
		if r, err = gzip.NewReader(bytes.NewReader(src)); err != nil {
			return dst, err
		}
	}
	dst, err := readBounded(dst, r, limit, len(src))
	gzipReaders.Put(r)
	return dst, err
}

// readBounded reads r to EOF into dst, failing with ErrTooLarge past limit bytes.
// The buffer starts near the input size and doubles, so allocation follows the
// real output rather than any size the input claims.
func readBounded(dst []byte, r io.Reader, limit, srcLen int) ([]byte, error) {
	if cap(dst) == 0 {
		dst = make([]byte, 0, min(limit+1, max(4*srcLen, 512)))
	}
	for {
		if len(dst) == cap(dst) {
			if len(dst) > limit {
				return dst, fmt.Errorf("%w: output exceeds the limit of %d bytes", ErrTooLarge, limit)
			}
			grown := make([]byte, len(dst), min(limit+1, 2*cap(dst)+512))
			copy(grown, dst)
			dst = grown
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if len(dst) > limit {
			return dst, fmt.Errorf("%w: output exceeds the limit of %d bytes", ErrTooLarge, limit)
		}
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}

// unsnappy decodes xerial-framed or raw snappy.
func unsnappy(dst, src []byte, limit int) ([]byte, error) {
	if len(src) < xerialHeaderLen || !bytes.Equal(src[:len(xerialMagic)], xerialMagic) {
		return snappyBlock(dst, src, limit)
	}
	p := src[xerialHeaderLen:]
	for len(p) > 0 {
		if len(p) < 4 {
			return dst, fmt.Errorf("xerial chunk header truncated")
		}
		n := binary.BigEndian.Uint32(p)
		p = p[4:]
		if uint64(n) > uint64(len(p)) {
			return dst, fmt.Errorf("xerial chunk of %d bytes exceeds the %d left", n, len(p))
		}
		var err error
		if dst, err = snappyBlock(dst, p[:n], limit); err != nil {
			return dst, err
		}
		p = p[n:]
	}
	return dst, nil
}

// snappyBlock appends the decoded raw snappy block to dst.
func snappyBlock(dst, block []byte, limit int) ([]byte, error) {
	n, err := s2.DecodedLen(block)
	if err != nil {
		return dst, err
	}
	if n > limit-len(dst) {
		return dst, fmt.Errorf("%w: output exceeds the limit of %d bytes", ErrTooLarge, limit)
	}
	if cap(dst)-len(dst) < n {
		grown := make([]byte, len(dst), max(len(dst)+n, min(limit, 2*cap(dst))))
		copy(grown, dst)
		dst = grown
	}
	out, err := s2.Decode(dst[len(dst):len(dst)+n], block)
	if err != nil {
		return dst, err
	}
	if len(out) != n {
		return dst, fmt.Errorf("snappy block decoded to %d bytes, header said %d", len(out), n)
	}
	return dst[:len(dst)+n], nil
}

// Compress appends src, a batch's records section, compressed with c to dst,
// in the framing Kafka's Java client writes (xerial snappy, 64 KiB lz4
// blocks without content checksum).
func Compress(dst []byte, c Codec, src []byte) ([]byte, error) { return compress(dst, c, src) }

// compress appends src compressed with c to dst.
func compress(dst []byte, c Codec, src []byte) ([]byte, error) {
	switch c {
	case CodecNone:
		return append(dst, src...), nil
	case CodecGzip:
		buf := bytes.NewBuffer(dst)
		w := gzipWriters.Get().(*gzip.Writer)
		w.Reset(buf)
		_, err := w.Write(src)
		if err == nil {
			err = w.Close()
		}
		w.Reset(nil)
		gzipWriters.Put(w)
		return buf.Bytes(), err
	case CodecSnappy:
		dst = append(dst, xerialMagic...)
		dst = binary.BigEndian.AppendUint32(dst, 1) // version
		dst = binary.BigEndian.AppendUint32(dst, 1) // compatible version
		for len(src) > 0 {
			chunk := src[:min(len(src), xerialBlockSize)]
			src = src[len(chunk):]
			lenPos := len(dst)
			dst = append(dst, 0, 0, 0, 0)
			need := s2.MaxEncodedLen(len(chunk))
			if cap(dst)-len(dst) < need {
				grown := make([]byte, len(dst), 2*cap(dst)+need)
				copy(grown, dst)
				dst = grown
			}
			// With room for the worst case the block is encoded in place.
			enc := s2.EncodeSnappy(dst[len(dst):len(dst)+need], chunk)
			dst = dst[:len(dst)+len(enc)]
			binary.BigEndian.PutUint32(dst[lenPos:], uint32(len(enc)))
		}
		return dst, nil
	case CodecLZ4:
		buf := bytes.NewBuffer(dst)
		w := lz4Writers.Get().(*lz4.Writer)
		w.Reset(buf)
		_, err := w.Write(src)
		if err == nil {
			err = w.Close()
		}
		w.Reset(nil)
		lz4Writers.Put(w)
		return buf.Bytes(), err
	case CodecZstd:
		e := zstdWriters.Get().(*zstd.Encoder)
		dst = e.EncodeAll(src, dst)
		zstdWriters.Put(e)
		return dst, nil
	}
	return dst, fmt.Errorf("record: encode: unknown compression codec %d", int8(c))
}
