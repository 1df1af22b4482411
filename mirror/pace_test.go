package mirror

import "testing"

// TestWriterPace: records are sent when nothing sent is outstanding, and
// otherwise once everything sent before is answered.
func TestWriterPace(t *testing.T) {
	var p writerPace
	step := func(what string, got, want bool) {
		t.Helper()
		if got != want {
			t.Fatalf("%s: send %v, want %v", what, got, want)
		}
	}
	step("nothing handed", p.due(), false)
	p.handed()
	p.handed()
	step("two records, idle producer", p.due(), true)
	step("the same records again", p.due(), false)
	p.handed()
	step("a record behind two outstanding", p.due(), false)
	step("the first answered", p.answered(), false)
	step("the second answered: the third goes", p.answered(), true)
	step("the third answered, nothing waiting", p.answered(), false)
	p.handed()
	step("idle again", p.due(), true)
	// A record the linger sent before any send is answered like any other.
	p.handed()
	step("the fourth answered: the fifth goes", p.answered(), true)
	step("the fifth answered", p.answered(), false)
	step("all answered", p.due(), false)
}
