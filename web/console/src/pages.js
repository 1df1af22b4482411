import { get, enc } from './api.js';
import { h, table, card, badge } from './dom.js';
import { bytes, num } from './format.js';

export function health(p) {
  if (p.offline) return badge('offline', 'bad');
  if (p.under_replicated) return badge('under-replicated', 'warn');
  return badge('healthy', 'ok');
}

export async function overview() {
  const [c, topics, groups] = await Promise.all([get('/cluster'), get('/topics'), get('/groups')]);
  const bad = [];
  for (const t of topics) if (t.under_replicated_partitions || t.offline_partitions) bad.push(t);
  return h('section', { 'data-testid': 'overview' },
    h('h1', {}, 'Cluster ', h('code', {}, c.cluster_id)),
    h('div', { class: 'cards' },
      card('brokers', num(c.brokers.length)),
      card('topics', num(c.topics), '', ),
      card('partitions', num(c.partitions)),
      card('under-replicated', num(c.under_replicated_partitions), c.under_replicated_partitions ? 'warn' : 'ok'),
      card('offline', num(c.offline_partitions), c.offline_partitions ? 'bad' : 'ok'),
      card('groups', num(c.groups)),
      card('data on this broker', bytes(c.size_bytes)),
      card('controller', 'node ' + c.controller_id)),
    h('h2', {}, 'Brokers'),
    brokersTable(c),
    h('h2', {}, 'Partition health'),
    bad.length === 0
      ? h('p', { class: 'ok-text', 'data-testid': 'health-ok' }, `All ${num(c.partitions)} partitions have a leader and a full ISR.`)
      : table([
        { title: 'Topic', cell: t => h('a', { href: '#/topics/' + enc(t.name) }, t.name) },
        { title: 'Under-replicated', cell: t => num(t.under_replicated_partitions), class: 'n' },
        { title: 'Offline', cell: t => num(t.offline_partitions), class: 'n' },
      ], bad),
    h('h2', {}, 'Busiest topics'),
    topicsTable([...topics].sort((a, b) => b.size_bytes - a.size_bytes).slice(0, 5)),
    h('h2', {}, 'Groups'),
    groupsTable(groups.slice(0, 10)),
    h('p', { class: 'muted' }, `Broker ${c.node_id} · ${c.version} · metadata offset ${c.metadata_offset} · authorizer ${c.authorizer}`));
}

function brokersTable(c) {
  return table([
    { title: 'Node', cell: b => [String(b.node_id), b.controller ? ' ' : '', b.controller ? badge('controller', 'info') : ''] },
    { title: 'Host', cell: b => `${b.host}:${b.port}` },
    { title: 'Rack', cell: b => b.rack || '–' },
    { title: 'Listeners', cell: b => (b.endpoints || []).map(e => `${e.listener} ${e.host}:${e.port}`).join(', ') || '–' },
    { title: 'Leaders', cell: b => num(b.leaders), class: 'n' },
    { title: 'Replicas', cell: b => num(b.replicas), class: 'n' },
  ], c.brokers, { 'data-testid': 'brokers' });
}

export async function brokers() {
  const c = await get('/cluster');
  return h('section', {}, h('h1', {}, 'Brokers'), brokersTable(c),
    h('p', { class: 'muted' }, `Active controller: node ${c.controller_id}. Under-min-ISR partitions: ${c.under_min_isr_partitions}.`));
}

export function topicsTable(topics) {
  return table([
    { title: 'Topic', cell: t => h('a', { href: '#/topics/' + enc(t.name), 'data-topic': t.name }, t.name, t.internal ? ' ' : '', t.internal ? badge('internal') : '') },
    { title: 'Partitions', cell: t => num(t.partitions), class: 'n' },
    { title: 'RF', cell: t => num(t.replication_factor), class: 'n' },
    { title: 'Records', cell: t => num(t.records), class: 'n' },
    { title: 'Size', cell: t => bytes(t.size_bytes), class: 'n' },
    { title: 'Health', cell: t => t.offline_partitions ? badge(t.offline_partitions + ' offline', 'bad')
      : t.under_replicated_partitions ? badge(t.under_replicated_partitions + ' under-replicated', 'warn') : badge('healthy', 'ok') },
  ], topics, { 'data-testid': 'topics', 'data-empty': 'No topics yet.' });
}

