import { get, enc } from './api.js';
import { h } from './dom.js';
import { num, time, fromBase64, decode } from './format.js';

// records is the record browser of one partition: jump to an offset or a
// time, page forward, and show keys, values and headers decoded as asked.
export async function records(topicName, partition, params) {
  const t = await get('/topics/' + enc(topicName));
  const mode = params.get('decode') || 'auto';
  const limit = params.get('limit') || '50';
  const q = { limit };
  if (params.get('timestamp')) q.timestamp = params.get('timestamp');
  else q.offset = params.get('offset') ?? '-1';
  const page = await get(`/topics/${enc(topicName)}/partitions/${partition}/records`, q);

  const go = changes => {
    const p = new URLSearchParams(params);
    for (const [k, v] of Object.entries(changes)) { if (v === null) p.delete(k); else p.set(k, v); }
    location.hash = `#/topics/${enc(topicName)}/records/${partition}?${p}`;
  };
  const partSel = h('select', { 'aria-label': 'partition', 'data-testid': 'partition-select' },
    Array.from({ length: t.partitions }, (_, i) => h('option', { value: String(i), selected: i === partition }, 'partition ' + i)));
  partSel.addEventListener('change', () => { location.hash = `#/topics/${enc(topicName)}/records/${partSel.value}?decode=${mode}`; });
  const offsetIn = h('input', { type: 'number', min: -1, placeholder: 'offset', value: params.get('offset') || '', 'aria-label': 'offset', 'data-testid': 'offset-input' });
  const timeIn = h('input', { type: 'datetime-local', step: 1, 'aria-label': 'time', 'data-testid': 'time-input' });
  const modeSel = h('select', { 'aria-label': 'decode as', 'data-testid': 'decode-select' },
    ['auto', 'json', 'text', 'hex'].map(m => h('option', { value: m, selected: m === mode }, 'decode: ' + m)));
  modeSel.addEventListener('change', () => go({ decode: modeSel.value }));
  const jumpOffset = h('form', { class: 'inline' }, offsetIn, h('button', { type: 'submit', 'data-testid': 'jump-offset' }, 'Jump to offset'));
  jumpOffset.addEventListener('submit', ev => { ev.preventDefault(); go({ offset: offsetIn.value || '0', timestamp: null }); });
  const jumpTime = h('form', { class: 'inline' }, timeIn, h('button', { type: 'submit', 'data-testid': 'jump-time' }, 'Jump to time (UTC)'));
  jumpTime.addEventListener('submit', ev => {
    ev.preventDefault();
    if (!timeIn.value) return;
    go({ timestamp: String(Date.parse(timeIn.value + 'Z')), offset: null });
  });

  const rows = page.records.map(r => {
    const k = decode(fromBase64(r.key), mode);
    const v = decode(fromBase64(r.value), mode);
    return h('tr', { 'data-offset': r.offset },
      h('td', { class: 'n' }, String(r.offset)),
      h('td', { title: r.timestamp_type }, time(r.timestamp)),
      h('td', { class: 'key ' + k.kind }, k.text),
      h('td', {}, h('pre', { class: 'value ' + v.kind }, v.text)),
      h('td', { class: 'headers' }, r.headers.map(hd => {
        const hv = decode(fromBase64(hd.value), mode === 'auto' ? 'text' : mode);
        return h('div', {}, h('code', {}, hd.key), ' = ', hv.text);
      })));
  });
  const nav = h('p', { class: 'pager' },
    `Offsets ${num(page.start_offset)}–${num(page.next_offset - 1)} of [${num(page.log_start_offset)}, ${num(page.high_watermark)}) · ${page.records.length} records `,
    page.start_offset > page.log_start_offset
      ? h('button', { onclick: () => go({ offset: String(Math.max(page.log_start_offset, page.start_offset - Number(limit))), timestamp: null }), 'data-testid': 'prev' }, '← Older') : null,
    ' ',
    page.next_offset < page.high_watermark
      ? h('button', { onclick: () => go({ offset: String(page.next_offset), timestamp: null }), 'data-testid': 'next' }, 'Newer →') : null);

  return h('section', { 'data-testid': 'records' },
    h('p', { class: 'crumbs' }, h('a', { href: '#/topics' }, 'Topics'), ' / ', h('a', { href: '#/topics/' + enc(topicName) }, topicName), ' / records'),
    h('h1', {}, `${topicName} · partition ${partition}`),
    h('div', { class: 'toolbar' }, partSel, jumpOffset, jumpTime, modeSel),
    nav,
    h('table', { class: 'records', 'data-testid': 'record-table' },
      h('thead', {}, h('tr', {}, ['Offset', 'Timestamp', 'Key', 'Value', 'Headers'].map(x => h('th', {}, x)))),
      h('tbody', {}, rows.length ? rows : h('tr', {}, h('td', { colspan: 5, class: 'empty' }, 'No records in this range.')))));
}
