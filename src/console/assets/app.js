// msp console (docs/console.md): sign-in, Search, Record, Sessions, Missions,
// Charts, Coding and Live views over the REST API (/v1), nothing else. Every piece of data is put on the page
// as text (textContent, text nodes): never as HTML.
const KEY = 'msp.console.key';
const main = () => document.getElementById('view');
let who = { signed_in: false, tenant: '', clearance: null, keys: true };
let leaveView = () => {};

// --- Small helpers ---

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'text') node.textContent = String(value);
    else if (name === 'className') node.className = value;
    else if (name === 'dataset') Object.assign(node.dataset, value);
    else if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function key() { return sessionStorage.getItem(KEY) || ''; }

function authHeaders(extra = {}) {
  const h = { ...extra };
  if (key()) h.Authorization = `Bearer ${key()}`;
  return h;
}

class ApiError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

// A GET that settles either way: {ok: true, v} or {ok: false, e}, so that
// one list a key may not read leaves a note, not an empty view.
function getSettled(path) {
  return api('GET', path).then((v) => ({ ok: true, v }), (e) => ({ ok: false, e }));
}

async function api(method, path, body, signal) {
  const init = { method, headers: authHeaders(body ? { 'Content-Type': 'application/json' } : {}), signal };
  if (body) init.body = JSON.stringify(body);
  const res = await fetch(path, init);
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = null; }
  if (!res.ok) throw new ApiError(res.status, data && data.error ? data.error.message : `HTTP ${res.status}`);
  return data;
}

function fmtTime(iso) { return iso ? iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC') : '—'; }
function fmtNum(x, digits = 3) { return typeof x === 'number' ? x.toFixed(digits) : '—'; }
function recordLink(id, label) { return el('a', { href: `#/record/${encodeURIComponent(id)}`, text: label || id }); }
function nsText(ns) {
  if (!ns) return '';
  return ['user', 'agent', 'session', 'mission', 'operator'].filter((p) => ns[p]).map((p) => `${p}=${ns[p]}`).join(' ');
}

// The moment a view shows its data: a performance mark the browser test reads
// (first paint of each view, docs/console.md).
function ready(view) {
  document.body.dataset.ready = view;
  performance.mark(`msp-ready-${view}`);
}

function statusLine(text, error = false) { return el('p', { className: error ? 'status error' : 'status', text, role: error ? 'alert' : null }); }

// --- Sign-in ---

async function probe() {
  const res = await fetch('/ui/session.json', { headers: authHeaders(), cache: 'no-store' });
  return res.json();
}

// What the probe answered for this tab's key, kept beside the key: a
// reloaded tab shows its view at once and checks the key in parallel. It
// only decides what the page shows and asks for; the server checks the key
// on every request.
const WHO = 'msp.console.who';
function cachedWho() {
  try {
    const kept = JSON.parse(sessionStorage.getItem(WHO) || 'null');
    return kept && kept.key === key() && kept.answer && kept.answer.signed_in ? kept.answer : null;
  } catch {
    return null;
  }
}
function keepWho(answer) { sessionStorage.setItem(WHO, JSON.stringify({ key: key(), answer })); }
function forgetKey() {
  sessionStorage.removeItem(KEY);
  sessionStorage.removeItem(WHO);
}

async function start() {
  document.getElementById('sign-in-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const input = document.getElementById('key');
    sessionStorage.setItem(KEY, input.value.trim());
    input.value = '';
    const answer = await probe();
    if (!answer.signed_in) {
      forgetKey();
      document.getElementById('sign-in-error').textContent = 'That key is not valid for this server.';
      return;
    }
    document.getElementById('sign-in-error').textContent = '';
    signedIn(answer);
  });
  document.getElementById('sign-out').addEventListener('click', () => {
    forgetKey();
    location.hash = '#/search';
    location.reload();
  });
  // The Charts view's library is fetched beside the sign-in probe, not
  // after it.
  if ((location.hash || '').startsWith('#/charts')) loadChartLib().catch(() => {});
  const probing = probe();
  const cached = cachedWho();
  if (cached) signedIn(cached);
  const answer = await probing;
  if (!answer.signed_in) {
    forgetKey();
    showSignIn();
  } else if (!cached || JSON.stringify(answer) !== JSON.stringify(cached)) {
    signedIn(answer);  // the key's tenant or clearance changed: shown again
  }
}

function showSignIn() {
  // A view started on a kept answer shows nothing more.
  leaveView();
  leaveView = () => {};
  generation += 1;
  window.removeEventListener('hashchange', route);
  document.getElementById('sign-in').hidden = false;
  document.getElementById('nav').hidden = true;
  main().replaceChildren();
  ready('sign-in');
}

function signedIn(answer) {
  who = answer;
  keepWho(answer);
  if (answer.enums) Object.assign(ENUMS, answer.enums);
  document.getElementById('sign-in').hidden = true;
  document.getElementById('nav').hidden = false;
  document.getElementById('sign-out').hidden = !answer.keys;
  const clearance = answer.clearance === null ? 'no clearance limit' : `clearance ${answer.clearance}`;
  document.getElementById('who').textContent = answer.keys ? `tenant ${answer.tenant}, ${clearance}` : `local mode: tenant ${answer.tenant}`;
  window.removeEventListener('hashchange', route);  // once, when shown again
  window.addEventListener('hashchange', route);
  route();
}

// --- Routing: #/search?q=..., #/record/ID, #/sessions[/ID], #/missions?mission=M,
// #/decision/ID?mission=M, #/charts?mission=M, #/coding?repository=R, #/live ---

function route() {
  leaveView();
  leaveView = () => {};
  generation += 1;
  const hash = location.hash || '#/search';
  const [path, query] = hash.slice(1).split('?');
  const parts = path.split('/').filter(Boolean);
  const nav = parts[0] === 'decision' ? 'missions' : parts[0];
  for (const a of document.querySelectorAll('#nav a')) a.classList.toggle('active', a.dataset.view === nav);
  const params = new URLSearchParams(query || '');
  if (parts[0] === 'record' && parts[1]) return recordView(decodeURIComponent(parts[1]));
  if (parts[0] === 'sessions') return parts[1] ? sessionView(decodeURIComponent(parts[1])) : sessionsView();
  if (parts[0] === 'missions') return missionsView(params);
  if (parts[0] === 'decision' && parts[1]) return decisionView(decodeURIComponent(parts[1]), params);
  if (parts[0] === 'charts') return chartsView(params);
  if (parts[0] === 'coding') return codingView(params);
  if (parts[0] === 'live') return liveView();
  return searchView(params);
}

