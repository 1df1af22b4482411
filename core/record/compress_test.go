package record

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/klauspost/compress/s2"
)

func TestDecompressRoundTrip(t *testing.T) {
	inputs := map[string][]byte{
		"empty":        {},
		"small":        []byte("hello, kafka"),
		"repetitive":   bytes.Repeat([]byte("abcdefgh"), 20000),
		"multi-blocks": bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}, 30000),
	}
	for _, c := range []Codec{CodecNone, CodecGzip, CodecSnappy, CodecLZ4, CodecZstd} {
		for name, in := range inputs {
			t.Run(fmt.Sprintf("%s/%s", c, name), func(t *testing.T) {
				comp, err := compress(nil, c, in)
				if err != nil {
					t.Fatalf("compress: %v", err)
				}
				out, err := Decompress(c, comp, len(in))
				if err != nil {
					t.Fatalf("Decompress: %v", err)
				}
				if !bytes.Equal(out, in) {
					t.Fatalf("round trip mismatch: %d bytes in, %d out", len(in), len(out))
				}
				if len(in) > 0 {
					if _, err := Decompress(c, comp, len(in)-1); !errors.Is(err, ErrTooLarge) {
						t.Fatalf("limit %d: err = %v, want ErrTooLarge", len(in)-1, err)
					}
				}
			})
		}
	}
}

func TestDecompressRawSnappy(t *testing.T) {
	in := bytes.Repeat([]byte("raw snappy block "), 1000)
	out, err := Decompress(CodecSnappy, s2.EncodeSnappy(nil, in), len(in))
	if err != nil || !bytes.Equal(out, in) {
		t.Fatalf("raw snappy: err %v, equal %v", err, bytes.Equal(out, in))
	}
}

func TestDecompressGarbage(t *testing.T) {
	garbage := []byte("this is not compressed data at all, not in any codec")
	xerialBad := append(append([]byte(nil), xerialMagic...), 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 200, 1)
	tests := []struct {
		name string
		c    Codec
		in   []byte
	}{
		{"gzip", CodecGzip, garbage},
		{"snappy", CodecSnappy, garbage},
		{"xerial chunk overrun", CodecSnappy, xerialBad},
		{"lz4", CodecLZ4, garbage},
		{"zstd", CodecZstd, garbage},
		{"unknown", Codec(7), garbage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Decompress(tt.c, tt.in, 1<<20); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("err = %v, want ErrCorrupt", err)
			}
		})
	}
}

func TestDecompressZstdMultiFrame(t *testing.T) {
	a := bytes.Repeat([]byte("first frame "), 500)
	b := bytes.Repeat([]byte("second frame "), 500)
	fa, _ := compress(nil, CodecZstd, a)
	fb, _ := compress(nil, CodecZstd, b)
	want := append(append([]byte(nil), a...), b...)
	out, err := Decompress(CodecZstd, append(fa, fb...), len(want))
	if err != nil || !bytes.Equal(out, want) {
		t.Fatalf("two frames: err %v, got %d bytes want %d", err, len(out), len(want))
	}
	if _, err := Decompress(CodecZstd, append(fa, fb...), len(want)-1); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("two frames over the limit: err = %v", err)
	}
}
