package guest

import (
	"errors"
	"testing"

	"github.com/gregorbroker/gregor/sdk/wasm/abi"
)

func TestAllocAndSlice(t *testing.T) {
	b := Alloc(100)
	if len(b) != 100 {
		t.Fatalf("len %d", len(b))
	}
	if Alloc(-1) != nil {
		t.Fatal("negative size allocated")
	}
	if c := Alloc(10); &c[0] != &b[0] {
		t.Fatal("smaller request did not reuse the buffer")
	}
	const base = 1000
	for _, tc := range []struct {
		ptr, n uint32
		ok     bool
	}{{1000, 100, true}, {1010, 90, true}, {999, 10, false}, {1050, 60, false}, {1000, 0xffffffff, false}, {0xffffffff, 2, false}} {
		if got := Slice(base, tc.ptr, tc.n); (got != nil) != tc.ok {
			t.Errorf("Slice(%d, %d) ok=%v", tc.ptr, tc.n, got != nil)
		}
	}
}

func TestConfigure(t *testing.T) {
	OnConfigure(func(c []byte) error {
		if string(c) == "bad" {
			return errors.New("bad")
		}
		return nil
	})
	defer OnConfigure(nil)
	if Configure([]byte(`{"a":1}`)) != abi.OK || string(Config()) != `{"a":1}` {
		t.Fatal("good config")
	}
	if Configure([]byte("bad")) != abi.CodeConfig {
		t.Fatal("bad config accepted")
	}
}