// --- Search ---

// The search form's lists, from /ui/session.json (the engine's names), read
// at sign-in: the form draws complete, with no second request.
const ENUMS = { kinds: [], layers: [], criticalities: ['low', 'normal', 'high', 'critical'] };

function field(label, input, className) { return el('label', { className }, label, input); }

function multiSelect(name, values, chosen) {
  const select = el('select', { name, multiple: true, size: 3 });
  for (const v of values) select.append(el('option', { value: v, text: v, selected: chosen.includes(v) }));
  return select;
}

function isoOf(local) { return local ? new Date(local).toISOString() : ''; }
function localOf(iso) { return iso ? iso.slice(0, 16) : ''; }
function list(text) { return text.split(',').map((s) => s.trim()).filter(Boolean); }

function searchView(params) {
  const form = el('form', { className: 'search', id: 'search-form' });
  const get = (name, fallback = '') => params.get(name) ?? fallback;
  const input = (name, type = 'text', extra = {}) => el('input', { name, type, value: get(name), ...extra });
  const many = (name) => (params.get(name) || '').split(',').filter(Boolean);
  form.append(
    el('div', { className: 'wide' },
      el('input', { name: 'q', type: 'search', value: get('q'), placeholder: 'What to look for, in words', 'aria-label': 'query', required: true }),
      el('button', { type: 'submit', text: 'Search' })),
    field('top_k', input('top_k', 'number', { min: 1, max: 1000, placeholder: '10' })),
    field('min_score', input('min_score', 'number', { min: 0, max: 1, step: 0.05, placeholder: '0' })),
    field('top_sessions', input('top_sessions', 'number', { min: 0, max: 1000, placeholder: '3' })),
    field('context_steps', input('context_steps', 'number', { min: 0, max: 20, placeholder: '0' })),
    field('user', input('user')), field('agent', input('agent')), field('session', input('session')),
    field('mission', input('mission')), field('operator', input('operator')),
    field('kinds', multiSelect('kinds', ENUMS.kinds, many('kinds'))),
    field('layers', multiSelect('layers', ENUMS.layers, many('layers'))),
    field('criticalities', multiSelect('criticalities', ENUMS.criticalities, many('criticalities'))),
    field('tags (comma-separated)', input('tags')), field('sources (comma-separated)', input('sources')),
    field('created from', input('created_from', 'datetime-local', { value: localOf(get('created_from')) })),
    field('created to', input('created_to', 'datetime-local', { value: localOf(get('created_to')) })),
    field('as of', input('as_of', 'datetime-local', { value: localOf(get('as_of')) })),
    field('include superseded', el('input', { name: 'include_superseded', type: 'checkbox', checked: get('include_superseded') === '1' }), 'check'),
    field('count as accessed', el('input', { name: 'record_access', type: 'checkbox', checked: get('record_access') === '1' }), 'check'),
  );
  const results = el('div', { id: 'results' });
  main().replaceChildren(el('h1', { text: 'Search' }), form, results);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const f = form.elements;
    const out = new URLSearchParams();
    for (const name of ['q', 'top_k', 'min_score', 'top_sessions', 'context_steps', 'user', 'agent', 'session', 'mission', 'operator', 'tags', 'sources']) {
      if (f[name].value.trim()) out.set(name, f[name].value.trim());
    }
    for (const name of ['created_from', 'created_to', 'as_of']) if (f[name].value) out.set(name, isoOf(f[name].value));
    for (const name of ['kinds', 'layers', 'criticalities']) {
      const chosen = [...f[name].selectedOptions].map((o) => o.value);
      if (chosen.length) out.set(name, chosen.join(','));
    }
    if (f.include_superseded.checked) out.set('include_superseded', '1');
    if (f.record_access.checked) out.set('record_access', '1');
    location.hash = `#/search?${out}`;
  });
  if (!params.get('q')) { ready('search'); return; }
  runSearch(params, results);
}

async function runSearch(params, results) {
  const body = { query: params.get('q'), explain: true, top_sessions: 3 };
  for (const name of ['top_k', 'top_sessions', 'context_steps']) if (params.get(name)) body[name] = Number(params.get(name));
  if (params.get('min_score')) body.min_score = Number(params.get('min_score'));
  const ns = {};
  for (const p of ['user', 'agent', 'session', 'mission', 'operator']) if (params.get(p)) ns[p] = params.get(p);
  if (Object.keys(ns).length) body.namespace = ns;
  const filters = {};
  for (const name of ['kinds', 'layers', 'criticalities', 'tags', 'sources']) if (params.get(name)) filters[name] = list(params.get(name));
  for (const name of ['created_from', 'created_to']) if (params.get(name)) filters[name] = params.get(name);
  if (params.get('include_superseded')) filters.include_superseded = true;
  if (Object.keys(filters).length) body.filters = filters;
  if (params.get('as_of')) body.as_of = params.get('as_of');
  body.record_access = params.get('record_access') === '1';
  results.replaceChildren(statusLine('Searching…'));
  const started = performance.now();
  let answer;
  try {
    answer = await api('POST', '/v1/search', body);
    performance.mark('msp-data-search');
  } catch (e) {
    results.replaceChildren(statusLine(e.message, true));
    ready('search');
    return;
  }
  const ms = performance.now() - started;
  results.replaceChildren(renderResults(answer, ms));
  ready('search');
}

function renderResults(answer, ms) {
  const hits = answer.hits || [];
  const max = Math.max(1e-9, ...hits.flatMap((h) => (h.explain || []).map((c) => Math.abs(c.contribution))));
  const hitList = el('div', { id: 'hits' });
  for (const hit of hits) hitList.append(renderHit(hit, max));
  const sessions = el('div', { id: 'sessions' }, el('h2', { text: 'Sessions' }));
  if (!(answer.sessions || []).length) sessions.append(statusLine('No session matches as a whole.'));
  for (const s of answer.sessions || []) {
    sessions.append(el('div', { className: 'card session-hit' },
      el('div', { className: 'meta' }, el('span', { text: s.namespace.session || '(no session)' }), el('span', { className: 'score', text: fmtNum(s.score) })),
      bar('session', s.score, 1),
      el('div', { className: 'meta' }, 'best step ', recordLink(s.best_id, s.best_id.slice(0, 8)))));
  }
  const chars = hits.reduce((n, h) => n + (h.memory.text || '').length, 0);
  return el('div', {},
    statusLine(`${hits.length} hit(s) in ${ms.toFixed(0)} ms; ${chars} characters of text in the hits`),
    el('div', { className: 'columns' }, el('div', {}, el('h2', { text: 'Hits' }), hits.length ? hitList : statusLine('Nothing matches.')), sessions));
}

