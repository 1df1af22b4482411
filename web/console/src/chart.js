import { h } from './dom.js';

const NS = 'http://www.w3.org/2000/svg';

function s(tag, attrs, ...children) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const c of children) el.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
  return el;
}

// lagChart draws samples [{time, lag}] as a line with axis labels.
export function lagChart(samples) {
  if (!samples || samples.length === 0) {
    return h('p', { class: 'muted', 'data-testid': 'lag-chart-empty' },
      'No lag samples yet: the broker samples every group\'s lag every 10 seconds.');
  }
  const W = 720, H = 200, L = 56, R = 12, T = 12, B = 28;
  const t0 = samples[0].time, t1 = Math.max(samples[samples.length - 1].time, t0 + 1);
  const maxLag = Math.max(1, ...samples.map(p => p.lag));
  const x = t => L + (W - L - R) * (t - t0) / (t1 - t0);
  const y = v => T + (H - T - B) * (1 - v / maxLag);
  const pts = samples.map(p => `${x(p.time).toFixed(1)},${y(p.lag).toFixed(1)}`).join(' ');
  const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img', 'aria-label': 'lag over time', 'data-testid': 'lag-chart' },
    s('line', { x1: L, y1: H - B, x2: W - R, y2: H - B, class: 'axis' }),
    s('line', { x1: L, y1: T, x2: L, y2: H - B, class: 'axis' }),
    s('text', { x: L - 6, y: T + 4, 'text-anchor': 'end', class: 'tick' }, maxLag.toLocaleString('en-US')),
    s('text', { x: L - 6, y: H - B, 'text-anchor': 'end', class: 'tick' }, '0'),
    s('text', { x: L, y: H - 8, class: 'tick' }, new Date(t0).toLocaleTimeString()),
    s('text', { x: W - R, y: H - 8, 'text-anchor': 'end', class: 'tick' }, new Date(t1).toLocaleTimeString()),
    s('polyline', { points: pts, class: 'line' }),
  );
  for (const p of samples) svg.appendChild(s('circle', { cx: x(p.time), cy: y(p.lag), r: 2.5, class: 'dot' }));
  return svg;
}
