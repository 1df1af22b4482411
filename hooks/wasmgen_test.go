package hooks

// A minimal WebAssembly binary writer for tests: just enough sections to
// build modules that break the ABI in one precise way each.

const (
	tI32 = 0x7f

	opUnreachable = 0x00
	opBlock       = 0x02
	opLoop        = 0x03
	opEnd         = 0x0b
	opBr          = 0x0c
	opBrIf        = 0x0d
	opLocalGet    = 0x20
	opLocalSet    = 0x21
	opI32Store    = 0x36
	opI32Store8   = 0x3a
	opMemoryGrow  = 0x40
	opI32Const    = 0x41
	opI32Ne       = 0x47
	opI32GeS      = 0x4e
	opI32Add      = 0x6a
	opI32Mul      = 0x6c
)

type wfunc struct {
	name    string // export name ("" for none)
	params  int    // i32 parameters
	results int    // i32 results
	locals  int    // extra i32 locals
	body    []byte // instructions without the final end
}

type wmodule struct {
	pages     uint32 // initial memory pages; memory is exported as "memory" unless noMemory
	noMemory  bool
	functions []wfunc
	start     int // 1 + the index of the start function; 0 for none
}

func uleb(v uint32) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

func sleb(v int32) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func i32c(v int32) []byte { return append([]byte{opI32Const}, sleb(v)...) }

func section(id byte, payload []byte) []byte {
	return append(append([]byte{id}, uleb(uint32(len(payload)))...), payload...)
}

func vec(n int, items []byte) []byte { return append(uleb(uint32(n)), items...) }

func (m wmodule) bytes() []byte {
	out := []byte{0x00, 'a', 's', 'm', 1, 0, 0, 0}
	var types, funcs, code, exports []byte
	nexports := 0
	for i, f := range m.functions {
		types = append(types, 0x60)
		types = append(types, uleb(uint32(f.params))...)
		for j := 0; j < f.params; j++ {
			types = append(types, tI32)
		}
		types = append(types, uleb(uint32(f.results))...)
		for j := 0; j < f.results; j++ {
			types = append(types, tI32)
		}
		funcs = append(funcs, uleb(uint32(i))...)
		var body []byte
		if f.locals > 0 {
			body = append(body, 1)
			body = append(body, uleb(uint32(f.locals))...)
			body = append(body, tI32)
		} else {
			body = append(body, 0)
		}
		body = append(body, f.body...)
		body = append(body, opEnd)
		code = append(code, uleb(uint32(len(body)))...)
		code = append(code, body...)
		if f.name != "" {
			exports = append(exports, uleb(uint32(len(f.name)))...)
			exports = append(exports, f.name...)
			exports = append(exports, 0x00)
			exports = append(exports, uleb(uint32(i))...)
			nexports++
		}
	}
	if !m.noMemory {
		exports = append(exports, uleb(6)...)
		exports = append(exports, "memory"...)
		exports = append(exports, 0x02, 0x00)
		nexports++
	}
	out = append(out, section(1, vec(len(m.functions), types))...)
	out = append(out, section(3, vec(len(m.functions), funcs))...)
	if !m.noMemory {
		out = append(out, section(5, vec(1, append([]byte{0x00}, uleb(m.pages)...)))...)
	}
	out = append(out, section(7, vec(nexports, exports))...)
	if m.start > 0 {
		out = append(out, section(8, uleb(uint32(m.start-1)))...)
	}
	out = append(out, section(10, vec(len(m.functions), code))...)
	return out
}

// Building blocks.

func versionFn(v int32) wfunc {
	return wfunc{name: "gregor_abi_version", results: 1, body: i32c(v)}
}

func allocFn(ptr int32) wfunc {
	return wfunc{name: "gregor_alloc", params: 1, results: 1, body: i32c(ptr)}
}

// constPartitionFn writes partition c for every record and returns 0:
// for i := 0; i < count; i++ { store(ptr+4i, c) }.
func constPartitionFn(c int32) wfunc {
	body := []byte{opBlock, 0x40, opLoop, 0x40,
		opLocalGet, 4, opLocalGet, 2, opI32GeS, opBrIf, 1,
		opLocalGet, 0, opLocalGet, 4}
	body = append(body, i32c(4)...)
	body = append(body, opI32Mul, opI32Add)
	body = append(body, i32c(c)...)
	body = append(body, opI32Store, 2, 0, opLocalGet, 4)
	body = append(body, i32c(1)...)
	body = append(body, opI32Add, opLocalSet, 4, opBr, 0, opEnd, opEnd)
	body = append(body, i32c(0)...)
	return wfunc{name: "gregor_partition", params: 4, results: 1, locals: 1, body: body}
}

func partitionFn(body []byte) wfunc {
	return wfunc{name: "gregor_partition", params: 4, results: 1, body: body}
}

var (
	trapBody     = []byte{opUnreachable}
	loopBody     = append([]byte{opLoop, 0x40, opBr, 0, opEnd}, i32c(0)...)
	memoryBlowUp = append(append(append([]byte{opLoop, 0x40}, i32c(16)...), opMemoryGrow, 0x00), append(append(i32c(-1), opI32Ne, opBrIf, 0, opEnd), opUnreachable)...)
)

// partitionerModule is a well-formed partitioner with the given body.
func partitionerModule(part wfunc) []byte {
	return wmodule{pages: 2, functions: []wfunc{versionFn(1), allocFn(1024), part}}.bytes()
}
