// MCP latency through the official SDK client (@modelcontextprotocol/sdk):
// memory_write and memory_search p50/p99 over stdio (`msp mcp`) and over
// Streamable HTTP (`msp serve`, /mcp), each on a fresh temporary data
// directory, with the transport's own floor measured in the same run (an MCP
// ping over the same connection, after each timed call and before the calls)
// and, over stdio, the same calls sent as raw JSON-RPC lines without the SDK.
//
//   cmake --build build/release --target msp -j2
//   (cd tests/mcp && npm ci)          # the SDK, pinned in tests/mcp/package-lock.json
//   node bench/mcp_bench.mjs --msp build/release/src/cli/msp
//
// Flags: --msp PATH (default $MSP_BIN), --writes N (timed writes a transport,
// default 500), --searches N (default 300), --preload N (records written
// before the search is timed, untimed, default 0), --synchronous full|normal
// (default normal), --kind fact|artifact|... (memory_write's kind, default
// fact), --transports stdio,raw,http (default all three), --corpus
// locomo|synthetic (default locomo: records of 8..30 words drawn by LoCoMo's
// word frequencies and LoCoMo's questions as queries, as rest_bench's; or
// synthetic: 10..20 words from a 140-word vocabulary and four-word queries,
// where every query word is in ~10% of the records — the lexical index's
// worst case), --locomo PATH (default ../shared/bench-data/locomo10.json or
// $MSP_LOCOMO), --json OUT.
import { spawn } from 'node:child_process';
import { setMaxListeners } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

function parseArgs(argv) {
  const args = {
    msp: process.env.MSP_BIN || '',
    writes: 500,
    searches: 300,
    preload: 0,
    synchronous: 'normal',
    kind: 'fact',
    transports: 'stdio,raw,http',
    corpus: 'locomo',
    locomo: process.env.MSP_LOCOMO || join(here, '..', '..', 'shared', 'bench-data', 'locomo10.json'),
    json: '',
    modules: join(here, '..', 'tests', 'mcp', 'node_modules'),
  };
  for (let i = 2; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '');
    if (!(key in args) || i + 1 >= argv.length) throw new Error(`unknown flag or missing value: ${argv[i]}`);
    args[key] = typeof args[key] === 'number' ? Number(argv[i + 1]) : argv[i + 1];
  }
  if (!args.msp) throw new Error('--msp PATH (or MSP_BIN) is required');
  if (args.corpus !== 'locomo' && args.corpus !== 'synthetic') throw new Error('--corpus must be locomo or synthetic');
  args.msp = resolve(args.msp);
  return args;
}

const args = parseArgs(process.argv);

// The SDK is installed under tests/mcp; import it from there whatever the
// working directory.
async function sdk(path) {
  const file = join(args.modules, '@modelcontextprotocol', 'sdk', 'dist', 'esm', path);
  if (!existsSync(file)) throw new Error(`${file} is missing: run npm ci in tests/mcp`);
  return import(pathToFileURL(file).href);
}
const { Client } = await sdk('client/index.js');
const { StdioClientTransport } = await sdk('client/stdio.js');
const { StreamableHTTPClientTransport } = await sdk('client/streamableHttp.js');

// Deterministic sentences of 10..20 words: distinct enough that facts are
// not merged as near-duplicates.
const WORDS = (
  'morning coffee garden python windows deploy friday tuesday build script numpy install error retry cache ' +
  'server client memory search index vector token budget session episode fact decision policy tenant user ' +
  'agent mission graph entity relation observation keyboard monitor laptop battery charger cable desk chair ' +
  'window door kitchen recipe pasta tomato basil olive bread cheese wine coffee tea milk sugar salt pepper ' +
  'mountain river lake forest trail camping tent backpack boots jacket rain snow summer winter autumn spring ' +
  'guitar piano violin drums concert ticket theatre movie novel poem painting museum gallery sculpture photo ' +
  'football tennis swimming running cycling marathon yoga gym coach team match score league season final'
).split(' ');
function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}
function sentences(n, seed) {
  const r = rng(seed);
  const out = [];
  for (let i = 0; i < n; ++i) {
    const len = 10 + Math.floor(r() * 11);
    const words = [];
    for (let j = 0; j < len; ++j) words.push(WORDS[Math.floor(r() * WORDS.length)]);
    out.push(`Note ${seed}-${i}: ${words.join(' ')}.`);
  }
  return out;
}

