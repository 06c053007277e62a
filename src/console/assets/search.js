// The Search view (#/search?q=...: a search with every field, each hit's
// score explained signal by signal) and the Record view (#/record/ID: a
// record's fields, history, provenance, audit events and access).
import { api } from './api.js';
import { el, fmtNum, fmtTime, isoOf, main, nsText, ready, recordLink, statusLine, who } from './page.js';

// --- Search ---

// The search form's lists, from /ui/session.json (the engine's names), read
// at sign-in: the form draws complete, with no second request.
export const ENUMS = { kinds: [], layers: [], criticalities: ['low', 'normal', 'high', 'critical'] };

function field(label, input, className) { return el('label', { className }, label, input); }

function multiSelect(name, values, chosen) {
  const select = el('select', { name, multiple: true, size: 3 });
  for (const v of values) select.append(el('option', { value: v, text: v, selected: chosen.includes(v) }));
  return select;
}

function localOf(iso) { return iso ? iso.slice(0, 16) : ''; }
function list(text) { return text.split(',').map((s) => s.trim()).filter(Boolean); }

export function searchView(params) {
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

export async function recordView(id) {
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
