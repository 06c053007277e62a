// The Sessions view (#/sessions: the recent sessions) and a session
// (#/sessions/ID: its steps as a conversation, tool calls folded, beside the
// facts consolidated from it).
import { api } from './api.js';
import { el, enc, fmtTime, main, nsText, ready, recordLink, statusLine, still, viewToken } from './page.js';

// --- Sessions: the recent sessions, then one as a conversation ---

export async function sessionsView() {
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

export async function sessionView(id) {
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
