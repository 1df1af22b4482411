// Kafka's default partitioner as a Gregor WebAssembly module (ABI v1, see
// hooks/ABI.md): keyed records go to (murmur2(key) & 0x7fffffff) % n, the
// Java client's placement; records with a null key go round-robin.

const OK: i32 = 0;
const BAD_INPUT: i32 = 1;
const FIELD_KEY: i32 = 1;

// The exchange buffer the host writes into (guest-owned). The stub runtime
// never frees, so a larger request allocates anew; requests only grow.
let buf: usize = 0;
let bufCap: i32 = 0;
let nextNullKey: i32 = 0;

export function gregor_abi_version(): i32 {
  return 1;
}

export function gregor_alloc(size: i32): usize {
  if (size < 0) return 0;
  if (size > bufCap) {
    buf = heap.alloc(<usize>size);
    bufCap = size;
  }
  return buf;
}

// Only keys are read, so the host leaves values and headers out.
export function gregor_record_fields(): i32 {
  return FIELD_KEY;
}

// murmur2 with the Java client's seed, over len bytes at p.
function murmur2(p: usize, len: i32): i32 {
  const m: u32 = 0x5bd1e995;
  let h: u32 = 0x9747b28c ^ <u32>len;
  let n = len;
  while (n >= 4) {
    let k = load<u32>(p);
    k *= m;
    k ^= k >>> 24;
    k *= m;
    h *= m;
    h ^= k;
    p += 4;
    n -= 4;
  }
  if (n == 3) h ^= <u32>load<u8>(p + 2) << 16;
  if (n >= 2) h ^= <u32>load<u8>(p + 1) << 8;
  if (n >= 1) {
    h ^= <u32>load<u8>(p);
    h *= m;
  }
  h ^= h >>> 13;
  h *= m;
  h ^= h >>> 15;
  return <i32>h;
}

// gregor_partition: the first 4*count bytes at ptr receive partitions, the
// encoded records follow. Every length is checked against the end.
export function gregor_partition(ptr: usize, len: i32, count: i32, n: i32): i32 {
  if (count < 0 || n < 1 || len < 4 * count) return BAD_INPUT;
  const end = ptr + <usize>len;
  let off = ptr + <usize>(4 * count);
  for (let i = 0; i < count; i++) {
    if (off + 12 > end) return BAD_INPUT;
    const klen = load<i32>(off);
    off += 4;
    let part: i32;
    if (klen == -1) {
      part = nextNullKey % n;
      nextNullKey = (nextNullKey + 1) % n;
    } else {
      if (klen < 0 || <usize>klen > end - off) return BAD_INPUT;
      part = (murmur2(off, klen) & 0x7fffffff) % n;
      off += <usize>klen;
    }
    store<i32>(ptr + <usize>(4 * i), part);
    // Skip the value and the headers (empty unless the host sends them).
    if (off + 8 > end) return BAD_INPUT;
    const vlen = load<i32>(off);
    off += 4;
    if (vlen > 0) {
      if (<usize>vlen > end - off) return BAD_INPUT;
      off += <usize>vlen;
    }
    if (off + 4 > end) return BAD_INPUT;
    const headers = load<i32>(off);
    off += 4;
    for (let j = 0; j < headers; j++) {
      for (let f = 0; f < 2; f++) {
        if (off + 4 > end) return BAD_INPUT;
        const l = load<i32>(off);
        off += 4;
        if (l > 0) {
          if (<usize>l > end - off) return BAD_INPUT;
          off += <usize>l;
        }
      }
    }
  }
  return OK;
}
