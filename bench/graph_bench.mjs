// The knowledge-graph tools of msp against @modelcontextprotocol/server-memory
// in one run: the same workload through the official MCP SDK client over
// stdio (`msp mcp` and the reference server, each with a fresh store) at
// 100, 1,000 and 10,000 entities; every answer is checked equal (entities
// and relations in a canonical order), then p50/p99 per tool and query shape
// and the msp / server-memory ratio are printed. Documented in bench/README.md.
//
// Run from tests/mcp (where `npm ci` installed the SDK and the reference):
//   cd tests/mcp && npm ci
//   MSP_BIN=/path/to/msp node ../../bench/graph_bench.mjs [--sizes 100,1000,10000] [--reps 200]
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const modules = join(process.cwd(), 'node_modules', '@modelcontextprotocol');
if (!existsSync(join(modules, 'sdk')) || !existsSync(join(modules, 'server-memory'))) {
  console.error('run from tests/mcp after `npm ci` there (the SDK and server-memory are looked up in ./node_modules)');
  process.exit(2);
}
const load = (p) => import(pathToFileURL(join(modules, p)).href);
const { Client } = await load('sdk/dist/esm/client/index.js');
const { StdioClientTransport } = await load('sdk/dist/esm/client/stdio.js');
const referenceServer = join(modules, 'server-memory', 'dist', 'index.js');

function flag(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
}
const sizes = flag('sizes', '100,1000,10000').split(',').map(Number);
const reps = Number(flag('reps', '200'));
const mspBin = process.env.MSP_BIN;
if (!mspBin) {
  console.error('set MSP_BIN to the msp binary (a Release build)');
  process.exit(2);
}

async function connect(command, args, env) {
  const transport = new StdioClientTransport({ command, args, env: { ...process.env, ...env }, stderr: 'inherit' });
  const client = new Client({ name: 'msp-graph-bench', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

// A server spoken to without the SDK: JSON-RPC lines on its stdin, each
// answer's line read back unparsed. What a call costs the server and the
// pipe alone; the SDK client's part (parsing, checking the result and its
// structuredContent against the tool's outputSchema) is the rest.
async function rawConnect(command, args, env) {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'inherit'] });
  let buffer = '';
  const waiting = new Map();
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => {
    buffer += chunk;
    for (let nl; (nl = buffer.indexOf('\n')) >= 0;) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      // The id leads (msp) or ends (the reference) the line.
      const m = /"id":(\d+)/.exec(line.slice(0, 64)) || /"id":(\d+)\}$/.exec(line.slice(-64));
      if (m && waiting.has(Number(m[1]))) {
        waiting.get(Number(m[1]))(line);
        waiting.delete(Number(m[1]));
      }
    }
  });
  let next = 1;
  const request = (method, params) => new Promise((resolve) => {
    const id = next++;
    waiting.set(id, resolve);
    child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
  });
  await request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } });
  child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
  return {
    call: (name, args) => request('tools/call', { name, arguments: args }),
    close: () => { child.stdin.end(); child.kill(); },
  };
}

// The canned server: "can" stores a line; every other request gets it
// back with the request's id.
const CANNED_SERVER = `
let canned = '', buf = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => {
  buf += d;
  for (let nl; (nl = buf.indexOf('\\n')) >= 0;) {
    const m = JSON.parse(buf.slice(0, nl));
    buf = buf.slice(nl + 1);
    if (m.id === undefined) continue;
    if (m.params && m.params.name === 'can') { canned = m.params.arguments.line; }
    const out = m.method === 'initialize' || !canned ? JSON.stringify({ jsonrpc: '2.0', id: m.id, result: {} })
                                                     : canned.replace('"id":ID', '"id":' + m.id);
    process.stdout.write(out + '\\n');
  }
});`;

async function call(client, name, args) {
  const r = await client.callTool({ name, arguments: args });
  if (r.isError) throw new Error(`${name}: ${r.content?.[0]?.text}`);
  return r.structuredContent;
}

// ---- The workload: entities, relations, queries, all from one seed ----

let seed = 12345;
const rand = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
};
const pick = (a) => a[Math.floor(rand() * a.length)];
const WORDS = ['deploys', 'billing', 'service', 'reads', 'writes', 'kafka', 'topic', 'owner', 'team', 'python',
  'migrates', 'database', 'schema', 'latency', 'budget', 'roadmap', 'customer', 'invoice', 'weekly', 'report',
  'Zürich', 'café', 'naïve', 'ÉCOLE', 'Straße'];
const TYPES = ['person', 'service', 'team', 'project', 'document', 'meeting', 'customer', 'vendor', 'server', 'ticket'];
const NAME = (i) => `entity-${String(i).padStart(5, '0')}`;