function bar(signal, value, max) {
  const fill = el('span', { className: signal });
  fill.style.width = `${Math.max(0, Math.min(100, (100 * Math.abs(value)) / max))}%`;
  return el('div', { className: 'bar', title: `${signal}: ${value}` }, fill);
}

function renderHit(hit, max) {
  const m = hit.memory;
  const signals = el('div', { className: 'signals' });
  for (const c of hit.explain || []) {
    signals.append(el('span', { text: c.signal, className: 'signal-name' }), bar(c.signal, c.contribution, max),
      el('span', { className: 'num', title: `rank ${c.rank}, raw ${c.raw}`, text: fmtNum(c.contribution) }));
  }
  return el('article', { className: 'card hit', dataset: { id: m.id } },
    el('div', { className: 'meta' },
      el('span', { className: 'score', text: `score ${fmtNum(hit.score)}` }),
      el('span', { text: `${m.kind} · ${m.layer}` }),
      el('span', { text: m.source ? `source ${m.source}` : '' }),
      el('span', { text: fmtTime(m.created_at) }),
      el('span', { text: nsText(m.namespace) }),
      el('span', { text: hit.trust || '' }),
      recordLink(m.id, 'open record')),
    el('div', { className: 'text', text: m.text }),
    hit.passage ? el('div', { className: 'meta', text: `passage: bytes ${hit.passage.begin}–${hit.passage.end} of ${hit.passage.text_bytes}` }) : null,
    signals);
}

// --- Record ---

async function recordView(id) {
  main().replaceChildren(el('h1', { text: 'Record' }), statusLine('Loading…'));
  let m;
  let history;
  try {
    [m, history] = await Promise.all([
      api('GET', `/v1/memories/${encodeURIComponent(id)}`),
      api('GET', `/v1/memories/${encodeURIComponent(id)}/history`),
    ]);
  } catch (e) {
    main().replaceChildren(el('h1', { text: 'Record' }), statusLine(e.status === 404 ? `No record ${id} (or it is above this key's clearance).` : e.message, true));
    ready('record');
    return;
  }
  const fields = el('dl', { className: 'fields' });
  const row = (name, value) => fields.append(el('dt', { text: name }), el('dd', {}, value));
  row('id', m.id);
  row('kind · layer', `${m.kind} · ${m.layer}`);
  row('namespace', `tenant=${m.namespace.tenant} ${nsText(m.namespace)}`);
  row('state', m.state);
  row('source', m.source || '—');
  row('confidence', fmtNum(m.confidence, 2));
  row('criticality', m.criticality || '—');
  row('access level', String(m.access_level ?? 0));
  row('tags', (m.tags || []).map((t) => el('span', { className: 'tag', text: t })));
  row('created', fmtTime(m.created_at));
  row('updated', fmtTime(m.updated_at));
  if (m.valid_at || m.invalid_at) row('valid', `${fmtTime(m.valid_at)} → ${fmtTime(m.invalid_at)}`);
  const access = el('dl', { className: 'fields', id: 'access' });
  access.append(el('dt', { text: 'times accessed' }), el('dd', { text: String(m.access_count ?? 0) }),
    el('dt', { text: 'last accessed' }), el('dd', { text: fmtTime(m.last_accessed) }));
  const provenance = el('ul', { id: 'provenance' });
  for (const p of m.provenance || []) {
    const detail = p.detail && Object.keys(p.detail).length ? ` ${JSON.stringify(p.detail)}` : '';
    provenance.append(el('li', {}, el('strong', { text: p.type }), ' ', p.type === 'record' || p.type === 'episode' ? recordLink(p.ref) : p.ref, detail));
  }
  const timeline = el('ol', { className: 'timeline', id: 'history' });
  for (const v of history.versions || []) {
    const current = v.id === m.id;
    timeline.append(el('li', { className: `${current ? 'current' : ''} ${v.superseded_by ? 'superseded' : ''}`.trim(), dataset: { id: v.id } },
      el('div', { className: 'meta' }, el('span', { text: fmtTime(v.created_at) }), current ? el('span', { text: 'this record' }) : recordLink(v.id, v.id.slice(0, 8)),
        el('span', { text: v.state }), v.superseded_by ? el('span', { text: `superseded by ${v.superseded_by.slice(0, 8)}` }) : null),
      el('div', { className: 'text', text: v.text })));
  }
  const audit = el('div', { id: 'audit' });
  main().replaceChildren(
    el('h1', { text: 'Record' }),
    el('div', { className: 'card' }, el('div', { className: 'text', id: 'record-text', text: m.text })),
    el('div', { className: 'columns' },
      el('div', {},
        el('h2', { text: 'History and supersede chain (oldest first)' }), timeline,
        el('h2', { text: 'Provenance' }), (m.provenance || []).length ? provenance : statusLine('No provenance recorded.'),
        el('h2', { text: 'Audit events' }), audit),
      el('div', {}, el('h2', { text: 'Fields' }), el('div', { className: 'card' }, fields),
        el('h2', { text: 'Access' }), el('div', { className: 'card' }, access))));
  ready('record');
  if (who.clearance !== null) {
    audit.append(statusLine('The audit log is read with a key without a clearance limit.'));
    return;
  }
  try {
    const answer = await api('GET', `/v1/audit?record_id=${encodeURIComponent(m.id)}&limit=50`);
    const items = el('ul', {});
    for (const e of answer.events || []) {
      items.append(el('li', {}, el('span', { text: `${fmtTime(e.at)} ${e.action}` }), e.actor ? ` by ${e.actor}` : '', e.reason ? ` — ${e.reason}` : ''));
    }
    audit.append((answer.events || []).length ? items : statusLine('No audit events.'));
  } catch (e) {
    audit.append(statusLine(e.message, true));
  }
}

// A view still showing: route() moves `generation` on, so an answer that
// comes back after the user went elsewhere is dropped.
let generation = 0;
function viewToken() { generation += 1; return generation; }
function still(token) { return token === generation; }

