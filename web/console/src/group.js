import { get, enc } from './api.js';
import { h, table, card, badge } from './dom.js';
import { num } from './format.js';
import { lagChart } from './chart.js';

export async function group(id) {
  const g = await get('/groups/' + enc(id));
  const share = g.type === 'share';
  const assigned = m => Object.keys(m.assignment || {}).sort().map(t => `${t}: ${m.assignment[t].join(', ')}`).join('; ') || '–';
  return h('section', { 'data-testid': 'group' },
    h('p', { class: 'crumbs' }, h('a', { href: '#/groups' }, 'Groups'), ' / ', id),
    h('h1', {}, id, ' ', badge(g.state, g.state === 'Stable' ? 'ok' : 'info')),
    h('div', { class: 'cards' },
      card('type', g.type),
      card('protocol', g.protocol || '–'),
      card('members', num(g.members)),
      card('total lag', num(g.lag), g.lag > 0 ? 'warn' : 'ok', )),
    h('h2', {}, 'Lag over time'),
    lagChart(g.lag_history),
    h('h2', {}, 'Lag per partition'),
    share ? shareOffsets(g.offsets) : table([
      { title: 'Topic', cell: o => h('a', { href: '#/topics/' + enc(o.topic) }, o.topic) },
      { title: 'Partition', cell: o => String(o.partition), class: 'n' },
      { title: 'Committed', cell: o => num(o.committed_offset), class: 'n' },
      { title: 'High watermark', cell: o => num(o.high_watermark), class: 'n' },
      { title: 'Lag', cell: o => num(o.lag), class: 'n lag' },
      { title: 'Member', cell: o => o.member_id || '–' },
    ], g.offsets, { 'data-testid': 'group-offsets', 'data-empty': 'The group has committed no offsets.' }),
    h('h2', {}, 'Members'),
    table([
      { title: 'Member', cell: m => m.member_id },
      { title: 'Client', cell: m => m.client_id },
      { title: 'Host', cell: m => m.client_host },
      { title: 'Instance', cell: m => m.instance_id || '–' },
      { title: 'Assignment', cell: assigned },
    ], g.member_list, { 'data-testid': 'members', 'data-empty': 'No members: the group is empty.' }));
}

// A share group's partitions: the share-partition start offset, the
// records between it and the end offset (in flight) and those under an
// acquisition lock; -1 is a share-partition another broker serves.
function shareOffsets(offsets) {
  const n = v => (v === undefined || v < 0 ? '–' : num(v));
  return table([
    { title: 'Topic', cell: o => h('a', { href: '#/topics/' + enc(o.topic) }, o.topic) },
    { title: 'Partition', cell: o => String(o.partition), class: 'n' },
    { title: 'Start offset', cell: o => n(o.start_offset), class: 'n' },
    { title: 'In flight', cell: o => n(o.in_flight), class: 'n' },
    { title: 'Acquired', cell: o => n(o.acquired), class: 'n' },
    { title: 'High watermark', cell: o => n(o.high_watermark), class: 'n' },
    { title: 'Lag', cell: o => n(o.lag), class: 'n lag' },
  ], offsets, { 'data-testid': 'group-offsets', 'data-empty': 'No share-partitions yet.' });
}
