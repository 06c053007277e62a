// msp console (docs/console.md): sign-in, Search, Record, Sessions, Missions,
// Charts, Coding and Live views over the REST API (/v1), nothing else. Every piece of data is put on the page
// as text (textContent, text nodes): never as HTML.
// This is the entry index.html loads: sign-in and routing. Each view is a
// module of its own (search.js, sessions.js, missions.js, charts.js,
// coding.js, live.js), over api.js (the REST client) and page.js (what the
// views share).
import { KEY, authHeaders, key } from './api.js';
import { chartsView, loadChartLib } from './charts.js';
import { codingView } from './coding.js';
import { liveView } from './live.js';
import { decisionView, missionsView } from './missions.js';
import { leaveView, main, ready, setWho } from './page.js';
import { ENUMS, recordView, searchView } from './search.js';
import { sessionView, sessionsView } from './sessions.js';

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
  window.removeEventListener('hashchange', route);
  document.getElementById('sign-in').hidden = false;
  document.getElementById('nav').hidden = true;
  main().replaceChildren();
  ready('sign-in');
}

function signedIn(answer) {
  setWho(answer);
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

start();
