// The console reads only the admin API (/api/v1) and writes only through
// the produce endpoint. Credentials, when the broker wants them, live in
// sessionStorage for this tab.

export class AuthError extends Error {}

export class APIError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

const KEY = 'gregor.auth';

export function setCredentials(user, pass) {
  sessionStorage.setItem(KEY, 'Basic ' + btoa(unescape(encodeURIComponent(user + ':' + pass))));
}

export function clearCredentials() { sessionStorage.removeItem(KEY); }

function headers(extra) {
  const h = { 'X-Gregor-Console': '1', ...extra };
  const auth = sessionStorage.getItem(KEY);
  if (auth) h.Authorization = auth;
  return h;
}

async function answer(resp) {
  const body = await resp.json().catch(() => ({}));
  if (resp.status === 401) throw new AuthError(body.error || 'authentication required');
  if (!resp.ok) throw new APIError(resp.status, body.error || body.message || ('HTTP ' + resp.status));
  return body;
}

export async function get(path, params) {
  const q = params ? '?' + new URLSearchParams(Object.entries(params).filter(([, v]) => v !== '' && v !== undefined && v !== null)) : '';
  return answer(await fetch('/api/v1' + path + q, { headers: headers() }));
}

// produce writes one record through the REST-proxy-compatible endpoint.
export async function produce(topic, record) {
  const resp = await fetch('/topics/' + encodeURIComponent(topic), {
    method: 'POST',
    headers: headers({ 'Content-Type': 'application/vnd.kafka.binary.v2+json' }),
    body: JSON.stringify({ records: [record] }),
  });
  return answer(resp);
}

export const enc = encodeURIComponent;
