// `msp mcp` over stdio: the official SDK client, and raw JSON-RPC lines for
// what the SDK client never sends (other protocol versions, batches, bad JSON).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { connectStdio, initializeRequest, rawStdio, tempDir } from './helpers.mjs';

const MSP_TOOLS = ['memory_write', 'memory_search', 'episode_add', 'fact_history', 'memory_get', 'memory_history',
  'memory_delete', 'memory_list', 'session_steps', 'session_end'];
const GRAPH_TOOLS = ['create_entities', 'create_relations', 'add_observations', 'delete_entities',
  'delete_observations', 'delete_relations', 'read_graph', 'search_nodes', 'open_nodes'];

describe('msp mcp with the SDK client (stdio)', () => {
  let scratch;
  let conn;
  before(async () => {
    scratch = tempDir('mcp-stdio');
    conn = await connectStdio(`${scratch.dir}/data`, ['--tenant', 'acme', '--user', 'ann']);
  });
  after(async () => {
    await conn?.client.close();
    scratch?.cleanup();
  });

  test('initialize: server info and the tools capability', () => {
    assert.equal(conn.client.getServerVersion().name, 'msp');
    assert.deepEqual(conn.client.getServerCapabilities().tools, { listChanged: false });
    assert.match(conn.client.getInstructions(), /memory/);
  });

  test('tools/list: every tool with an input and an output schema', async () => {
    const { tools } = await conn.client.listTools();
    const names = tools.map((t) => t.name);
    for (const name of [...MSP_TOOLS, ...GRAPH_TOOLS]) assert.ok(names.includes(name), name);
    for (const t of tools) {
      assert.equal(t.inputSchema.type, 'object', t.name);
      assert.equal(t.outputSchema.type, 'object', t.name);
      assert.ok(t.description.length > 0, t.name);
    }
    const write = tools.find((t) => t.name === 'memory_write');
    assert.deepEqual(write.inputSchema.required, ['text']);
    assert.equal(write.inputSchema.additionalProperties, false);
  });

  test('memory_write, memory_search, fact_history', async () => {
    // The SDK client checks structuredContent against each outputSchema.
    const refused = await conn.client.callTool({ name: 'memory_write', arguments: { text: 'ok' } });
    assert.equal(refused.isError, true);
    assert.match(refused.content[0].text, /^refused: /);

    const written = await conn.client.callTool({
      name: 'memory_write',
      arguments: { text: 'Ann deploys the billing service every Friday afternoon', tags: ['constraint'] },
    });
    assert.equal(written.isError, false);
    const { id } = written.structuredContent;
    assert.match(id, /^[0-9a-f-]{36}$/);
    // The text block holds the same JSON.
    assert.deepEqual(JSON.parse(written.content[0].text), written.structuredContent);

    const found = await conn.client.callTool({
      name: 'memory_search', arguments: { query: 'when is the billing service deployed', top_k: 5 },
    });
    assert.equal(found.isError, false);
    assert.equal(found.structuredContent.hits[0].memory.id, id);
    assert.equal(found.structuredContent.hits[0].memory.kind, 'fact');
    assert.ok(found.structuredContent.hits[0].score > 0);

    const history = await conn.client.callTool({ name: 'fact_history', arguments: { id } });
    assert.equal(history.structuredContent.count, 1);
    assert.equal(history.structuredContent.versions[0].id, id);

    const missing = await conn.client.callTool({
      name: 'fact_history', arguments: { id: '0190a0a0-0000-7000-8000-000000000000' },
    });
    assert.equal(missing.isError, true);
    assert.match(missing.content[0].text, /^not_found: /);
  });

  test("an agent's plain note is stored, tagged note and labelled agent (untrusted)", async () => {
    const note = await conn.client.callTool({
      name: 'memory_write', arguments: { text: 'Remember: the integration tests need Docker running' },
    });
    assert.equal(note.isError, false, note.content[0].text);
    assert.deepEqual(note.structuredContent.tags, ['note']);
    assert.equal(note.structuredContent.source, 'agent');
    const found = await conn.client.callTool({
      name: 'memory_search', arguments: { query: 'what do the integration tests need', top_k: 1 },
    });
    assert.equal(found.structuredContent.hits[0].memory.id, note.structuredContent.id);
    assert.equal(found.structuredContent.hits[0].trust, 'untrusted');
  });

  test('memory_get opens a record by id, memory_history lists it, memory_delete removes it', async () => {
    const note = await conn.client.callTool({
      name: 'memory_write', arguments: { text: 'The nightly backup of the wiki runs at three', tags: ['note'] },
    });
    assert.equal(note.isError, false, note.content[0].text);
    const id = note.structuredContent.id;
    const got = await conn.client.callTool({ name: 'memory_get', arguments: { id } });
    assert.equal(got.isError, false, got.content[0].text);
    assert.equal(got.structuredContent.text, 'The nightly backup of the wiki runs at three');
    assert.equal(got.structuredContent.trust, 'untrusted');
    const history = await conn.client.callTool({ name: 'memory_history', arguments: { id } });
    assert.deepEqual(history.structuredContent.versions.map((v) => v.id), [id]);
    const deleted = await conn.client.callTool({ name: 'memory_delete', arguments: { id, reason: 'test' } });
    assert.deepEqual(deleted.structuredContent, { id, deleted: true });
    const gone = await conn.client.callTool({ name: 'memory_get', arguments: { id } });
    assert.equal(gone.isError, true);
    assert.match(gone.content[0].text, /^not_found: /);
  });

  test('episode_add numbers the steps of a session', async () => {
    const first = await conn.client.callTool({
      name: 'episode_add', arguments: { namespace: { session: 's1' }, text: 'The user asked to rotate the API keys' },
    });
    assert.equal(first.isError, false);
    assert.equal(first.structuredContent.step_number, 1);
    const second = await conn.client.callTool({
      name: 'episode_add',
      arguments: { namespace: { session: 's1' }, type: 'tool_call', tool_name: 'bash', content: { cmd: 'rotate-keys' } },
    });
    assert.equal(second.structuredContent.step_number, 2);
    const noSession = await conn.client.callTool({ name: 'episode_add', arguments: { text: 'x' } });
    assert.equal(noSession.isError, true);
    assert.match(noSession.content[0].text, /session/);
  });

  test('invalid arguments are tool errors the model can read', async () => {
    const bad = await conn.client.callTool({ name: 'memory_search', arguments: { query: 'x', top_k: 0 } });
    assert.equal(bad.isError, true);
    // memory_search decodes with src/api's table: the error REST and the command line give too.
    assert.equal(bad.content[0].text, "invalid_argument: field 'top_k' must be between 1 and 1000, got 0");
    // memory_write too (src/api): an unknown field is named, with the fields it has.
    const typo = await conn.client.callTool({ name: 'memory_write', arguments: { txt: 'hello' } });
    assert.equal(typo.isError, true);
    assert.match(typo.content[0].text, /^invalid_argument: unknown field 'txt'; known fields are text, /);
    const missing = await conn.client.callTool({ name: 'memory_write', arguments: { tags: ['note'] } });
    assert.equal(missing.isError, true);
    assert.equal(missing.content[0].text, "invalid_argument: field 'text' is required");
  });

  test('an unknown tool is a protocol error', async () => {
    await assert.rejects(conn.client.callTool({ name: 'no_such_tool', arguments: {} }), /-32602|unknown tool/);
  });

  test('log lines go to stderr, never to stdout', () => {
    assert.match(conn.stderr(), /msp mcp: serving .* on stdio/);
  });
});

