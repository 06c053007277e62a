// Makes a graph store of N entities and N relations (graph_bench.mjs's
// workload) in DIR through `msp mcp`, and writes DIR.requests: JSON-RPC
// lines of 400 search_nodes calls of the "common" shape, for profiling one
// msp process answering them (bench/README.md, "Knowledge-graph tools"):
//   node bench/graph_store.mjs build/rel/src/cli/msp /tmp/g10k 10000
//   perf record --call-graph dwarf build/rel/src/cli/msp mcp --data-dir /tmp/g10k < /tmp/g10k.requests > /dev/null
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
const [,, msp, dir, n = '10000'] = process.argv;
let seed = 12345;
const rand = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
const pick = (a) => a[Math.floor(rand() * a.length)];
const WORDS = ['deploys', 'billing', 'service', 'reads', 'writes', 'kafka', 'topic', 'owner', 'team', 'python',
  'migrates', 'database', 'schema', 'latency', 'budget', 'roadmap', 'customer', 'invoice', 'weekly', 'report',
  'Zürich', 'café', 'naïve', 'ÉCOLE', 'Straße'];
const TYPES = ['person', 'service', 'team', 'project', 'document', 'meeting', 'customer', 'vendor', 'server', 'ticket'];
const NAME = (i) => `entity-${String(i).padStart(5, '0')}`;
const N = Number(n);
const lines = [JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
  JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })];
let id = 1;
for (let i = 0; i < N; i += 100) {
  const entities = [];
  for (let j = i; j < Math.min(N, i + 100); j++) {
    const observations = [];
    for (let k = 0; k < 3; k++) observations.push(`${pick(WORDS)} ${pick(WORDS)} ${pick(WORDS)} ${pick(WORDS)}`);
    observations.push(`code K${(j * 7919) % 1000003}Q`);
    entities.push({ name: NAME(j), entityType: TYPES[j % TYPES.length], observations });
  }
  lines.push(JSON.stringify({ jsonrpc: '2.0', id: id++, method: 'tools/call', params: { name: 'create_entities', arguments: { entities } } }));
}
for (let i = 0; i < N; i += 100) {
  const relations = [];
  for (let j = i; j < Math.min(N, i + 100); j++) relations.push({ from: NAME(j), to: NAME((j * 7 + 1) % N), relationType: pick(['knows', 'uses', 'owns']) });
  lines.push(JSON.stringify({ jsonrpc: '2.0', id: id++, method: 'tools/call', params: { name: 'create_relations', arguments: { relations } } }));
}
const r = spawnSync(msp, ['mcp', '--data-dir', dir], { input: lines.join('\n') + '\n', maxBuffer: 1 << 30 });
console.log('load rc', r.status, String(r.stderr).slice(0, 200));
const q = [lines[0], lines[1]];
for (let i = 0; i < 400; i++) q.push(JSON.stringify({ jsonrpc: '2.0', id: 1000 + i, method: 'tools/call', params: { name: 'search_nodes', arguments: { query: `K${(i % 9) + 1}1`, limit: 1000 } } }));
writeFileSync(dir + '.requests', q.join('\n') + '\n');