function enc(s) { return encodeURIComponent(s); }
function critBadge(c) { return c ? el('span', { className: `crit crit-${c}`, text: c }) : null; }
function missionInput(mission, hash) {
  const form = el('form', { className: 'inline', id: 'mission-form' },
    el('label', {}, 'mission', el('input', { name: 'mission', value: mission, required: true, list: 'missions-known', placeholder: 'mission id' })),
    el('datalist', { id: 'missions-known' }),
    el('button', { type: 'submit', text: 'Open' }));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    location.hash = `${hash}?mission=${enc(form.elements.mission.value.trim())}`;
  });
  // The missions the key sees recent mission records of, offered as you
  // type: asked for when the field is first used, not with the view's data.
  const input = form.elements.mission;
  const offer = () => {
    input.removeEventListener('focus', offer);
    api('GET', '/v1/memories?kinds=decision,event,correction&newest_first=true&limit=200').then((answer) => {
      const names = [...new Set((answer.memories || []).map((m) => m.namespace.mission).filter(Boolean))];
      form.querySelector('datalist').replaceChildren(...names.map((n) => el('option', { value: n })));
    }).catch(() => {});
  };
  input.addEventListener('focus', offer);
  return form;
}

// --- Sessions: the recent sessions, then one as a conversation ---

async function sessionsView() {
  const token = viewToken();
  const title = el('h1', { text: 'Sessions' });
  main().replaceChildren(title, statusLine('Loading…'));
  let answer;
  try {
    answer = await api('GET', '/v1/memories?kinds=episode&newest_first=true&limit=1000');
  } catch (e) {
    if (!still(token)) return;
    main().replaceChildren(title, statusLine(e.message, true));
    ready('sessions');
    return;
  }
  if (!still(token)) return;
  // The newest 1,000 steps, grouped by session, the most recent session first.
  const sessions = new Map();
  for (const m of answer.memories || []) {
    const id = m.namespace.session;
    if (!id) continue;
    if (!sessions.has(id)) sessions.set(id, { id, steps: 0, last: m.created_at, first: m, ns: m.namespace });
    const s = sessions.get(id);
    s.steps += 1;
    s.first = m;
  }
  const rows = el('tbody', {});
  for (const s of sessions.values()) {
    rows.append(el('tr', { dataset: { session: s.id } },
      el('td', {}, el('a', { href: `#/sessions/${enc(s.id)}`, text: s.id })),
      el('td', { className: 'num', text: String(s.steps) }),
      el('td', { text: fmtTime(s.last) }),
      el('td', { text: nsText({ ...s.ns, session: '' }) }),
      el('td', { className: 'snippet', text: (s.first.text || '').slice(0, 120) })));
  }
  main().replaceChildren(title,
    statusLine('The sessions of the newest 1,000 steps this key may see, the most recent first.'),
    sessions.size ? el('table', { className: 'grid', id: 'session-list' },
      el('thead', {}, el('tr', {}, ...['session', 'steps', 'last step', 'who', 'opening'].map((h) => el('th', { text: h })))), rows)
      : statusLine('No session has steps yet.'));
  ready('sessions');
}

const SPEAKER = { user_message: 'user', agent_response: 'agent', tool_call: 'tool call', tool_result: 'tool result', observation: 'observation' };

function stepType(m) { return (m.body && m.body.type) || 'observation'; }

// One step: a message as a speech bubble; a tool call or result folded
// (a closed <details>), its first line as the summary.
function renderStep(m) {
  const type = stepType(m);
  const meta = el('div', { className: 'meta' }, el('span', { text: `#${m.step_number}` }), el('span', { text: fmtTime(m.created_at) }),
    recordLink(m.id, 'open record'));
  if (type === 'tool_call' || type === 'tool_result') {
    const tool = m.body && m.body.metadata && m.body.metadata.tool_name;
    const first = (m.text || '').split('\n')[0].slice(0, 100);
    return el('details', { className: `step tool ${type}`, dataset: { id: m.id, type } },
      el('summary', {}, el('strong', { text: SPEAKER[type] }), tool ? ` ${tool}` : '', ': ', el('span', { className: 'muted', text: first })),
      meta, el('div', { className: 'text', text: m.text }));
  }
  return el('div', { className: `step ${type}`, dataset: { id: m.id, type } },
    el('div', { className: 'speaker', text: SPEAKER[type] || type }), meta, el('div', { className: 'text', text: m.text }));
}

async function sessionView(id) {
  const token = viewToken();
  const title = el('h1', {}, 'Session ', el('span', { text: id }));
  main().replaceChildren(title, statusLine('Loading…'));
  let steps;
  try {
    steps = (await api('GET', `/v1/sessions/${enc(id)}/steps`)).steps || [];
  } catch (e) {
    if (!still(token)) return;
    main().replaceChildren(title, statusLine(e.message, true));
    ready('session');
    return;
  }
  if (!still(token)) return;
  const conversation = el('div', { id: 'conversation' });
  for (const m of steps) conversation.append(renderStep(m));
  const facts = el('div', { id: 'session-facts' }, statusLine('Looking for the facts consolidated from these steps…'));
  main().replaceChildren(title,
    el('p', { className: 'status' }, `${steps.length} step(s), oldest first; tool calls and results are folded (click to open). `,
      el('a', { href: `#/search?q=${enc(steps.length ? steps[0].text.slice(0, 80) : id)}&session=${enc(id)}`, text: 'search this session' })),
    el('div', { className: 'columns' },
      el('div', {}, steps.length ? conversation : statusLine('This session has no steps this key may see.')),
      el('div', {}, el('h2', { text: 'Facts consolidated from it' }), facts)));
  ready('session');
  if (!steps.length) { facts.replaceChildren(statusLine('None.')); return; }
  // The facts and procedures written since the session's first step whose
  // provenance names one of its steps (consolidation links each fact to the
  // episodes it came from).
  const ids = new Set(steps.map((m) => m.id));
  try {
    const from = steps[0].created_at;
    const answer = await api('GET', `/v1/memories?kinds=fact,procedure&created_from=${enc(from)}&include_superseded=true&limit=1000`);
    if (!still(token)) return;
    const found = (answer.memories || []).filter((m) => (m.provenance || []).some((p) => p.type === 'episode' && ids.has(p.ref)));
    const list = el('ul', { className: 'facts' });
    for (const m of found) {
      list.append(el('li', { dataset: { id: m.id } }, recordLink(m.id, m.text), ' ',
        el('span', { className: 'meta', text: `${m.kind}${m.state === 'superseded' ? ' (superseded)' : ''} · ${(m.tags || []).join(', ')}` })));
    }
    facts.replaceChildren(found.length ? list : statusLine('No fact has been consolidated from this session yet (it is consolidated when it ends).'));
  } catch (e) {
    if (still(token)) facts.replaceChildren(statusLine(e.message, true));
  }
}

