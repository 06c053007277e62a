// The Charts view (#/charts?mission=M): a mission's correction, redundancy,
// load and plan reports, drawn by uPlot (loaded when the view first opens).
import { getSettled } from './api.js';
import { critBadge, el, enc, fmtNum, fmtTime, main, onLeave, ready, statusLine, still, viewToken, who } from './page.js';
import { missionHead } from './missions.js';

// --- Charts: seed 003's signals, drawn by uPlot (/ui/uplot.js and
// /ui/uplot.css, embedded in msp at build time; loaded only for this view) ---

let chartLib = null;
export function loadChartLib() {
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

export async function chartsView(params) {
  const token = viewToken();
  const head = missionHead(params, 'charts', 'Charts', '#/charts', 'Name a mission to chart its signals.');
  if (!head) return;
  const { mission, title, form } = head;
  const m = enc(mission);
  const charts = [];
  const resize = () => { for (const c of charts) c.setSize({ width: chartWidth(c.root.parentNode), height: CHART_HEIGHT }); };
  onLeave(() => {
    window.removeEventListener('resize', resize);
    for (const c of charts) c.destroy();
    window.mspCharts.clear();
  });
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