function makeGraph(n) {
  const entities = [];
  for (let i = 0; i < n; i++) {
    const observations = [];
    for (let k = 0; k < 3; k++) observations.push(`${pick(WORDS)} ${pick(WORDS)} ${pick(WORDS)} ${pick(WORDS)}`);
    observations.push(`code K${(i * 7919) % 1000003}Q`);  // one rare token per entity
    entities.push({ name: NAME(i), entityType: TYPES[i % TYPES.length], observations });
  }
  const relations = [];
  for (let i = 0; i < n; i++) {
    relations.push({ from: NAME(i), to: NAME((i * 7 + 1) % n), relationType: pick(['knows', 'uses', 'owns']) });
  }
  return { entities, relations };
}

// Query shapes; each returns the arguments of one call (limit 1000: the
// most msp serves; the reference has no limit, so every shape here matches
// at most 1000 entities at 10k and the answers stay comparable).
function shapes(n) {
  return {
    'rare token': () => ({ query: `K${(Math.floor(rand() * n) * 7919) % 1000003}Q`, limit: 1000 }),
    'no match': () => ({ query: `nothing-${Math.floor(rand() * 1e6)}`, limit: 1000 }),
    'short (2 bytes), rare': () => ({ query: pick(['Q7', 'zq', 'xé']), limit: 1000 }),
    'name part': () => ({ query: `TITY-${String(Math.floor(rand() * n)).padStart(5, '0').slice(0, 4)}`, limit: 1000 }),
    'unicode, case': () => ({ query: pick(['ZÜRICH CAFÉ', 'école naïve', 'STRASSE', 'straße billing']), limit: 1000 }),
    'common, ~1%': () => ({ query: `K${Math.floor(rand() * 9) + 1}1`, limit: 1000 }),
  };
}

