// The console's REST client (docs/console.md): the tab's API key
// (sessionStorage) sent as `Authorization: Bearer` with every request to /v1.
export const KEY = 'msp.console.key';

export function key() { return sessionStorage.getItem(KEY) || ''; }

export function authHeaders(extra = {}) {
  const h = { ...extra };
  if (key()) h.Authorization = `Bearer ${key()}`;
  return h;
}

export class ApiError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

// A GET that settles either way: {ok: true, v} or {ok: false, e}, so that
// one list a key may not read leaves a note, not an empty view.
export function getSettled(path) {
  return api('GET', path).then((v) => ({ ok: true, v }), (e) => ({ ok: false, e }));
}

export async function api(method, path, body, signal) {
  const init = { method, headers: authHeaders(body ? { 'Content-Type': 'application/json' } : {}), signal };
  if (body) init.body = JSON.stringify(body);
  const res = await fetch(path, init);
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = null; }
  if (!res.ok) throw new ApiError(res.status, data && data.error ? data.error.message : `HTTP ${res.status}`);
  return data;
}