// --- Missions: a timeline of decisions, events, refreshes and corrections ---

// The head of a view of one mission: its title and mission field, loading;
// or, with no mission named, a note asking for one (the view is then ready)
// and null.
function missionHead(params, view, heading, hash, ask) {
  const mission = params.get('mission') || '';
  const title = el('h1', { text: heading });
  const form = missionInput(mission, hash);
  if (!mission) {
    main().replaceChildren(title, form, statusLine(ask));
    ready(view);
    return null;
  }
  main().replaceChildren(title, form, statusLine('Loading…'));
  return { mission, title, form };
}

async function missionsView(params) {
  const token = viewToken();
  const head = missionHead(params, 'missions', 'Missions', '#/missions', 'Name a mission to see its timeline.');
  if (!head) return;
  const { mission, title, form } = head;
  const m = enc(mission);
  const [decisions, events, corrections, refreshes] = await Promise.all([
    getSettled(`/v1/decisions?mission=${m}&limit=1000`),
    getSettled(`/v1/events?mission=${m}`),
    getSettled(`/v1/corrections?mission=${m}&limit=1000`),
    getSettled(`/v1/memories?mission=${m}&kinds=artifact&tags=push-refresh:summary&limit=1000`),
  ]);
  if (!still(token)) return;
  const items = [];
  for (const d of decisions.ok ? decisions.v.decisions : []) {
    items.push({ at: d.decided_at || d.created_at, type: 'decision', crit: d.criticality, id: d.id,
      title: d.title, text: d.decision, extra: d.access_level ? `${d.status} · level ${d.access_level}` : d.status, link: `#/decision/${enc(d.id)}?mission=${m}` });
  }
  for (const e of events.ok ? events.v.events : []) {
    items.push({ at: e.created_at, type: 'event', crit: e.criticality, id: e.id, title: `${e.type} · ${e.component}`, text: e.text,
      extra: e.operator || '', link: `#/record/${enc(e.id)}` });
  }
  for (const c of corrections.ok ? corrections.v.corrections : []) {
    items.push({ at: c.created_at, type: 'correction', crit: c.criticality, id: c.id, title: `${c.class || ''} · ${c.component || ''}`,
      text: c.summary, extra: c.outcome || '', link: `#/record/${enc(c.id)}` });
  }
  for (const r of refreshes.ok ? refreshes.v.memories : []) {
    items.push({ at: r.created_at, type: 'refresh', crit: r.criticality, id: r.id,
      title: `refresh of ${(r.tags || []).find((t) => t.startsWith('task:')) || 'a task'}`, text: r.text, extra: '', link: `#/record/${enc(r.id)}` });
  }
  items.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
  const timeline = el('ol', { className: 'timeline mission', id: 'mission-timeline' });
  for (const it of items) {
    timeline.append(el('li', { className: `item-${it.type}`, dataset: { id: it.id, type: it.type } },
      el('div', { className: 'meta' }, el('span', { text: fmtTime(it.at) }), el('span', { className: `badge ${it.type}`, text: it.type }),
        critBadge(it.crit), el('span', { text: it.extra })),
      el('div', {}, el('a', { href: it.link, text: it.title || it.id })),
      el('div', { className: 'text', text: it.text || '' })));
  }
  const notes = [];
  for (const [name, r] of [['decisions', decisions], ['events', events], ['corrections', corrections], ['refreshes', refreshes]]) {
    if (!r.ok) notes.push(statusLine(`${name}: ${r.e.message}`, true));
  }
  main().replaceChildren(title, form, ...notes,
    el('div', { className: 'columns' },
      el('div', {}, el('h2', { text: `Timeline of ${mission}, newest first` }), items.length ? timeline : statusLine('Nothing recorded for this mission that this key may see.')),
      el('div', {}, el('h2', { text: 'Handoff' }), handoffForm(mission),
        el('p', {}, el('a', { href: `#/charts?mission=${m}`, text: 'Charts of this mission' })))));
  ready('missions');
}

// The handoff digest for two operators and a time, as the next operator
// reads it (the markdown POST /v1/handoff answers, shown as text).
function handoffForm(mission) {
  const out = el('div', { id: 'handoff' });
  const form = el('form', { className: 'stack', id: 'handoff-form' },
    el('label', {}, 'from operator', el('input', { name: 'from', required: true })),
    el('label', {}, 'to operator (whose clearance applies)', el('input', { name: 'to', required: true })),
    el('label', {}, 'since (optional)', el('input', { name: 'since', type: 'datetime-local' })),
    el('button', { type: 'submit', text: 'Write the handoff' }));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const f = form.elements;
    const body = { namespace: { mission }, from_operator: f.from.value.trim(), to_operator: f.to.value.trim() };
    if (f.since.value) body.since = isoOf(f.since.value);
    out.replaceChildren(statusLine('Writing…'));
    try {
      const d = await api('POST', '/v1/handoff', body);
      out.replaceChildren(
        statusLine(`${d.tokens_used} of ${d.token_budget} tokens (${d.counter}); clearance ${d.clearance}${d.degraded ? '; degraded mode' : ''}`),
        el('pre', { className: 'markdown', id: 'handoff-text', text: d.markdown }));
    } catch (e) {
      out.replaceChildren(statusLine(e.message, true));
    }
  });
  return el('div', { className: 'card' }, form, out);
}

