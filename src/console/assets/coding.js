// The Coding view (#/coding?repository=R): the prompts captured from coding
// agents, by repository and branch.
import { api } from './api.js';
import { el, enc, fmtTime, main, ready, statusLine, still, viewToken, who } from './page.js';

// --- Coding: the prompts captured from coding agents, by repository and branch ---

// The prompt repository has no tenant: the server serves it as tenant
// `default`'s, to a key without a clearance limit (GET /v1/prompts).
const PROMPTS_TENANT = 'default';

export async function codingView(params) {
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
