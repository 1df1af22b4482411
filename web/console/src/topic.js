import { get, produce, enc } from './api.js';
import { h, table, card, badge } from './dom.js';
import { bytes, num, toBase64 } from './format.js';
import { health } from './pages.js';

export async function topic(name) {
  const t = await get('/topics/' + enc(name));
  const overrides = new Set(t.overrides);
  const configs = Object.keys(t.configs).sort().map(k => ({ k, v: t.configs[k], o: overrides.has(k) }));
  return h('section', { 'data-testid': 'topic' },
    h('p', { class: 'crumbs' }, h('a', { href: '#/topics' }, 'Topics'), ' / ', name),
    h('h1', {}, name, ' ', t.internal ? badge('internal') : ''),
    h('div', { class: 'cards' },
      card('partitions', num(t.partitions)),
      card('replication factor', num(t.replication_factor)),
      card('records', num(t.records)),
      card('size', bytes(t.size_bytes)),
      card('under-replicated', num(t.under_replicated_partitions), t.under_replicated_partitions ? 'warn' : 'ok'),
      card('offline', num(t.offline_partitions), t.offline_partitions ? 'bad' : 'ok')),
    h('h2', {}, 'Partitions'),
    table([
      { title: 'Partition', cell: p => String(p.partition), class: 'n' },
      { title: 'Leader', cell: p => p.leader < 0 ? 'none' : String(p.leader), class: 'n' },
      { title: 'Epoch', cell: p => String(p.leader_epoch), class: 'n' },
      { title: 'Replicas', cell: p => p.replicas.join(', ') },
      { title: 'ISR', cell: p => p.isr.join(', ') },
      { title: 'Log start', cell: p => num(p.log_start_offset), class: 'n' },
      { title: 'High watermark', cell: p => num(p.high_watermark), class: 'n' },
      { title: 'Log end', cell: p => num(p.log_end_offset), class: 'n' },
      { title: 'Size', cell: p => bytes(p.size_bytes), class: 'n' },
      { title: 'Health', cell: health },
      { title: '', cell: p => h('a', { href: `#/topics/${enc(name)}/records/${p.partition}`, 'data-records': p.partition }, 'Records') },
    ], t.partition_list, { 'data-testid': 'partitions' }),
    produceForm(name, t.partitions),
    h('h2', {}, 'Configuration'),
    configs.length === 0 ? h('p', { class: 'muted' }, 'Not allowed to describe this topic\'s configuration.') :
      table([
        { title: 'Name', cell: c => c.o ? h('strong', {}, c.k) : c.k },
        { title: 'Value', cell: c => h('code', {}, c.v) },
        { title: 'Source', cell: c => c.o ? badge('topic', 'info') : 'default' },
      ], configs, { 'data-testid': 'configs' }));
}

function produceForm(topicName, partitions) {
  const key = h('input', { name: 'key', placeholder: 'key (empty: null)', 'aria-label': 'key' });
  const value = h('textarea', { name: 'value', rows: 3, placeholder: '{"hello": "world"}', 'aria-label': 'value' });
  const part = h('select', { name: 'partition', 'aria-label': 'partition' },
    h('option', { value: '' }, 'partitioner decides'),
    Array.from({ length: partitions }, (_, i) => h('option', { value: String(i) }, 'partition ' + i)));
  const out = h('p', { class: 'result', 'data-testid': 'produce-result' });
  const te = new TextEncoder();
  const form = h('form', { class: 'produce', 'data-testid': 'produce' },
    h('h2', {}, 'Produce a test record'),
    h('div', { class: 'row' }, key, part), value,
    h('button', { type: 'submit' }, 'Produce'), out);
  form.addEventListener('submit', async ev => {
    ev.preventDefault();
    const rec = { key: key.value === '' ? null : toBase64(te.encode(key.value)), value: toBase64(te.encode(value.value)) };
    if (part.value !== '') rec.partition = Number(part.value);
    out.className = 'result';
    out.textContent = 'Producing…';
    try {
      const r = await produce(topicName, rec);
      const o = r.offsets[0];
      if (o.error) throw new Error(o.error);
      out.className = 'result ok-text';
      out.replaceChildren('Written to partition ' + o.partition + ' at offset ' + o.offset + ' — ',
        h('a', { href: `#/topics/${enc(topicName)}/records/${o.partition}?offset=${o.offset}` }, 'view it'));
    } catch (e) {
      out.className = 'result err';
      out.textContent = 'Produce failed: ' + e.message;
    }
  });
  return form;
}
