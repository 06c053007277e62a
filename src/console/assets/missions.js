// The Missions view (#/missions?mission=M: a mission's timeline of decisions,
// events, corrections and refreshes, and the handoff between two operators)
// and the Decision view (#/decision/ID?mission=M); the mission field and
// head the Charts view shares.
import { api, getSettled } from './api.js';
import { critBadge, el, enc, fmtTime, isoOf, main, ready, recordLink, statusLine, still, viewToken } from './page.js';

// --- Missions: a timeline of decisions, events, refreshes and corrections ---

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

// The head of a view of one mission: its title and mission field, loading;
// or, with no mission named, a note asking for one (the view is then ready)
// and null.
export function missionHead(params, view, heading, hash, ask) {
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

export async function missionsView(params) {
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

export async function decisionView(id, params) {
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
