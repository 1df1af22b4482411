package main

import "testing"

// TestEachNoteNamesUnadvertisedAPI: an API one broker does not advertise
// is noted as not advertised there, not as the range v0-0.
func TestEachNoteNamesUnadvertisedAPI(t *testing.T) {
	p := &pair{g: &broker{name: "gregor", versions: map[int16][2]int16{71: {0, 0}}},
		k: &broker{name: "kafka", versions: map[int16][2]int16{3: {0, 13}}}}
	ran := false
	p.each(71, 0, func(*broker, int16) { ran = true })
	if ran {
		t.Fatal("the probe ran although Kafka does not advertise the API")
	}
	want := "GetTelemetrySubscriptions: no common version (Gregor v0-0, Kafka not advertised); not compared"
	if len(p.notes) != 1 || p.notes[0] != want {
		t.Fatalf("notes %q, want %q", p.notes, want)
	}
}