// LoCoMo's words with their frequencies (over every turn) and its questions.
function loadLocomo(path) {
  if (!existsSync(path)) throw new Error(`LoCoMo not found at ${path}; pass --locomo PATH or --corpus synthetic`);
  const freq = new Map();
  const questions = [];
  for (const sample of JSON.parse(readFileSync(path, 'utf8'))) {
    for (const [key, turns] of Object.entries(sample.conversation)) {
      if (!key.startsWith('session_') || !Array.isArray(turns)) continue;
      for (const t of turns) {
        if (typeof t.text !== 'string') continue;
        for (const w of t.text.toLowerCase().split(/[^a-z0-9']+/)) if (w) freq.set(w, (freq.get(w) || 0) + 1);
      }
    }
    for (const qa of sample.qa) if (typeof qa.question === 'string') questions.push(qa.question);
  }
  const words = [...freq.keys()];
  const cumulative = [];
  let total = 0;
  for (const w of words) cumulative.push((total += freq.get(w)));
  return { words, cumulative, total, questions };
}
// Records of 8..30 words drawn by frequency (as bench_data.cc's
// SyntheticRecords), numbered so that none repeats another.
function locomoSentences(corpus, n, seed) {
  const r = rng(seed);
  const pick = () => {
    const x = r() * corpus.total;
    let lo = 0;
    let hi = corpus.cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (corpus.cumulative[mid] > x) hi = mid;
      else lo = mid + 1;
    }
    return corpus.words[lo];
  };
  const out = [];
  for (let i = 0; i < n; ++i) {
    const len = 8 + Math.floor(r() * 23);
    const words = [];
    for (let j = 0; j < len; ++j) words.push(pick());
    out.push(`Note ${seed}-${i}: ${words.join(' ')}.`);
  }
  return out;
}
function locomoQuestions(corpus, n, seed) {
  const r = rng(seed);
  return Array.from({ length: n }, () => corpus.questions[Math.floor(r() * corpus.questions.length)]);
}
const locomo = args.corpus === 'locomo' ? loadLocomo(args.locomo) : null;

function percentile(samples, p) {
  const s = [...samples].sort((a, b) => a - b);
  if (!s.length) return NaN;
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}
function summary(samples) {
  const total = samples.reduce((a, b) => a + b, 0);
  return { n: samples.length, p50_ms: percentile(samples, 50), p99_ms: percentile(samples, 99),
           per_s: samples.length / (total / 1000) };
}
async function timed(n, call) {
  const samples = [];
  for (let i = 0; i < n; ++i) {
    const t0 = process.hrtime.bigint();
    await call(i);
    samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return summary(samples);
}

// Each call of `call` followed by a ping over the same connection: the
// floor measured beside the figure, with the client's JIT and the machine's
// load as they are for the calls (a ping run apart, before the calls, is
// slower while the client's code is still cold).
async function timedBeside(n, call, ping) {
  const samples = [];
  const floor = [];
  for (let i = 0; i < n; ++i) {
    const t0 = process.hrtime.bigint();
    await call(i);
    const t1 = process.hrtime.bigint();
    await ping();
    floor.push(Number(process.hrtime.bigint() - t1) / 1e6);
    samples.push(Number(t1 - t0) / 1e6);
  }
  return [summary(samples), summary(floor)];
}

const writeArgs = (text) => ({ text, kind: args.kind, tags: ['profile'] });

// The MCP calls every transport runs: ping (the floor), writes, searches.
async function runCalls(label, call, ping) {
  const texts = locomo ? locomoSentences(locomo, args.writes + args.preload + 20, 7)
                       : sentences(args.writes + args.preload + 20, 7);
  const queries = locomo ? locomoQuestions(locomo, args.searches, 11)
                         : sentences(args.searches, 11).map((q) => q.split(' ').slice(2, 6).join(' '));
  const check = (r) => {
    if (r.isError) throw new Error(`${label}: ${JSON.stringify(r.content)}`);
    return r;
  };
  for (let i = 0; i < 20; ++i) await ping();
  const pingStats = await timed(200, () => ping());
  for (let i = 0; i < 20; ++i) check(await call('memory_write', writeArgs(texts[i])));
  const [write, pingBesideWrites] =
      await timedBeside(args.writes, (i) => call('memory_write', writeArgs(texts[20 + i])).then(check), ping);
  for (let i = 0; i < args.preload; ++i) check(await call('memory_write', writeArgs(texts[20 + args.writes + i])));
  const records = 20 + args.writes + args.preload;
  for (let i = 0; i < 10; ++i) check(await call('memory_search', { query: queries[i % queries.length] }));
  const [search, pingBesideSearches] =
      await timedBeside(args.searches, (i) => call('memory_search', { query: queries[i] }).then(check), ping);
  return { transport: label, records, ping: pingStats, memory_write: write, ping_beside_writes: pingBesideWrites,
           memory_search: search, ping_beside_searches: pingBesideSearches };
}

function freshDir() {
  return mkdtempSync(join(process.env.MSP_BENCH_TMP || tmpdir(), 'msp-mcp-bench-'));
}

async function overSdkStdio() {
  const dir = freshDir();
  try {
    const transport = new StdioClientTransport({
      command: args.msp,
      args: ['mcp', '--data-dir', join(dir, 'data'), '--synchronous', args.synchronous],
      stderr: 'pipe',
    });
    const client = new Client({ name: 'msp-mcp-bench', version: '1.0.0' });
    await client.connect(transport);
    const out = await runCalls('stdio (SDK)', (name, a) => client.callTool({ name, arguments: a }), () => client.ping());
    await client.close();
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// The same calls as raw JSON-RPC lines: what msp costs without the SDK.
async function overRawStdio() {
  const dir = freshDir();
  const child = spawn(args.msp, ['mcp', '--data-dir', join(dir, 'data'), '--synchronous', args.synchronous], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise((done) => child.on('exit', done));
  const waiting = new Map();
  createInterface({ input: child.stdout }).on('line', (line) => {
    const m = JSON.parse(line);
    const w = waiting.get(m.id);
    if (w) {
      waiting.delete(m.id);
      w(m);
    }
  });
  let next = 1;
  const request = (method, params) => new Promise((done) => {
    const id = next++;
    waiting.set(id, done);
    child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
  });
  try {
    await request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } });
    child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
    return await runCalls('stdio (raw JSON-RPC lines)',
                          (name, a) => request('tools/call', { name, arguments: a }).then((m) => m.result),
                          () => request('ping', {}));
  } finally {
    child.stdin.end();
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

function startServe(dir) {
  return new Promise((done, fail) => {
    const child = spawn(args.msp, ['serve', '--data-dir', join(dir, 'data'), '--port', '0', '--allow-anonymous', 'true',
                                   '--access-log', 'false', '--synchronous', args.synchronous],
                        { stdio: ['ignore', 'ignore', 'pipe'] });
    let text = '';
    child.stderr.on('data', (chunk) => {
      text += chunk;
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(text);
      if (m) done({ child, url: m[1] });
    });
    child.on('exit', (code) => fail(new Error(`msp serve exited (${code}): ${text}`)));
  });
}

async function overHttp() {
  const dir = freshDir();
  const { child, url } = await startServe(dir);
  const exited = new Promise((done) => child.on('exit', done));
  try {
    const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`));
    const client = new Client({ name: 'msp-mcp-bench', version: '1.0.0' });
    await client.connect(transport);
    // Every fetch of the transport listens on its one AbortSignal until the
    // listener is collected: thousands of calls would print Node's leak
    // warning thousands of times (a bench artifact, not a leak of msp's).
    if (transport._abortController) setMaxListeners(0, transport._abortController.signal);
    const out = await runCalls('Streamable HTTP (SDK, msp serve)', (name, a) => client.callTool({ name, arguments: a }),
                               () => client.ping());
    await client.close();
    return out;
  } finally {
    child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

const runners = { stdio: overSdkStdio, raw: overRawStdio, http: overHttp };
const results = [];
const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');
console.log(`msp: ${args.msp}; corpus ${args.corpus}; synchronous=${args.synchronous}; kind=${args.kind}; writes ${args.writes}, ` +
            `searches ${args.searches}, preload ${args.preload}; load average before: ${load()}`);
const fmt = (s) => `p50 ${s.p50_ms.toFixed(3)} ms  p99 ${s.p99_ms.toFixed(3)} ms  (${s.per_s.toFixed(0)}/s)`;
for (const name of args.transports.split(',')) {
  if (!runners[name]) throw new Error(`unknown transport ${name} (stdio, raw, http)`);
  const r = await runners[name]();
  results.push(r);
  console.log(`\n${r.transport}, ${r.records} records at search time`);
  console.log(`  ping, before the calls      ${fmt(r.ping)}`);
  console.log(`  memory_write                ${fmt(r.memory_write)}   ` +
              `${(r.memory_write.p50_ms / r.ping_beside_writes.p50_ms).toFixed(1)}x the ping beside it`);
  console.log(`    ping beside each write    ${fmt(r.ping_beside_writes)}`);
  console.log(`  memory_search               ${fmt(r.memory_search)}   ` +
              `${(r.memory_search.p50_ms / r.ping_beside_searches.p50_ms).toFixed(1)}x the ping beside it`);
  console.log(`    ping beside each search   ${fmt(r.ping_beside_searches)}`);
}
console.log(`\nload average after: ${load()}`);
if (args.json) {
  writeFileSync(args.json, JSON.stringify({ args, load_after: loadavg(), results }, null, 2));
}