const byName = (a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
const relKey = (r) => `${r.from}\u0000${r.relationType}\u0000${r.to}`;
const byRel = (a, b) => (relKey(a) < relKey(b) ? -1 : relKey(a) > relKey(b) ? 1 : 0);
const canonical = (g) => ({ entities: [...g.entities].sort(byName), relations: [...g.relations].sort(byRel) });

function stats(times) {
  const s = [...times].sort((a, b) => a - b);
  const at = (q) => s[Math.min(s.length - 1, Math.floor(q * s.length))];
  return { p50: at(0.5), p99: at(0.99) };
}

async function timed(fn) {
  const t = process.hrtime.bigint();
  const r = await fn();
  return [Number(process.hrtime.bigint() - t) / 1e6, r];
}

// Runs `makeArgs()` on both servers `reps` times, alternating, checking
// every answer equal; returns the timings.
async function compare(msp, ref, tool, makeArgs, count = reps, norm = canonical) {
  const mine = [];
  const theirs = [];
  let matched = 0;
  for (let i = 0; i < count; i++) {
    const args = makeArgs();
    const [a, ra] = await timed(() => call(msp, tool, args));
    const [b, rb] = await timed(() => call(ref, tool, args));
    try {
      assert.deepEqual(norm(ra), norm(rb));
    } catch {
      throw new Error(`${tool} ${JSON.stringify(args)}: msp and server-memory differ ` +
        `(${ra.entities?.length} / ${rb.entities?.length} entities)`);
    }
    matched += ra.entities?.length ?? 0;
    mine.push(a);
    theirs.push(b);
  }
  return { mine: stats(mine), theirs: stats(theirs), hits: matched / count };
}

const rows = [];
function report(size, what, r) {
  rows.push({ size, what, ...r });
  const f = (x) => x.toFixed(2).padStart(8);
  console.log(`${String(size).padStart(6)}  ${what.padEnd(34)} msp ${f(r.mine.p50)} ${f(r.mine.p99)}   ` +
    `server-memory ${f(r.theirs.p50)} ${f(r.theirs.p99)}   ratio ${(r.mine.p50 / r.theirs.p50).toFixed(2)}` +
    (r.hits !== undefined ? `   (${r.hits.toFixed(1)} entities)` : ''));
}

for (const n of sizes) {
  const dir = mkdtempSync(join(process.env.MSP_BENCH_TMP || tmpdir(), 'graph-bench-'));
  const msp = await connect(mspBin, ['mcp', '--data-dir', join(dir, 'msp')], {});
  const ref = await connect(process.execPath, [referenceServer], { MEMORY_FILE_PATH: join(dir, 'reference.jsonl') });
  try {
    const g = makeGraph(n);
    const loadStart = Date.now();
    for (let i = 0; i < n; i += 100) {
      const entities = g.entities.slice(i, i + 100);
      await call(msp, 'create_entities', { entities });
      await call(ref, 'create_entities', { entities });
    }
    for (let i = 0; i < n; i += 100) {
      const relations = g.relations.slice(i, i + 100);
      await call(msp, 'create_relations', { relations });
      await call(ref, 'create_relations', { relations });
    }
    console.log(`\n${n} entities, ${n} relations loaded into both in ${((Date.now() - loadStart) / 1000).toFixed(1)} s; ` +
      `p50 / p99 in ms over ${reps} calls each`);

    // The whole graph: msp's pages of 100 walked to the end against the
    // reference's one read_graph; the same items.
    const mspAll = { entities: [], relations: [] };
    const [walk] = await timed(async () => {
      let cursor;
      do {
        const page = await call(msp, 'read_graph', cursor ? { cursor, limit: 100 } : { limit: 100 });
        mspAll.entities.push(...page.entities);
        mspAll.relations.push(...page.relations);
        cursor = page.nextCursor;
      } while (cursor);
    });
    const [whole, refAll] = await timed(() => call(ref, 'read_graph', {}));
    assert.deepEqual(canonical(mspAll), canonical(refAll), 'read_graph: msp and server-memory differ');
    console.log(`${String(n).padStart(6)}  read the whole graph: msp ${walk.toFixed(1)} ms (${Math.ceil(2 * n / 100)} pages of 100), ` +
      `server-memory ${whole.toFixed(1)} ms (one call); equal`);

    for (const [shape, makeArgs] of Object.entries(shapes(n))) {
      report(n, `search_nodes ${shape}`, await compare(msp, ref, 'search_nodes', makeArgs));
    }
    // The same searches without the SDK (rawConnect): a second msp process
    // on the same data directory and a second reference on the same file,
    // each answer's line only read. And the floor of the pipe: a server
    // that answers each line with msp's last answer of the shape, canned
    // (same bytes, no work).
    {
      const mspRaw = await rawConnect(mspBin, ['mcp', '--data-dir', join(dir, 'msp')], {});
      const refRaw = await rawConnect(process.execPath, [referenceServer], { MEMORY_FILE_PATH: join(dir, 'reference.jsonl') });
      const echo = await rawConnect(process.execPath, ['-e', CANNED_SERVER], {});
      try {
        for (const [shape, makeArgs] of Object.entries(shapes(n))) {
          const mine = [];
          const theirs = [];
          const floor = [];
          let last = '';
          for (let i = 0; i < reps; i++) {
            const args = makeArgs();
            const [a, line] = await timed(() => mspRaw.call('search_nodes', args));
            const [b] = await timed(() => refRaw.call('search_nodes', args));
            last = line;
            mine.push(a);
            theirs.push(b);
          }
          await echo.call('can', { line: last.replace(/"id":\d+/, '"id":ID') });
          for (let i = 0; i < reps; i++) floor.push((await timed(() => echo.call('search_nodes', {})))[0]);
          report(n, `raw search_nodes ${shape}`, { mine: stats(mine), theirs: stats(theirs) });
          const f = stats(floor);
          console.log(`${''.padStart(6)}  (msp answer ${(last.length / 1024).toFixed(1)} KiB; the same bytes canned: ` +
            `p50 ${f.p50.toFixed(2)} ms, msp / canned ${(stats(mine).p50 / f.p50).toFixed(2)})`);
        }
      } finally {
        mspRaw.close();
        refRaw.close();
        echo.close();
      }
    }
    report(n, 'open_nodes 5 names (+1 unknown)', await compare(msp, ref, 'open_nodes', () => ({
      names: [...Array.from({ length: 5 }, () => NAME(Math.floor(rand() * n))), 'nobody'],
    })));

    // read_graph: a page of 100 at a random place (msp) against the
    // reference's only read, the whole graph.
    const cursors = [undefined];
    {
      let cursor;
      do {
        const page = await call(msp, 'read_graph', cursor ? { cursor, limit: 100 } : { limit: 100 });
        cursor = page.nextCursor;
        if (cursor) cursors.push(cursor);
      } while (cursor);
    }
    const page = [];
    const full = [];
    for (let i = 0; i < reps; i++) {
      const cursor = pick(cursors);
      page.push((await timed(() => call(msp, 'read_graph', cursor ? { cursor, limit: 100 } : { limit: 100 })))[0]);
      if (i < Math.min(reps, n >= 10000 ? 20 : reps)) full.push((await timed(() => call(ref, 'read_graph', {})))[0]);
    }
    report(n, 'read_graph page of 100 / whole', { mine: stats(page), theirs: stats(full) });

    // One write: an observation added to one entity (msp: one commit with
    // fsync; the reference rewrites its file).
    let k = 0;
    report(n, 'add_observations 1', await compare(msp, ref, 'add_observations', () => ({
      observations: [{ entityName: NAME(Math.floor(rand() * n)), contents: [`note ${k++}`] }],
    }), Math.min(reps, 100), (r) => r).then((r) => ({ ...r, hits: undefined })));
  } finally {
    await msp.close();
    await ref.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
