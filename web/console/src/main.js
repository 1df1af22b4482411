import './style.css';
import { get, AuthError, setCredentials, clearCredentials } from './api.js';
import { h } from './dom.js';
import * as pages from './pages.js';
import { topic } from './topic.js';
import { records } from './records.js';
import { group } from './group.js';

const app = document.getElementById('app');

// routes map a hash path to a page; each page returns a promise of a node.
const routes = [
  [/^\/?$/, 'overview', () => pages.overview()],
  [/^\/topics$/, 'topics', () => pages.topics()],
  [/^\/topics\/([^/]+)$/, 'topics', m => topic(decodeURIComponent(m[1]))],
  [/^\/topics\/([^/]+)\/records\/(\d+)$/, 'topics', (m, q) => records(decodeURIComponent(m[1]), Number(m[2]), q)],
  [/^\/groups$/, 'groups', () => pages.groups()],
  [/^\/groups\/([^/]+)$/, 'groups', m => group(decodeURIComponent(m[1]))],
  [/^\/brokers$/, 'brokers', () => pages.brokers()],
  [/^\/extensions$/, 'extensions', () => pages.extensions()],
  [/^\/mirrors$/, 'mirrors', () => pages.mirrors()],
];

let seq = 0;

async function render() {
  const my = ++seq;
  const [path, query] = (location.hash.replace(/^#/, '') || '/').split('?');
  const params = new URLSearchParams(query || '');
  let found = null;
  for (const [re, nav, page] of routes) {
    const m = path.match(re);
    if (m) { found = { nav, load: () => page(m, params) }; break; }
  }
  for (const a of document.querySelectorAll('[data-nav]')) a.classList.toggle('active', found && a.dataset.nav === found.nav);
  if (!found) {
    app.replaceChildren(h('section', {}, h('h1', {}, 'Not found'), h('p', {}, h('a', { href: '#/' }, 'Back to the overview'))));
    return;
  }
  app.setAttribute('aria-busy', 'true');
  try {
    const node = await found.load();
    if (my !== seq) return; // a newer navigation won
    app.replaceChildren(node);
    whoami();
  } catch (e) {
    if (my !== seq) return;
    if (e instanceof AuthError) app.replaceChildren(login(e.message));
    else app.replaceChildren(h('section', { class: 'error', 'data-testid': 'error' }, h('h1', {}, 'Something went wrong'), h('p', {}, e.message)));
  } finally {
    if (my === seq) app.removeAttribute('aria-busy');
  }
}

function login(message) {
  const user = h('input', { name: 'user', autocomplete: 'username', 'aria-label': 'user', required: true });
  const pass = h('input', { name: 'password', type: 'password', autocomplete: 'current-password', 'aria-label': 'password', required: true });
  const form = h('form', { class: 'login', 'data-testid': 'login' },
    h('h1', {}, 'Sign in'),
    h('p', { class: 'muted' }, 'This broker authenticates its admin API like its Kafka listeners: use a SASL user\'s name and password.'),
    h('p', { class: 'err' }, message),
    h('label', {}, 'User ', user), h('label', {}, 'Password ', pass),
    h('button', { type: 'submit' }, 'Sign in'));
  form.addEventListener('submit', ev => {
    ev.preventDefault();
    setCredentials(user.value, pass.value);
    render();
  });
  clearCredentials();
  return form;
}

let shown = false;
async function whoami() {
  if (shown) return;
  try {
    const w = await get('/whoami');
    document.getElementById('whoami').textContent = w.principal;
    shown = true;
  } catch { /* shown on the next page */ }
}

window.addEventListener('hashchange', render);
render();
// The overview and group pages refresh themselves while open.
setInterval(() => {
  const p = location.hash.replace(/^#/, '') || '/';
  if ((p === '/' || p.startsWith('/groups/')) && !document.querySelector('form :focus')) render();
}, 15000);