async function decisionView(id, params) {
  const token = viewToken();
  const mission = params.get('mission') || '';
  const title = el('h1', { text: 'Decision' });
  main().replaceChildren(title, statusLine('Loading…'));
  let d;
  try {
    d = await api('GET', `/v1/decisions/${enc(id)}?mission=${enc(mission)}`);
  } catch (e) {
    if (!still(token)) return;
    main().replaceChildren(title, statusLine(e.status === 404 ? `No decision ${id} in mission ${mission} (or it is above this key's clearance).` : e.message, true));
    ready('decision');
    return;
  }
  if (!still(token)) return;
  const fields = el('dl', { className: 'fields' });
  const row = (name, value) => fields.append(el('dt', { text: name }), el('dd', {}, value));
  row('status', el('span', { className: `status-${d.status}`, id: 'decision-status', text: d.status }));
  row('criticality', critBadge(d.criticality));
  row('component', d.component || '—');
  row('decided by', d.decided_by || '—');
  row('decided at', fmtTime(d.decided_at || d.created_at));
  row('access level', String(d.access_level ?? 0));
  if (d.supersedes) row('supersedes', el('a', { href: `#/decision/${enc(d.supersedes)}?mission=${enc(mission)}`, text: d.supersedes.slice(0, 8) }));
  if (d.superseded_by) row('superseded by', el('a', { href: `#/decision/${enc(d.superseded_by)}?mission=${enc(mission)}`, text: d.superseded_by.slice(0, 8) }));
  if ((d.principles || []).length) row('principles', d.principles.join(', '));
  row('record', recordLink(d.id, 'open record'));
  const alternatives = el('ul', { id: 'alternatives' });
  for (const a of d.alternatives || []) alternatives.append(el('li', {}, el('strong', { text: a.option }), a.reason ? ` — ${a.reason}` : ''));
  const provenance = el('ul', {});
  for (const p of d.provenance || []) provenance.append(el('li', {}, el('strong', { text: p.type }), ` ${p.ref}${p.detail ? ` (${p.detail})` : ''}`));
  main().replaceChildren(
    el('h1', {}, 'Decision: ', el('span', { id: 'decision-title', text: d.title })),
    el('p', {}, el('a', { href: `#/missions?mission=${enc(mission)}`, text: `← mission ${mission}` })),
    el('div', { className: 'columns' },
      el('div', {},
        el('h2', { text: 'Context' }), el('div', { className: 'card text', id: 'decision-context', text: d.context || '—' }),
        el('h2', { text: 'Decision' }), el('div', { className: 'card text', id: 'decision-text', text: d.decision }),
        el('h2', { text: 'Alternatives considered' }), (d.alternatives || []).length ? alternatives : statusLine('None recorded.'),
        el('h2', { text: 'Consequences' }), el('div', { className: 'card text', text: d.consequences || '—' }),
        (d.provenance || []).length ? el('div', {}, el('h2', { text: 'Provenance' }), provenance) : null),
      el('div', {}, el('h2', { text: 'Fields' }), el('div', { className: 'card' }, fields))));
  ready('decision');
}

// --- Charts: seed 003's signals, drawn by uPlot (/ui/uplot.js and
// /ui/uplot.css, embedded in msp at build time; loaded only for this view) ---

let chartLib = null;
function loadChartLib() {
  if (!chartLib) {
    chartLib = new Promise((resolve, reject) => {
      if (window.uPlot) { resolve(window.uPlot); return; }
      document.head.append(el('link', { rel: 'stylesheet', href: '/ui/uplot.css' }));
      const script = el('script', { src: '/ui/uplot.js' });
      script.addEventListener('load', () => (window.uPlot ? resolve(window.uPlot) : reject(new Error('uPlot did not load'))));
      script.addEventListener('error', () => reject(new Error('this msp was built without uPlot (scripts/deps.sh installs it)')));
      document.head.append(script);
    });
    chartLib.catch(() => { chartLib = null; });
  }
  return chartLib;
}

const COLORS = ['#2f6fed', '#0f9d76', '#c77800', '#9b51e0', '#d92d20', '#8a94a6'];
const CHART_HEIGHT = 260;
// A chart is as wide as its box, and never narrower than this.
const chartWidth = (box) => Math.max(box.clientWidth, 280);

// The charts on the page by their id (for the browser test, and anyone
// curious: each is a uPlot, whose `data` is [x, ...series]).
window.mspCharts = new Map();

function chartCard(id, heading, note) {
  const box = el('div', { className: 'chart-box', id, role: 'img', 'aria-label': heading });
  return { box, card: el('section', { className: 'card chart', dataset: { chart: id } }, el('h2', { text: heading }), note ? statusLine(note) : null, box) };
}

// A chart over categories (`labels`, named `xLabel` in the legend; x is
// their index) in `box`: each of
// `series` ({ label, values, color, bars, scale, dash, points }) drawn as
// bars or a line against its scale: 'y' on the left, any other on the right.
// `ranges` fixes a scale's [min, max]; else it runs from 0 to its largest value.
function categoryChart(U, box, xLabel, labels, series, ranges = {}) {
  const scaleNames = [...new Set(['y', ...series.map((s) => s.scale || 'y')])];
  const scales = { x: { time: false, range: () => [-0.5, Math.max(labels.length, 1) - 0.5] } };
  for (const name of scaleNames) {
    scales[name] = { range: ranges[name] ? () => ranges[name] : (u, min, max) => [0, max > 0 ? max * 1.1 : 1] };
  }
  const short = (t) => (t.length > 16 ? `${t.slice(0, 15)}…` : t);
  // At most about a dozen category names under the axis.
  const step = Math.max(1, Math.ceil(labels.length / 12));
  const axes = [{ splits: () => labels.map((_, i) => i).filter((i) => i % step === 0),
    values: (u, splits) => splits.map((i) => short(String(labels[i] ?? ''))),
    rotate: labels.length > 6 ? -40 : 0, size: labels.length > 6 ? 70 : 40, grid: { show: false } }];
  scaleNames.forEach((name, i) => axes.push({ scale: name, side: i === 0 ? 3 : 1, grid: { show: i === 0 } }));
  const bars = U.paths.bars({ size: [0.6, 48] });
  const opts = {
    width: chartWidth(box),
    height: CHART_HEIGHT,
    scales,
    axes,
    cursor: { drag: { x: false, y: false } },
    series: [{ label: xLabel, value: (u, i) => (i == null ? '' : String(labels[i] ?? '')) }, ...series.map((s) => ({
      label: s.label,
      scale: s.scale || 'y',
      stroke: s.color,
      fill: s.bars ? s.color : undefined,
      width: s.bars ? 0 : 2,
      dash: s.dash,
      paths: s.bars ? bars : undefined,
      points: { show: !!s.points },
    }))],
  };
  return new U(opts, [labels.map((_, i) => i), ...series.map((s) => s.values)], box);
}