export async function topics() {
  const ts = await get('/topics');
  const filter = h('input', { type: 'search', placeholder: 'Filter topics', 'aria-label': 'filter topics' });
  const holder = h('div', {}, topicsTable(ts));
  filter.addEventListener('input', () => {
    const f = filter.value.toLowerCase();
    holder.replaceChildren(topicsTable(ts.filter(t => t.name.toLowerCase().includes(f))));
  });
  return h('section', {}, h('h1', {}, 'Topics'), filter, holder);
}

export function groupsTable(groups) {
  return table([
    { title: 'Group', cell: g => h('a', { href: '#/groups/' + enc(g.group), 'data-group': g.group }, g.group) },
    { title: 'Type', cell: g => g.type },
    { title: 'State', cell: g => badge(g.state, g.state === 'Stable' ? 'ok' : g.state === 'Dead' ? 'bad' : 'info') },
    { title: 'Members', cell: g => num(g.members), class: 'n' },
    { title: 'Lag', cell: g => num(g.lag), class: 'n' },
  ], groups, { 'data-testid': 'groups', 'data-empty': 'No groups yet.' });
}

export async function groups() {
  return h('section', {}, h('h1', {}, 'Consumer groups'), groupsTable(await get('/groups')));
}

export async function extensions() {
  const es = await get('/extensions');
  return h('section', {}, h('h1', {}, 'Extensions'),
    table([
      { title: 'Name', cell: e => e.name },
      { title: 'Kind', cell: e => e.kind },
      { title: 'Runtime', cell: e => e.runtime },
      { title: 'Topics', cell: e => e.topics.join(', ') || '–' },
      { title: 'Calls', cell: e => num(e.calls), class: 'n' },
      { title: 'Errors', cell: e => e.errors ? badge(num(e.errors), 'bad') : '0', class: 'n' },
      { title: 'Fallbacks', cell: e => num(e.fallbacks), class: 'n' },
      { title: 'Mean', cell: e => e.mean_latency_ms.toFixed(3) + ' ms', class: 'n' },
      { title: 'Max', cell: e => e.max_latency_ms.toFixed(3) + ' ms', class: 'n' },
      { title: 'On failure', cell: e => e.fallback },
    ], es, { 'data-testid': 'extensions', 'data-empty': 'No extensions are declared in broker.toml.' }));
}

export async function mirrors() {
  const m = await get('/mirrors');
  return h('section', {}, h('h1', {}, 'Mirror links'),
    m.enabled ? null : h('p', { class: 'muted' }, 'This broker runs no mirror.'),
    table([
      { title: 'Link', cell: l => l.name },
      { title: 'Source', cell: l => l.source },
      { title: 'State', cell: l => badge(l.state, l.state === 'running' ? 'ok' : l.state === 'degraded' ? 'bad' : 'warn') },
      { title: 'Topics', cell: l => l.topics.join(', ') },
      { title: 'Lag (records)', cell: l => num(l.lag_records), class: 'n' },
      { title: 'Record age', cell: l => (l.record_age_ms / 1000).toFixed(1) + ' s', class: 'n' },
      { title: 'Failing', cell: l => l.failing_partitions ? badge(num(l.failing_partitions), 'bad') : '0', class: 'n' },
      { title: 'Last error', cell: l => l.last_error || '–' },
    ], m.links, { 'data-testid': 'mirrors', 'data-empty': 'No mirror links.' }),
    mirrorProblems(m.links));
}

// mirrorProblems lists the partitions that are failing or reported a loss,
// with when they last wrote and when they are retried.
function mirrorProblems(links) {
  const rows = [];
  for (const l of links || []) {
    for (const p of l.partitions || []) {
      if (p.state === 'failing' || p.error) rows.push({ link: l.name, ...p });
    }
  }
  if (!rows.length) return null;
  return h('section', {}, h('h2', {}, 'Partitions needing attention'),
    table([
      { title: 'Link', cell: p => p.link },
      { title: 'Partition', cell: p => p.topic + '[' + p.partition + ']' },
      { title: 'State', cell: p => badge(p.state, p.state === 'failing' ? 'bad' : 'warn') },
      { title: 'Failed at', cell: p => p.failed_at || '–' },
      { title: 'Retry at', cell: p => p.retry_at || (p.state === 'failing' ? 'not retried' : '–') },
      { title: 'Last write', cell: p => p.last_write || '–' },
      { title: 'Too large', cell: p => num(p.records_too_large || 0), class: 'n' },
      { title: 'Error', cell: p => p.error || '–' },
    ], rows, { 'data-testid': 'mirror-problems' }));
}