describe('msp mcp --mcp-tools core (stdio)', () => {
  test('lists the core memory tools and names the profile of the others', async () => {
    const scratch = tempDir('mcp-core');
    const core = await connectStdio(`${scratch.dir}/data`, ['--mcp-tools', 'core']);
    try {
      const { tools } = await core.client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), [...MSP_TOOLS].sort());
      await assert.rejects(core.client.callTool({ name: 'read_graph', arguments: {} }),
        /not offered by the tool profile 'core'/);
    } finally {
      await core.client.close();
      scratch.cleanup();
    }
  });
});

describe('msp mcp with raw JSON-RPC lines (stdio)', () => {
  let scratch;
  before(() => { scratch = tempDir('mcp-raw'); });
  after(() => scratch?.cleanup());

  test('both protocol revisions are echoed; an unknown one gets the latest', async () => {
    for (const version of ['2025-11-25', '2025-06-18', '2024-11-05']) {
      const raw = rawStdio(`${scratch.dir}/data`);
      raw.send(initializeRequest(1, version));
      const reply = await raw.next();
      assert.equal(reply.id, 1);
      assert.equal(reply.result.protocolVersion, version === '2024-11-05' ? '2025-11-25' : version);
      assert.equal(await raw.close(), 0);
    }
  });

  test('id 0, string ids, -32601, batches, parse errors, notifications', async () => {
    const raw = rawStdio(`${scratch.dir}/data`);
    raw.send(initializeRequest(0, '2025-06-18'));
    assert.equal((await raw.next()).id, 0);
    raw.send({ jsonrpc: '2.0', method: 'notifications/initialized' });  // no reply
    raw.send({ jsonrpc: '2.0', id: 'probe', method: 'server/discover' });
    let reply = await raw.next();
    assert.equal(reply.id, 'probe');
    assert.equal(reply.error.code, -32601);

    raw.send([{ jsonrpc: '2.0', id: 2, method: 'ping' }, { jsonrpc: '2.0', id: 3, method: 'ping' }]);
    reply = await raw.next();
    assert.equal(reply.error.code, -32600);
    assert.equal(reply.id, null);
    assert.match(reply.error.message, /batches are not supported/);

    raw.send('{"jsonrpc": "2.0", "id": 4,');
    reply = await raw.next();
    assert.equal(reply.error.code, -32700);

    raw.send({ jsonrpc: '2.0', id: 0, method: 'ping' });
    reply = await raw.next();
    assert.deepEqual(reply, { jsonrpc: '2.0', id: 0, result: {} });

    raw.send({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'read_graph', arguments: [] } });
    reply = await raw.next();
    assert.equal(reply.error.code, -32602);
    assert.equal(await raw.close(), 0);
  });
});
