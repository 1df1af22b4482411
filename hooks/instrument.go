package hooks

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// stopGlobal is the exported i32 global instrument adds: the host sets it
// to 1 from another goroutine to stop a call that overran its limit.
const stopGlobal = "gregor_stop"

// startExport is the name under which instrument exports a module's start
// function, whose section it removes: the host calls it under the limit
// once the watchdog is armed, where the start section would run it inside
// instantiation with no limit at all.
const startExport = "gregor_start"

// maxGrowth bounds the instrumented code section to maxGrowth times the
// original (plus a page): a module of nothing but loops would otherwise
// grow ~16x at load. Beyond it the module keeps wazero's check.
const maxGrowth = 4

var errUninstrumentable = errors.New("hooks: module uses instructions the stop check does not know")

// instrument returns a copy of a module in which every loop body and every
// function body starts with `global.get $gregor_stop; if; unreachable;
// end`, $gregor_stop being a new exported mutable i32 global. A loop
// iteration or a call then costs a load and a branch instead of wazero's
// close-on-context-done check, which leaves the compiled code for Go at
// every loop iteration (10-20x the cost of a batch). Loops and calls are
// the only ways back to code already run: a call runs long only by looping
// or by calling (a recursion of bounded depth still makes 2^depth calls).
// The start section becomes the export startExport. Modules with
// instructions outside what this decoder knows (SIMD, threads, exceptions)
// are refused with errUninstrumentable and keep wazero's check, as are
// modules whose code names a global index at or past the ones added (the
// original is invalid; instrumented, the guest could clear its own stop).
func instrument(wasm []byte) ([]byte, error) {
	r := &wreader{b: wasm, i: 8}
	if len(wasm) < 8 {
		return nil, errUninstrumentable
	}
	type section struct {
		id   byte
		body []byte
	}
	var sections []section
	importedGlobals, definedGlobals := uint32(0), uint32(0)
	for !r.done() {
		id := r.byte()
		n := r.u32()
		body := r.take(int(n))
		if r.err != nil {
			return nil, r.err
		}
		sections = append(sections, section{id, body})
		switch id {
		case 2:
			g, err := countImportedGlobals(body)
			if err != nil {
				return nil, err
			}
			importedGlobals = g
		case 6:
			br := &wreader{b: body}
			definedGlobals = br.u32()
			if br.err != nil {
				return nil, br.err
			}
		}
	}
	if uint64(importedGlobals)+uint64(definedGlobals) > 1<<31 {
		return nil, errUninstrumentable
	}
	idx := importedGlobals + definedGlobals
	start, hasStart := uint32(0), false
	// The new globals, both mutable i32: the stop flag (0) and the fuel
	// (loopFuel).
	newGlobal := []byte{0x7F, 0x01, 0x41, 0x00, 0x0B, 0x7F, 0x01, 0x41}
	newGlobal = appendSleb(newGlobal, loopFuel)
	newGlobal = append(newGlobal, 0x0B)
	var out []byte
	out = append(out, wasm[:8]...)
	put := func(id byte, body []byte) {
		out = append(out, id)
		out = binary.AppendUvarint(out, uint64(len(body)))
		out = append(out, body...)
	}
	globalDone, exportDone := false, false
	// order ranks non-custom sections as the binary format orders them.
	order := map[byte]int{1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 13: 6, 6: 7, 7: 8, 8: 9, 9: 10, 12: 11, 10: 12, 11: 13}
	for _, s := range sections {
		if s.id == 8 {
			br := &wreader{b: s.body}
			start, hasStart = br.u32(), true
			if br.err != nil || br.i != len(br.b) {
				return nil, errUninstrumentable
			}
		}
	}
	for _, s := range sections {
		if s.id != 0 && !globalDone && order[s.id] > order[6] {
			put(6, append(binary.AppendUvarint(nil, 2), newGlobal...))
			globalDone = true
		}
		switch s.id {
		case 6:
			br := &wreader{b: s.body}
			n := br.u32()
			body := binary.AppendUvarint(nil, uint64(n+2))
			body = append(body, s.body[br.i:]...)
			put(6, append(body, newGlobal...))
			globalDone = true
		case 7:
			n, at, err := checkExports(s.body, idx)
			if err != nil {
				return nil, err
			}
			added := uint64(1)
			if hasStart {
				added++
			}
			body := binary.AppendUvarint(nil, uint64(n)+added)
			body = append(body, s.body[at:]...)
			body = binary.AppendUvarint(body, uint64(len(stopGlobal)))
			body = append(body, stopGlobal...)
			body = append(body, 0x03)
			body = binary.AppendUvarint(body, uint64(idx))
			if hasStart {
				body = binary.AppendUvarint(body, uint64(len(startExport)))
				body = append(body, startExport...)
				body = append(body, 0x00)
				body = binary.AppendUvarint(body, uint64(start))
			}
			put(7, body)
			exportDone = true
		case 8: // called by the host under the limit (startExport)
		case 10:
			body, err := instrumentCode(s.body, idx)
			if err != nil {
				return nil, err
			}
			put(10, body)
		default:
			put(s.id, s.body)
		}
	}
	if !globalDone || !exportDone {
		return nil, errUninstrumentable
	}
	return out, nil
}

