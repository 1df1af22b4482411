package main

import "testing"

func TestParseShareConsumerPerf(t *testing.T) {
	out := "[2026-12-02 14:00:00] WARN some log line\n" +
		"start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec\n" +
		"2026-12-02 14:00:01:000, 2026-12-02 14:00:05:000, 195.3125, 48.8281, 200000, 50000.0000\n"
	v, err := parseShareConsumerPerf(out)
	if err != nil || v != 48.8281 {
		t.Fatalf("parse = %v, %v; want 48.8281", v, err)
	}
	if _, err := parseShareConsumerPerf("no header here\n1, 2, 3\n"); err == nil {
		t.Fatal("parsed output without a header")
	}
}