async function chartsView(params) {
  const token = viewToken();
  const head = missionHead(params, 'charts', 'Charts', '#/charts', 'Name a mission to chart its signals.');
  if (!head) return;
  const { mission, title, form } = head;
  const m = enc(mission);
  const charts = [];
  const resize = () => { for (const c of charts) c.setSize({ width: chartWidth(c.root.parentNode), height: CHART_HEIGHT }); };
  leaveView = () => {
    window.removeEventListener('resize', resize);
    for (const c of charts) c.destroy();
    window.mspCharts.clear();
  };
  // The reports cover every record of the mission: a key with a clearance
  // limit may not read them (403), so they are not asked for.
  const full = who.clearance === null;
  const hour = new Date(Date.now() - 3600 * 1000).toISOString();
  let U;
  let corrections, redundancy, load, events, plan;
  try {
    [U, corrections, redundancy, load, events, plan] = await Promise.all([
      loadChartLib(),
      full ? getSettled(`/v1/reports/corrections?mission=${m}`) : null,
      full ? getSettled(`/v1/reports/redundancy?mission=${m}`) : null,
      getSettled(`/v1/reports/load?mission=${m}`),
      getSettled(`/v1/events?mission=${m}&from=${enc(hour)}`),
      getSettled(`/v1/reports/plan?mission=${m}`),
    ]);
  } catch (e) {
    if (!still(token)) return;
    main().replaceChildren(title, form, statusLine(e.message, true));
    ready('charts');
    return;
  }
  if (!still(token)) return;
  performance.mark('msp-data-charts');
  const grid = el('div', { className: 'charts', id: 'charts' });
  main().replaceChildren(title, form, grid);
  // Drawn once the card is on the page (uPlot takes its box's width).
  const draw = (c, xLabel, labels, series, ranges) => {
    const chart = categoryChart(U, c.box, xLabel, labels, series, ranges);
    charts.push(chart);
    window.mspCharts.set(c.box.id, chart);
  };
  window.addEventListener('resize', resize);

  if (!full) {
    grid.append(statusLine('The correction and redundancy reports are read with a key without a clearance limit.'));
  } else if (corrections.ok) {
    const r = corrections.v;
    const a = chartCard('chart-correction-weeks', 'Correction rate per ISO week', `overall ${fmtNum(r.rate)}: ${r.linked_corrections} linked correction(s) of ${r.retrievals} retrieval(s)`);
    const b = chartCard('chart-correction-components', 'Corrections per component (bars) and their rate (points, right)');
    grid.append(a.card, b.card);
    draw(a, 'week', r.weeks.map((w) => w.week), [{ label: 'correction rate', values: r.weeks.map((w) => w.rate), color: COLORS[0], points: true }]);
    draw(b, 'component', r.components.map((c) => c.component || '(none)'), [
      { label: 'corrections', values: r.components.map((c) => c.corrections), color: COLORS[2], bars: true },
      { label: 'rate', values: r.components.map((c) => c.rate), color: COLORS[3], scale: 'rate', points: true }]);
  } else {
    grid.append(statusLine(`corrections report: ${corrections.e.message}`, true));
  }

  if (full && redundancy.ok) {
    const r = redundancy.v;
    const c = chartCard('chart-redundancy', 'Redundancy W per session (share of served tokens not used)');
    grid.append(c.card);
    draw(c, 'session', r.sessions.map((s) => s.session || '(none)'),
      [{ label: 'unused share of tokens', values: r.sessions.map((s) => s.unused_share_tokens), color: COLORS[1], bars: true }], { y: [0, 1] });
  } else if (full) {
    grid.append(statusLine(`redundancy report: ${redundancy.e.message}`, true));
  }

  if (load.ok && events.ok) {
    const l = load.v;
    // The events of the last hour per minute (counted here), against the
    // capacity the degraded mode starts above and twice it, where ranking
    // is by criticality alone.
    const now = Date.now();
    const labels = [];
    const counts = new Array(60).fill(0);
    for (let i = 59; i >= 0; i -= 1) labels.push(new Date(now - i * 60000).toISOString().slice(11, 16));
    for (const e of events.v.events) {
      const age = Math.floor((now - Date.parse(e.created_at)) / 60000);
      if (age >= 0 && age < 60) counts[59 - age] += 1;
    }
    const c = chartCard('chart-load', 'Event load against capacity',
      `now ${fmtNum(l.rate_per_min, 2)} events/min over ${l.window_min} min; capacity ${fmtNum(l.capacity_per_min, 1)}/min; alpha ${fmtNum(l.alpha, 2)} (${l.degraded ? 'degraded' : 'normal'}, mode ${l.mode})`);
    grid.append(c.card);
    draw(c, 'minute (UTC)', labels, [
      { label: 'events per minute', values: counts, color: COLORS[0], bars: true },
      { label: 'capacity (degraded above)', values: labels.map(() => l.capacity_per_min), color: COLORS[2] },
      { label: 'twice capacity (alpha 1)', values: labels.map(() => 2 * l.capacity_per_min), color: COLORS[4], dash: [4, 4] }]);
  } else {
    for (const [name, r] of [['load', load], ['events', events]]) if (!r.ok) grid.append(statusLine(`${name}: ${r.e.message}`, true));
  }

  if (plan.ok) {
    // The push orchestrator's plan: each LONG-TERM task's refresh priority
    // (due ones in red), with its reason, signals and last refresh below.
    const tasks = plan.v.tasks;
    const c = chartCard('chart-plan', "The push orchestrator's plan", tasks.length ? 'due tasks first, in queue order' : 'No LONG-TERM task is open in this mission.');
    grid.append(c.card);
    if (tasks.length) {
      draw(c, 'task', tasks.map((t) => t.task_id), [
        { label: 'refresh priority, due', values: tasks.map((t) => (t.due ? t.priority : null)), color: COLORS[4], bars: true },
        { label: 'refresh priority, not due', values: tasks.map((t) => (t.due ? null : t.priority)), color: COLORS[5], bars: true }],
      { y: [0, Math.max(1, ...tasks.map((t) => t.priority))] });
    } else {
      c.box.remove();
    }
    const rows = el('tbody', {});
    for (const t of tasks) {
      rows.append(el('tr', { dataset: { task: t.task_id } }, el('td', { text: t.task_id }), el('td', { text: t.title }), el('td', {}, critBadge(t.criticality)),
        el('td', { className: 'num', text: fmtNum(t.priority, 2) }), el('td', { text: t.due ? 'due' : 'not due' }), el('td', { text: t.reason }),
        el('td', { className: 'num', text: `${t.commits} / ${t.comments}` }),
        el('td', { text: t.never_refreshed ? 'never' : fmtTime(t.last_refresh_at) })));
    }
    if (tasks.length) {
      c.card.append(el('table', { className: 'grid', id: 'plan' },
        el('thead', {}, el('tr', {}, ...['task', 'title', 'criticality', 'priority', 'due', 'reason', 'commits / comments', 'last refresh'].map((h) => el('th', { text: h })))), rows));
    }
  } else {
    grid.append(statusLine(`plan: ${plan.e.message}`, true));
  }
  ready('charts');
}