// checkExports reads the export section: its count and where the exports
// start, or errUninstrumentable when it names a global index at or past
// nglobals (the ones instrument adds) or already exports a name
// instrument adds.
func checkExports(body []byte, nglobals uint32) (n uint32, at int, err error) {
	r := &wreader{b: body}
	n = r.u32()
	at = r.i
	for i := uint32(0); i < n && r.err == nil; i++ {
		name := string(r.take(int(r.u32())))
		kind := r.byte()
		index := r.u32()
		if name == stopGlobal || name == startExport || kind == 0x03 && index >= nglobals {
			return 0, 0, errUninstrumentable
		}
	}
	if r.err != nil || r.i != len(body) || n > 1<<31 {
		return 0, 0, errUninstrumentable
	}
	return n, at, nil
}

func countImportedGlobals(body []byte) (uint32, error) {
	r := &wreader{b: body}
	n := r.u32()
	var globals uint32
	for i := uint32(0); i < n && r.err == nil; i++ {
		r.take(int(r.u32())) // module
		r.take(int(r.u32())) // name
		switch r.byte() {
		case 0x00: // func: type index
			r.u32()
		case 0x01: // table: reftype, limits
			r.byte()
			r.limits()
		case 0x02: // memory: limits
			r.limits()
		case 0x03: // global: valtype, mut
			r.byte()
			r.byte()
			globals++
		default:
			return 0, errUninstrumentable
		}
	}
	return globals, r.err
}

// instrumentCode rewrites the code section's function bodies.
func instrumentCode(body []byte, stop uint32) ([]byte, error) {
	fuel := binary.AppendUvarint(nil, uint64(stop+1))
	check := []byte{0x23}
	check = binary.AppendUvarint(check, uint64(stop))
	check = append(check, 0x04, 0x40, 0x00, 0x0B) // if (empty) unreachable end
	// fuel -= 1; if fuel == 0 { fuel = loopFuel; drop(memory.grow(0)) }
	check = append(append(append(check, 0x23), fuel...), 0x41, 0x01, 0x6B, 0x24)
	check = append(append(append(check, fuel...), 0x23), fuel...)
	check = append(check, 0x45, 0x04, 0x40, 0x41)
	check = appendSleb(check, loopFuel)
	check = append(append(append(check, 0x24), fuel...), 0x41, 0x00, 0x40, 0x00, 0x1A, 0x0B)
	r := &wreader{b: body}
	n := r.u32()
	out := binary.AppendUvarint(nil, uint64(n))
	limit := maxGrowth*len(body) + 4096
	for i := uint32(0); i < n; i++ {
		size := r.u32()
		fn := r.take(int(size))
		if r.err != nil {
			return nil, r.err
		}
		nb, err := instrumentFunc(fn, check, stop)
		if err != nil {
			return nil, fmt.Errorf("function %d: %w", i, err)
		}
		if len(out)+len(nb) > limit {
			return nil, errUninstrumentable
		}
		out = binary.AppendUvarint(out, uint64(len(nb)))
		out = append(out, nb...)
	}
	if !r.done() {
		return nil, errUninstrumentable
	}
	return out, nil
}

