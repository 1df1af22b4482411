import { get, enc } from './api.js';
import { h, table, card, badge } from './dom.js';
import { num } from './format.js';
import { lagChart } from './chart.js';

export async function group(id) {
  const g = await get('/groups/' + enc(id));
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
    table([
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
