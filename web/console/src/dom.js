// h builds an element: h('a', {href: '#/'}, 'text', child). Strings become
// text nodes, so record contents can never inject markup.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

// table renders rows with columns [{title, cell: row => node|string, class}].
export function table(columns, rows, attrs = {}) {
  return h('table', attrs,
    h('thead', {}, h('tr', {}, columns.map(c => h('th', { class: c.class }, c.title)))),
    h('tbody', {}, rows.length === 0
      ? h('tr', {}, h('td', { colspan: columns.length, class: 'empty' }, attrs['data-empty'] || 'Nothing here yet.'))
      : rows.map(r => h('tr', {}, columns.map(c => h('td', { class: c.class }, c.cell(r)))))));
}

export function card(label, value, cls) {
  return h('div', { class: 'card ' + (cls || '') }, h('div', { class: 'card-value' }, value), h('div', { class: 'card-label' }, label));
}

export function badge(text, kind) {
  return h('span', { class: 'badge ' + (kind || '') }, text);
}
