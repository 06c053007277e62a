// What every view of the console shares: building elements (data always as
// text, never as HTML), formatting, the first-paint mark, and the view
// showing: whom the tab is signed in as, its leave hook and its generation.
export const main = () => document.getElementById('view');
export let who = { signed_in: false, tenant: '', clearance: null, keys: true };
let leaveHook = () => {};

// The sign-in's answer for this tab (set by app.js).
export function setWho(answer) { who = answer; }

// What leaving the view showing does (stop its stream, free its charts).
export function onLeave(fn) { leaveHook = fn; }

// Leaves the view showing: its onLeave hook runs, and an answer still on its
// way to it is dropped.
export function leaveView() {
  leaveHook();
  leaveHook = () => {};
  generation += 1;
}

// --- Small helpers ---

export function el(tag, props = {}, ...children) {
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

export function fmtTime(iso) { return iso ? iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC') : '—'; }
export function fmtNum(x, digits = 3) { return typeof x === 'number' ? x.toFixed(digits) : '—'; }
export function recordLink(id, label) { return el('a', { href: `#/record/${encodeURIComponent(id)}`, text: label || id }); }
export function nsText(ns) {
  if (!ns) return '';
  return ['user', 'agent', 'session', 'mission', 'operator'].filter((p) => ns[p]).map((p) => `${p}=${ns[p]}`).join(' ');
}
export function isoOf(local) { return local ? new Date(local).toISOString() : ''; }

// The moment a view shows its data: a performance mark the browser test reads
// (first paint of each view, docs/console.md).
export function ready(view) {
  document.body.dataset.ready = view;
  performance.mark(`msp-ready-${view}`);
}

export function statusLine(text, error = false) { return el('p', { className: error ? 'status error' : 'status', text, role: error ? 'alert' : null }); }

// A view still showing: leaveView() moves `generation` on, so an answer that
// comes back after the user went elsewhere is dropped.
let generation = 0;
export function viewToken() { generation += 1; return generation; }
export function still(token) { return token === generation; }

export function enc(s) { return encodeURIComponent(s); }
export function critBadge(c) { return c ? el('span', { className: `crit crit-${c}`, text: c }) : null; }
