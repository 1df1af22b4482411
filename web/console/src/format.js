// Formatting and decoding of what the admin API returns.

export function bytes(n) {
  if (n === undefined || n === null || n < 0) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (i === 0 ? n : n.toFixed(1)) + ' ' + units[i];
}

export function num(n) {
  if (n === undefined || n === null || n < 0) return '–';
  return n.toLocaleString('en-US');
}

export function time(ms) {
  if (ms === undefined || ms === null || ms < 0) return '–';
  return new Date(ms).toISOString().replace('T', ' ').replace('Z', ' UTC');
}

// fromBase64 turns the API's base64 into bytes; null stays null.
export function fromBase64(s) {
  if (s === null || s === undefined) return null;
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

export function toBase64(bytesArr) {
  let s = '';
  for (const b of bytesArr) s += String.fromCharCode(b);
  return btoa(s);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function asText(b) {
  try { return utf8.decode(b); } catch { return null; }
}

export function hex(b) {
  const parts = [];
  for (let i = 0; i < b.length; i++) parts.push(b[i].toString(16).padStart(2, '0'));
  return parts.join(' ');
}

// decode shows bytes as mode asks: 'auto' picks JSON, then text, then hex.
// It returns {kind, text}.
export function decode(b, mode) {
  if (b === null) return { kind: 'null', text: 'null' };
  if (mode === 'hex') return { kind: 'hex', text: hex(b) };
  const text = asText(b);
  if (mode === 'text') return text === null ? { kind: 'hex', text: hex(b) } : { kind: 'text', text };
  if (text !== null) {
    const t = text.trim();
    if ((t.startsWith('{') || t.startsWith('[')) || mode === 'json') {
      try { return { kind: 'json', text: JSON.stringify(JSON.parse(text), null, 2) }; } catch { /* not JSON */ }
    }
    return { kind: 'text', text };
  }
  return { kind: 'hex', text: hex(b) };
}
