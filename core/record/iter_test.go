package record

import (
	"errors"
	"testing"
)

func TestBatches(t *testing.T) {
	var run []byte
	var sizes []int
	for i := 0; i < 4; i++ {
		b := mustEncode(t, BatchSpec{BaseOffset: int64(i * 10)}, testRecords(i+1))
		run = append(run, b...)
		sizes = append(sizes, len(b))
	}
	full := len(run)
	tests := []struct {
		name    string
		b       []byte
		batches int
		want    error
	}{
		{"empty", nil, 0, nil},
		{"all", run, 4, nil},
		{"partial header", run[:full-sizes[3]+5], 3, ErrTruncated},
		{"partial batch", run[:full-1], 3, ErrTruncated},
		{"bad length", func() []byte {
			b := append([]byte(nil), run...)
			b[sizes[0]+posLength] = 0
			b[sizes[0]+posLength+1] = 0
			b[sizes[0]+posLength+2] = 0
			b[sizes[0]+posLength+3] = 3
			return b
		}(), 1, ErrCorrupt},
		{"bad magic", func() []byte {
			b := append([]byte(nil), run...)
			b[sizes[0]+sizes[1]+posMagic] = 1
			return b
		}(), 2, ErrUnsupportedMagic},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			it := Batches(tt.b)
			n, pos := 0, 0
			for it.Next() {
				if it.Header().BaseOffset != int64(n*10) || len(it.Batch()) != sizes[n] || it.Position() != pos {
					t.Fatalf("batch %d: header %+v len %d pos %d", n, it.Header(), len(it.Batch()), it.Position())
				}
				pos += sizes[n]
				n++
			}
			if n != tt.batches {
				t.Fatalf("walked %d batches, want %d", n, tt.batches)
			}
			if it.Consumed() != pos {
				t.Fatalf("Consumed = %d, want %d", it.Consumed(), pos)
			}
			if tt.want == nil && it.Err() != nil || tt.want != nil && !errors.Is(it.Err(), tt.want) {
				t.Fatalf("Err = %v, want %v", it.Err(), tt.want)
			}
		})
	}
}
