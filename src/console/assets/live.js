// The Live view (#/live): the newest records, then each change as it happens,
// read from the server-sent event stream with fetch.
import { ApiError, authHeaders } from './api.js';
import { el, fmtTime, main, nsText, onLeave, ready, recordLink, statusLine } from './page.js';

// --- Live: the newest records, then each change as it happens ---

export async function liveView() {
  const feed = el('div', { id: 'feed' });
  const state = statusLine('Connecting…');
  state.id = 'live-status';
  main().replaceChildren(el('h1', { text: 'Live' }), state, feed);
  const controller = new AbortController();
  onLeave(() => controller.abort());
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
