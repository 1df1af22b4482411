package main

import (
	"strings"
	"testing"
)

func TestScenarioMissing(t *testing.T) {
	all := Capabilities{Versions: map[int16][2]int16{}, Mechanisms: []string{"PLAIN"}}
	for k := int16(0); k < 100; k++ {
		all.Versions[k] = [2]int16{0, 9}
	}
	noGroups := Capabilities{Versions: map[int16][2]int16{}}
	for k, v := range all.Versions {
		if k < keyOffsetCommit || k > keySyncGroup {
			noGroups.Versions[k] = v
		}
	}
	noSASL := all
	noSASL.Mechanisms, noSASL.SASLErr = nil, "SaslHandshake not advertised"
	withTLS := all
	withTLS.SSLAddr, withTLS.SASLSSLAddr = "127.0.0.1:1", "127.0.0.1:2"
	withTLS.SASLSSLMechanisms = []string{"PLAIN", "SCRAM-SHA-512"}
	tlsPlainOnly := withTLS
	tlsPlainOnly.SASLSSLMechanisms = []string{"PLAIN"}
	tlsDown := withTLS
	tlsDown.SASLSSLMechanisms, tlsDown.SASLSSLErr = nil, "connection refused"
	cases := []struct {
		name     string
		scenario string
		caps     Capabilities
		want     string // substring of the skip reason; "" means the scenario runs
	}{
		{"everything advertised", "consumer_group", all, ""},
		{"groups missing", "consumer_group", noGroups, "JoinGroup"},
		{"produce needs no groups", "produce_consume", noGroups, ""},
		{"mechanism enabled", "sasl_plain", all, ""},
		{"mechanism not enabled", "sasl_scram", all, "does not enable SCRAM-SHA-256"},
		{"no SASL listener", "sasl_plain", noSASL, "SaslHandshake not advertised"},
		{"no SSL listener given", "ssl", all, "--ssl-bootstrap"},
		{"SSL listener given", "ssl", withTLS, ""},
		{"no SASL_SSL listener given", "sasl_ssl", all, "--sasl-ssl-bootstrap"},
		{"SASL_SSL mechanism enabled", "sasl_ssl", withTLS, ""},
		{"SASL_SSL mechanism not enabled", "sasl_ssl", tlsPlainOnly, "does not enable SCRAM-SHA-512"},
		{"SASL_SSL listener not answering runs", "sasl_ssl", tlsDown, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, ok := scenarioByName(c.scenario)
			if !ok {
				t.Fatalf("no scenario %s", c.scenario)
			}
			got := s.missing(c.caps)
			if c.want == "" && got != "" {
				t.Fatalf("missing = %q, want the scenario to run", got)
			}
			if c.want != "" && (!strings.HasPrefix(got, "not implemented") || !strings.Contains(got, c.want)) {
				t.Fatalf("missing = %q, want a not-implemented reason naming %q", got, c.want)
			}
		})
	}
}

func TestCheckSameRecords(t *testing.T) {
	want := pcRecords("gzip")
	swapped := append([]rec(nil), want...)
	swapped[0], swapped[1] = swapped[1], swapped[0]
	nullKey := append([]rec(nil), want...)
	nullKey[0].Key = nil
	emptyKey := append([]rec(nil), want...)
	emptyKey[1].Key = []byte{}
	badHeader := append([]rec(nil), want...)
	badHeader[2].Headers = [][2]string{{"h-index", "9"}, {"h-codec", "gzip"}}
	cases := []struct {
		name string
		got  []rec
		ok   bool
	}{
		{"same records in another order", swapped, true},
		{"one missing", want[1:], false},
		{"one twice", append(append([]rec(nil), want...), want[0]), false},
		{"key became null", nullKey, false},
		{"null key became empty", emptyKey, false},
		{"header changed", badHeader, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := checkSameRecords(want, c.got); (err == nil) != c.ok {
				t.Fatalf("checkSameRecords: %v, want ok=%v", err, c.ok)
			}
		})
	}
}

func TestCheckContiguous(t *testing.T) {
	mk := func(offsets []int64, values []string) []rec {
		var out []rec
		for i := range offsets {
			out = append(out, rec{Offset: offsets[i], Value: []byte(values[i])})
		}
		return out
	}
	cases := []struct {
		name string
		got  []rec
		ok   bool
	}{
		{"in order", mk([]int64{0, 1, 2}, []string{"p-0", "p-1", "p-2"}), true},
		{"out of order but complete", mk([]int64{2, 0, 1}, []string{"p-2", "p-0", "p-1"}), true},
		{"duplicate", mk([]int64{0, 1, 2}, []string{"p-0", "p-1", "p-1"}), false},
		{"gap", mk([]int64{0, 2, 3}, []string{"p-0", "p-1", "p-2"}), false},
		{"short", mk([]int64{0, 1}, []string{"p-0", "p-1"}), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := checkContiguous(c.got, "p", 3); (err == nil) != c.ok {
				t.Fatalf("checkContiguous: %v, want ok=%v", err, c.ok)
			}
		})
	}
}

// The exchange of RFC 7677 section 3.
func TestSCRAMSHA256RFC7677(t *testing.T) {
	s := newScramSHA256()
	if err := s.Begin("user", "pencil", ""); err != nil {
		t.Fatal(err)
	}
	s.nonce = "rOprNGfwEbeRWgbNEkqO"
	first, err := s.Step("")
	if err != nil || first != "n,,n=user,r=rOprNGfwEbeRWgbNEkqO" {
		t.Fatalf("client-first = %q, %v", first, err)
	}
	final, err := s.Step("r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")
	want := "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
	if err != nil || final != want {
		t.Fatalf("client-final = %q, %v; want %q", final, err, want)
	}
	bad := *s
	if _, err := bad.Step("v=AAAA"); err == nil {
		t.Fatal("a wrong server signature verified")
	}
	if _, err := s.Step("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="); err != nil || !s.Done() {
		t.Fatalf("server-final: %v, done=%v", err, s.Done())
	}
}

func TestSCRAMRejectsForeignNonce(t *testing.T) {
	s := newScramSHA256()
	if err := s.Begin("user", "pencil", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Step(""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Step("r=someoneelse,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"); err == nil {
		t.Fatal("a server nonce that does not extend ours was accepted")
	}
}