// instrumentFunc rewrites one function body; nglobals is the module's
// global count before instrument's (the index of gregor_stop).
func instrumentFunc(fn []byte, check []byte, nglobals uint32) ([]byte, error) {
	r := &wreader{b: fn}
	groups := r.u32()
	for g := uint32(0); g < groups && r.err == nil; g++ {
		r.u32()
		r.byte()
	}
	if r.err != nil {
		return nil, r.err
	}
	out := make([]byte, 0, len(fn)+len(fn)/16)
	out = append(out, fn[:r.i]...)
	out = append(out, check...) // a call is a way back, like a loop
	for !r.done() {
		start := r.i
		op := r.byte()
		isLoop := false
		switch {
		case op == 0x02 || op == 0x03 || op == 0x04: // block, loop, if
			r.blockType()
			isLoop = op == 0x03
		case op == 0x00 || op == 0x01 || op == 0x05 || op == 0x0B || op == 0x0F || op == 0x1A || op == 0x1B || op == 0xD1:
		case op >= 0x45 && op <= 0xC4: // numeric, sign extension
		case op == 0x23 || op == 0x24: // global.get, global.set
			if r.u32() >= nglobals && r.err == nil {
				return nil, errUninstrumentable
			}
		case op == 0x0C || op == 0x0D || op == 0x10 || op == 0x12 || (op >= 0x20 && op <= 0x26) || op == 0xD2:
			r.u32()
		case op == 0x0E: // br_table
			k := r.u32()
			for j := uint32(0); j <= k && r.err == nil; j++ {
				r.u32()
			}
		case op == 0x11 || op == 0x13: // call_indirect, return_call_indirect
			r.u32()
			r.u32()
		case op == 0x1C: // select t*
			k := r.u32()
			for j := uint32(0); j < k && r.err == nil; j++ {
				r.byte()
			}
		case op >= 0x28 && op <= 0x3E: // memarg
			if align := r.u32(); align&0x40 != 0 {
				r.u32() // memory index
			}
			r.u32()
		case op == 0x3F || op == 0x40:
			r.u32()
		case op == 0x41 || op == 0x42:
			r.leb()
		case op == 0x43:
			r.take(4)
		case op == 0x44:
			r.take(8)
		case op == 0xD0:
			r.byte()
		case op == 0xFC:
			switch sub := r.u32(); {
			case sub <= 7:
			case sub == 8 || sub == 10 || sub == 12 || sub == 14:
				r.u32()
				r.u32()
			case sub == 9 || sub == 11 || sub == 13 || (sub >= 15 && sub <= 17):
				r.u32()
			default:
				return nil, errUninstrumentable
			}
		default:
			return nil, errUninstrumentable
		}
		if r.err != nil {
			return nil, r.err
		}
		out = append(out, fn[start:r.i]...)
		if isLoop {
			out = append(out, check...)
		}
	}
	return out, nil
}

// loopFuel is how many loop iterations run between two exits of the
// compiled code to Go (a memory.grow of 0 pages). Native code cannot be
// preempted: without these exits a looping guest would keep the goroutine
// scheduler from running the timer that stops it on a single P, and a
// stop-the-world of the collector would wait for it forever.
const loopFuel = 4096

func appendSleb(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7F)
		v >>= 7
		if v == 0 && c&0x40 == 0 || v == -1 && c&0x40 != 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// wreader reads the binary format; the first error sticks.
type wreader struct {
	b   []byte
	i   int
	err error
}

func (r *wreader) done() bool { return r.err != nil || r.i >= len(r.b) }

func (r *wreader) byte() byte {
	if r.err != nil || r.i >= len(r.b) {
		r.err = errUninstrumentable
		return 0
	}
	c := r.b[r.i]
	r.i++
	return c
}

func (r *wreader) take(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.b)-r.i {
		r.err = errUninstrumentable
		return nil
	}
	s := r.b[r.i : r.i+n]
	r.i += n
	return s
}

// leb skips a LEB128 number of up to 10 bytes and returns its low 64 bits
// read as unsigned.
func (r *wreader) leb() uint64 {
	var v uint64
	for shift := 0; shift < 70; shift += 7 {
		c := r.byte()
		if r.err != nil {
			return 0
		}
		v |= uint64(c&0x7F) << shift
		if c&0x80 == 0 {
			return v
		}
	}
	r.err = errUninstrumentable
	return 0
}

func (r *wreader) u32() uint32 {
	v := r.leb()
	if v > 1<<32-1 {
		r.err = errUninstrumentable
	}
	return uint32(v)
}

func (r *wreader) limits() {
	switch flag := r.byte(); flag {
	case 0x00:
		r.u32()
	case 0x01:
		r.u32()
		r.u32()
	default:
		r.err = errUninstrumentable
	}
}

// blockType skips a block type: empty, a value type or a type index (s33).
func (r *wreader) blockType() {
	if r.err != nil || r.i >= len(r.b) {
		r.err = errUninstrumentable
		return
	}
	switch c := r.b[r.i]; c {
	case 0x40, 0x7F, 0x7E, 0x7D, 0x7C, 0x7B, 0x70, 0x6F:
		r.i++
	default:
		r.leb()
	}
}
