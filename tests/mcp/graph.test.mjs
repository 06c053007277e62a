// The nine knowledge-graph tools against the reference server
// (@modelcontextprotocol/server-memory, run beside msp with the same SDK
// client): the same tool names, input schemas, result shapes and results;
// then what msp adds (paging, a limit) and what it fixes (concurrent
// writers).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { connectReference, connectStdio, tempDir } from './helpers.mjs';

const GRAPH_TOOLS = ['create_entities', 'create_relations', 'add_observations', 'delete_entities',
  'delete_observations', 'delete_relations', 'read_graph', 'search_nodes', 'open_nodes'];

const byName = (a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
const relKey = (r) => `${r.from}\u0000${r.relationType}\u0000${r.to}`;
const byRel = (a, b) => (relKey(a) < relKey(b) ? -1 : relKey(a) > relKey(b) ? 1 : 0);
// A graph with entities and relations in a canonical order (the reference
// keeps insertion order, msp sorts).
const canonical = (g) => ({
  ...g,
  entities: [...g.entities].sort(byName),
  relations: [...g.relations].sort(byRel),
});

describe('drop-in compatibility with @modelcontextprotocol/server-memory', () => {
  let scratch;
  let msp;
  let ref;
  before(async () => {
    scratch = tempDir('mcp-graph');
    msp = await connectStdio(`${scratch.dir}/data`);
    ref = await connectReference(`${scratch.dir}/reference.jsonl`);
  });
  after(async () => {
    await msp?.client.close();
    await ref?.client.close();
    scratch?.cleanup();
  });

  test('the same nine tools with the same input and output schemas', async () => {
    const mine = new Map((await msp.client.listTools()).tools.map((t) => [t.name, t]));
    const theirs = new Map((await ref.client.listTools()).tools.map((t) => [t.name, t]));
    for (const name of GRAPH_TOOLS) {
      const a = mine.get(name);
      const b = theirs.get(name);
      assert.ok(a, `msp lacks ${name}`);
      assert.ok(b, `the reference lacks ${name}`);
      assert.equal(a.title, b.title, name);
      assert.deepEqual(a.annotations, b.annotations, name);
      assert.deepEqual(a.inputSchema.required ?? [], b.inputSchema.required ?? [], name);
      // Every reference property is there with the same type; msp may add
      // optional ones (read_graph: cursor, limit; search_nodes: limit).
      for (const [prop, schema] of Object.entries(b.inputSchema.properties ?? {})) {
        assert.ok(a.inputSchema.properties?.[prop], `${name}.${prop}`);
        assert.equal(a.inputSchema.properties[prop].type, schema.type, `${name}.${prop}`);
        if (schema.items?.required) {
          assert.deepEqual(a.inputSchema.properties[prop].items.required, schema.items.required, `${name}.${prop}`);
        }
      }
      assert.deepEqual(Object.keys(a.outputSchema.properties).filter((k) => k !== 'nextCursor').sort(),
        Object.keys(b.outputSchema.properties).sort(), name);
      assert.deepEqual(a.outputSchema.required, b.outputSchema.required, name);
    }
  });

  // Runs one call on both servers; returns [msp result, reference result].
  async function both(name, args) {
    const a = await msp.client.callTool({ name, arguments: args });
    const b = await ref.client.callTool({ name, arguments: args });
    return [a, b];
  }

  test('the same results for the same calls', async () => {
    const entities = [
      { name: 'Alice', entityType: 'person', observations: ['plays chess', 'lives in Lyon'] },
      { name: 'Bob', entityType: 'person', observations: [] },
      { name: 'Acme', entityType: 'company', observations: ['makes anvils'] },
    ];
    let [a, b] = await both('create_entities', { entities });
    assert.deepEqual(a.structuredContent, b.structuredContent);
    assert.deepEqual(JSON.parse(a.content[0].text), JSON.parse(b.content[0].text));  // the array itself

    // A name that exists already is not created again.
    [a, b] = await both('create_entities', { entities: [{ name: 'Alice', entityType: 'robot', observations: [] }] });
    assert.deepEqual(a.structuredContent, { entities: [] });
    assert.deepEqual(a.structuredContent, b.structuredContent);

    const relations = [
      { from: 'Alice', to: 'Acme', relationType: 'works at' },
      { from: 'Bob', to: 'Alice', relationType: 'knows' },
    ];
    [a, b] = await both('create_relations', { relations });
    assert.deepEqual(a.structuredContent, b.structuredContent);
    [a, b] = await both('create_relations', { relations: [relations[0]] });
    assert.deepEqual(a.structuredContent, { relations: [] });
    assert.deepEqual(a.structuredContent, b.structuredContent);

    [a, b] = await both('add_observations', {
      observations: [{ entityName: 'Bob', contents: ['plays chess', 'owns a cat'] },
        { entityName: 'Alice', contents: ['plays chess', 'speaks French'] }],
    });
    assert.deepEqual(a.structuredContent, b.structuredContent);
    assert.deepEqual(a.structuredContent.results[1].addedObservations, ['speaks French']);

    [a, b] = await both('add_observations', { observations: [{ entityName: 'Nobody', contents: ['x'] }] });
    assert.equal(a.isError, true);
    assert.equal(b.isError, true);
    assert.match(a.content[0].text, /Entity with name Nobody not found/);
    assert.match(b.content[0].text, /Entity with name Nobody not found/);

    [a, b] = await both('open_nodes', { names: ['Bob', 'Nobody'] });
    assert.deepEqual(canonical(a.structuredContent), canonical(b.structuredContent));
    assert.equal(a.structuredContent.relations.length, 1);

    // A whole-word query finds the same nodes.
    [a, b] = await both('search_nodes', { query: 'chess' });
    assert.deepEqual(canonical(a.structuredContent), canonical(b.structuredContent));
    assert.deepEqual(a.structuredContent.entities.map((e) => e.name).sort(), ['Alice', 'Bob']);
    // So does a part of a name.
    [a, b] = await both('search_nodes', { query: 'Bo' });
    assert.deepEqual(canonical(a.structuredContent), canonical(b.structuredContent));
    // Exactly what the reference finds: a substring, not a word ("acm" is
    // in "Acme" only, not in the relation "Alice works at Acme").
    [a, b] = await both('search_nodes', { query: 'acm' });
    assert.deepEqual(b.structuredContent.entities.map((e) => e.name), ['Acme']);
    assert.deepEqual(canonical(a.structuredContent), canonical(b.structuredContent));
    for (const query of ['', 'CHESS', 'nothing at all', 'e', 'works at', 'anvils ']) {
      [a, b] = await both('search_nodes', { query });
      assert.deepEqual(canonical(a.structuredContent), canonical(b.structuredContent), query);
    }

    [a, b] = await both('delete_observations', { deletions: [{ entityName: 'Alice', observations: ['lives in Lyon'] }] });
    assert.deepEqual(a.structuredContent, b.structuredContent);
    assert.equal(a.content[0].text, b.content[0].text);
    [a, b] = await both('delete_relations', { relations: [relations[1]] });
    assert.deepEqual(a.structuredContent, b.structuredContent);
    assert.equal(a.content[0].text, b.content[0].text);

    [a, b] = await both('read_graph', {});
    assert.deepEqual(canonical(a.structuredContent), canonical(b.structuredContent));
    assert.equal(a.structuredContent.nextCursor, undefined);  // small graphs fit one page

    [a, b] = await both('delete_entities', { entityNames: ['Acme'] });
    assert.deepEqual(a.structuredContent, b.structuredContent);
    assert.equal(a.content[0].text, b.content[0].text);
    [a, b] = await both('read_graph', {});
    assert.deepEqual(canonical(a.structuredContent), canonical(b.structuredContent));
    assert.equal(a.structuredContent.relations.length, 0);  // the Acme relation went with it
    assert.equal(a.structuredContent.entities.length, 2);
  });
});

describe('what msp adds', () => {
  let scratch;
  before(() => { scratch = tempDir('mcp-graph-more'); });
  after(() => scratch?.cleanup());

  test('read_graph pages: limit, nextCursor, and the configured default page size', async () => {
    const msp = await connectStdio(`${scratch.dir}/paged`, ['--mcp-read-graph-page-size', '4']);
    try {
      const entities = Array.from({ length: 9 }, (_, i) => ({
        name: `node-${String(i).padStart(2, '0')}`, entityType: 'thing', observations: [`fact ${i}`],
      }));
      await msp.client.callTool({ name: 'create_entities', arguments: { entities } });
      await msp.client.callTool({
        name: 'create_relations',
        arguments: { relations: [{ from: 'node-00', to: 'node-01', relationType: 'next' },
          { from: 'node-01', to: 'node-02', relationType: 'next' }] },
      });
      // The default page (4 here), then pages of 3 by the caller's limit.
      let page = await msp.client.callTool({ name: 'read_graph', arguments: {} });
      assert.equal(page.structuredContent.entities.length, 4);
      const seen = [...page.structuredContent.entities];
      const relations = [];
      let cursor = page.structuredContent.nextCursor;
      let pages = 1;
      while (cursor) {
        page = await msp.client.callTool({ name: 'read_graph', arguments: { cursor, limit: 3 } });
        assert.ok(page.structuredContent.entities.length + page.structuredContent.relations.length <= 3);
        seen.push(...page.structuredContent.entities);
        relations.push(...page.structuredContent.relations);
        cursor = page.structuredContent.nextCursor;
        pages += 1;
      }
      assert.equal(pages, 4);  // 4 + 3 + 3 + 1 items
      assert.deepEqual(seen.map((e) => e.name), entities.map((e) => e.name));
      assert.equal(relations.length, 2);
      const bad = await msp.client.callTool({ name: 'read_graph', arguments: { cursor: 'nonsense!' } });
      assert.equal(bad.isError, true);
    } finally {
      await msp.client.close();
    }
  });

  test('search_nodes finds what the reference finds for tricky queries, by name, at most limit', async () => {
    const msp = await connectStdio(`${scratch.dir}/search`);
    const ref = await connectReference(`${scratch.dir}/search-reference.jsonl`);
    try {
      const entities = [
        { name: 'Straße', entityType: 'Ort', observations: ['İstanbul trip'] },
        { name: 'ΟΔΟΣ', entityType: 'δρόμος', observations: [] },
        { name: 'ΣΟΦΙΑ', entityType: 'name', observations: ['ὈΔΥΣΣΕΎΣ.'] },
        { name: 'École', entityType: 'place', observations: ['🙂 smile', 'ǅemal'] },
        { name: 'Kafka', entityType: 'service', observations: ['message broker'] },
        { name: 'Billing', entityType: 'service', observations: ['reads the Kafka topic', 'writes invoices to Kafka'] },
      ];
      for (const c of [msp, ref]) await c.client.callTool({ name: 'create_entities', arguments: { entities } });
      const relations = [{ from: 'Billing', to: 'Kafka', relationType: 'reads' }];
      for (const c of [msp, ref]) await c.client.callTool({ name: 'create_relations', arguments: { relations } });
      const queries = ['', 'STRASSE', 'straß', 'İST', 'ist', 'İ', 'Σ', 'ΟΣ', 'ς', 'ΣΣ', 'ύς.', 'ÉCO', '🙂 S', 'ǆ',
        'DŽEMAL', 'kafka', 'KAFKA TOPIC', 'Kafka message broker', 'service', 'e', 'zz', 'ka', 'nameplace'];
      for (const query of queries) {
        const a = await msp.client.callTool({ name: 'search_nodes', arguments: { query, limit: 1000 } });
        const b = await ref.client.callTool({ name: 'search_nodes', arguments: { query } });
        assert.deepEqual(canonical(a.structuredContent), canonical(b.structuredContent), JSON.stringify(query));
        // msp's order: by name.
        const names = a.structuredContent.entities.map((e) => e.name);
        assert.deepEqual(names, [...names].sort(), JSON.stringify(query));
      }
      const limited = await msp.client.callTool({ name: 'search_nodes', arguments: { query: 'service', limit: 1 } });
      assert.deepEqual(limited.structuredContent.entities.map((e) => e.name), ['Billing']);
      assert.deepEqual(limited.structuredContent.relations, relations);
    } finally {
      await msp.client.close();
      await ref.client.close();
    }
  });

  test('two processes adding observations to one entity lose nothing', async () => {
    const dataDir = `${scratch.dir}/shared`;
    const first = await connectStdio(dataDir);
    const second = await connectStdio(dataDir);
    try {
      await first.client.callTool({
        name: 'create_entities', arguments: { entities: [{ name: 'Shared', entityType: 'thing', observations: [] }] },
      });
      const perClient = 25;
      // Each client keeps several calls in flight; the two processes race.
      const writer = async (conn, tag) => {
        const calls = [];
        for (let i = 0; i < perClient; i++) {
          calls.push(conn.client.callTool({
            name: 'add_observations',
            arguments: { observations: [{ entityName: 'Shared', contents: [`${tag} note ${i}`] }] },
          }));
        }
        const results = await Promise.all(calls);
        for (const r of results) assert.equal(r.isError, false, r.content?.[0]?.text);
        return results;
      };
      await Promise.all([writer(first, 'first'), writer(second, 'second')]);
      const opened = await first.client.callTool({ name: 'open_nodes', arguments: { names: ['Shared'] } });
      const observations = opened.structuredContent.entities[0].observations;
      assert.equal(observations.length, 2 * perClient);
      for (let i = 0; i < perClient; i++) {
        assert.ok(observations.includes(`first note ${i}`));
        assert.ok(observations.includes(`second note ${i}`));
      }
      // Both processes also created the same new entity at once: one wins.
      const created = await Promise.all([first, second].map((c) => c.client.callTool({
        name: 'create_entities', arguments: { entities: [{ name: 'Once', entityType: 'thing', observations: [] }] },
      })));
      assert.equal(created.map((r) => r.structuredContent.entities.length).reduce((x, y) => x + y), 1);
    } finally {
      await first.client.close();
      await second.client.close();
    }
  });
});