// --- Coding: the prompts captured from coding agents, by repository and branch ---

// The prompt repository has no tenant: the server serves it as tenant
// `default`'s, to a key without a clearance limit (GET /v1/prompts).
const PROMPTS_TENANT = 'default';

async function codingView(params) {
  const token = viewToken();
  const title = el('h1', { text: 'Coding' });
  if (who.tenant !== PROMPTS_TENANT || who.clearance !== null) {
    main().replaceChildren(title, statusLine(`The captured prompts are read with a key of tenant ${PROMPTS_TENANT} without a clearance limit (they have no tenant or access level of their own).`));
    ready('coding');
    return;
  }
  const repository = params.get('repository') || '';
  const form = el('form', { className: 'inline', id: 'coding-form' },
    el('label', {}, 'repository (path or name)', el('input', { name: 'repository', value: repository, placeholder: 'all' })),
    el('button', { type: 'submit', text: 'Show' }));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const r = form.elements.repository.value.trim();
    location.hash = r ? `#/coding?repository=${enc(r)}` : '#/coding';
  });
  main().replaceChildren(title, form, statusLine('Loading…'));
  let prompts;
  try {
    prompts = (await api('GET', `/v1/prompts?limit=500${repository ? `&repository=${enc(repository)}` : ''}`)).prompts || [];
  } catch (e) {
    if (!still(token)) return;
    main().replaceChildren(title, form, statusLine(e.message, true));
    ready('coding');
    return;
  }
  if (!still(token)) return;
  // Newest first, grouped by repository, then branch (the most recent first).
  const repos = new Map();
  for (const p of prompts) {
    const r = p.repository || '(no repository)';
    if (!repos.has(r)) repos.set(r, new Map());
    const branches = repos.get(r);
    const b = p.branch || '(no branch)';
    if (!branches.has(b)) branches.set(b, []);
    branches.get(b).push(p);
  }
  const out = el('div', { id: 'prompts' });
  for (const [r, branches] of repos) {
    const card = el('section', { className: 'card repo', dataset: { repository: r } }, el('h2', { text: r }));
    for (const [b, list] of branches) {
      const items = el('ol', { className: 'prompts' });
      for (const p of list) {
        items.append(el('li', { dataset: { id: p.id } },
          el('div', { className: 'meta' }, el('span', { text: fmtTime(p.at) }), el('span', { text: `session ${p.session || '—'}` }),
            el('span', { text: p.permission_mode || '' })),
          el('div', { className: 'text', text: p.text })));
      }
      card.append(el('details', { className: 'branch', open: true, dataset: { branch: b } },
        el('summary', {}, el('strong', { text: b }), ` — ${list.length} prompt(s)`), items));
    }
    out.append(card);
  }
  main().replaceChildren(title, form,
    statusLine(`The newest ${prompts.length} captured prompt(s)${repository ? ` of ${repository}` : ''}, by repository and branch.`),
    prompts.length ? out : statusLine('No prompt has been captured (see docs/coding-agents.md).'));
  ready('coding');
}

// --- Live: the newest records, then each change as it happens ---

async function liveView() {
  const feed = el('div', { id: 'feed' });
  const state = statusLine('Connecting…');
  state.id = 'live-status';
  main().replaceChildren(el('h1', { text: 'Live' }), state, feed);
  const controller = new AbortController();
  leaveView = () => controller.abort();
  const seen = new Map();
  const show = (m, fresh) => {
    const card = el('article', { className: `card live-record${fresh ? ' live-item' : ''}`, dataset: { id: m.id } },
      el('div', { className: 'meta' }, el('span', { text: fmtTime(m.updated_at || m.created_at) }), el('span', { text: `${m.kind} · ${m.layer}` }),
        el('span', { text: nsText(m.namespace) }), recordLink(m.id, 'open record')),
      el('div', { className: 'text', text: m.text }));
    const old = seen.get(m.id);
    if (old) old.remove();
    seen.set(m.id, card);
    feed.prepend(card);
  };
  // The first connection starts 50 changes back (the newest records, from
  // the change sequence); a reconnection resumes after the last seq seen.
  let after = null;
  let fresh = false;
  while (!controller.signal.aborted) {
    try {
      const url = after === null ? '/v1/events/stream?last=50' : `/v1/events/stream?after=${after}`;
      const res = await fetch(url, { headers: authHeaders({ Accept: 'text/event-stream' }), signal: controller.signal, cache: 'no-store' });
      if (!res.ok) throw new ApiError(res.status, `the event stream answered HTTP ${res.status}`);
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = { name: 'message', data: '', id: null };
          for (const line of block.split('\n')) {
            if (line.startsWith('event: ')) event.name = line.slice(7);
            else if (line.startsWith('data: ')) event.data += line.slice(6);
            else if (line.startsWith('id: ')) event.id = line.slice(4);
          }
          if (event.name === 'seq') {
            after = Number(event.data);
            state.textContent = `Connected: showing changes as they happen (sequence ${after}).`;
            state.dataset.connected = '1';
          } else if (event.name === 'ready') {
            if (!fresh) ready('live');
            fresh = true;
          } else if (event.name === 'record') {
            show(JSON.parse(event.data), fresh);
          } else if (event.name === 'gone') {
            const id = JSON.parse(event.data).id;
            if (seen.has(id)) { seen.get(id).remove(); seen.delete(id); }
          } else if (event.name === 'error') {
            state.textContent = JSON.parse(event.data).error.message;
          }
        }
      }
    } catch (e) {
      if (controller.signal.aborted) return;
      state.textContent = `Disconnected (${e.message}); reconnecting…`;
      delete state.dataset.connected;
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}

start();
