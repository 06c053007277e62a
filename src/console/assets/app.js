// msp console (docs/console.md): sign-in, Search, Record and Live views over
// the REST API (/v1), nothing else. Every piece of data is put on the page
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

async function start() {
  document.getElementById('sign-in-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const input = document.getElementById('key');
    sessionStorage.setItem(KEY, input.value.trim());
    input.value = '';
    const answer = await probe();
    if (!answer.signed_in) {
      sessionStorage.removeItem(KEY);
      document.getElementById('sign-in-error').textContent = 'That key is not valid for this server.';
      return;
    }
    document.getElementById('sign-in-error').textContent = '';
    signedIn(answer);
  });
  document.getElementById('sign-out').addEventListener('click', () => {
    sessionStorage.removeItem(KEY);
    location.hash = '#/search';
    location.reload();
  });
  const answer = await probe();
  if (answer.signed_in) signedIn(answer);
  else showSignIn();
}

function showSignIn() {
  document.getElementById('sign-in').hidden = false;
  document.getElementById('nav').hidden = true;
  main().replaceChildren();
  ready('sign-in');
}

function signedIn(answer) {
  who = answer;
  document.getElementById('sign-in').hidden = true;
  document.getElementById('nav').hidden = false;
  document.getElementById('sign-out').hidden = !answer.keys;
  const clearance = answer.clearance === null ? 'no clearance limit' : `clearance ${answer.clearance}`;
  document.getElementById('who').textContent = answer.keys ? `tenant ${answer.tenant}, ${clearance}` : `local mode: tenant ${answer.tenant}`;
  window.addEventListener('hashchange', route);
  route();
}

// --- Routing: #/search?q=..., #/record/ID, #/live ---

function route() {
  leaveView();
  leaveView = () => {};
  const hash = location.hash || '#/search';
  const [path, query] = hash.slice(1).split('?');
  const parts = path.split('/').filter(Boolean);
  for (const a of document.querySelectorAll('#nav a')) a.classList.toggle('active', a.dataset.view === parts[0]);
  if (parts[0] === 'record' && parts[1]) return recordView(decodeURIComponent(parts[1]));
  if (parts[0] === 'live') return liveView();
  return searchView(new URLSearchParams(query || ''));
}

// --- Search ---

const ENUMS = { kinds: [], layers: [], criticalities: ['low', 'normal', 'high', 'critical'] };
let enumsLoaded = null;

function loadEnums() {
  if (!enumsLoaded) {
    enumsLoaded = api('GET', '/openapi.json').then((doc) => {
      const s = doc.components.schemas;
      ENUMS.kinds = s.Kind ? s.Kind.enum : [];
      ENUMS.layers = s.Layer ? s.Layer.enum : [];
      if (s.Criticality) ENUMS.criticalities = s.Criticality.enum;
    }).catch(() => {});
  }
  return enumsLoaded;
}

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
  loadEnums().then(() => {
    for (const name of ['kinds', 'layers', 'criticalities']) {
      const old = form.elements[name];
      if (old && old.options.length === 0 && ENUMS[name].length) old.replaceWith(multiSelect(name, ENUMS[name], many(name)));
    }
  });
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
