// MCP over Streamable HTTP: the SDK client's StreamableHTTPClientTransport
// against a real endpoint (mcp_http_test_server), and raw fetch for the
// transport's rules (session header, status codes, Origin).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { connectHttp, initializeRequest, startHttpServer, startMspServe, tempDir } from './helpers.mjs';

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

async function post(url, body, headers = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { ...JSON_HEADERS, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

async function openSession(url, version = '2025-11-25', headers = {}) {
  const r = await post(url, initializeRequest(1, version), headers);
  assert.equal(r.status, 200);
  const sid = r.headers.get('mcp-session-id');
  assert.ok(sid);
  return { sid, result: r.body.result };
}

describe('Streamable HTTP', () => {
  let scratch;
  let server;
  before(async () => {
    scratch = tempDir('mcp-http');
    server = await startHttpServer(`${scratch.dir}/data`, ['--allowed-origin', 'https://app.example.com']);
  });
  after(async () => {
    await server?.close();
    scratch?.cleanup();
  });

  test('the SDK client: initialize, tools, and session termination', async () => {
    const { client, transport } = await connectHttp(server.url);
    assert.equal(client.getServerVersion().name, 'msp');
    assert.ok(transport.sessionId);
    assert.equal(transport.protocolVersion, '2025-11-25');
    const { tools } = await client.listTools();
    assert.ok(tools.length >= 13);

    const written = await client.callTool({
      name: 'memory_write',
      arguments: { text: 'The staging database is rebuilt every night at 02:00', tags: ['constraint'] },
    });
    assert.equal(written.isError, false);
    const found = await client.callTool({ name: 'memory_search', arguments: { query: 'staging database rebuilt' } });
    assert.equal(found.structuredContent.hits[0].memory.id, written.structuredContent.id);

    const created = await client.callTool({
      name: 'create_entities', arguments: { entities: [{ name: 'Staging', entityType: 'env', observations: [] }] },
    });
    assert.equal(created.structuredContent.entities.length, 1);
    const failed = await client.callTool({
      name: 'add_observations', arguments: { observations: [{ entityName: 'Prod', contents: ['x'] }] },
    });
    assert.equal(failed.isError, true);

    const sid = transport.sessionId;
    await transport.terminateSession();  // DELETE
    const after = await post(server.url, { jsonrpc: '2.0', id: 2, method: 'ping' }, { 'mcp-session-id': sid });
    assert.equal(after.status, 404);
    await client.close();
  });

  test('2025-06-18 is echoed and carried in MCP-Protocol-Version', async () => {
    const { sid, result } = await openSession(server.url, '2025-06-18');
    assert.equal(result.protocolVersion, '2025-06-18');
    const r = await post(server.url, { jsonrpc: '2.0', id: 0, method: 'ping' },
      { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { jsonrpc: '2.0', id: 0, result: {} });
    const bad = await post(server.url, { jsonrpc: '2.0', id: 1, method: 'ping' },
      { 'mcp-session-id': sid, 'mcp-protocol-version': '1999-01-01' });
    assert.equal(bad.status, 400);
  });

  test('session header rules: 400 without, 404 unknown, 202 for notifications, DELETE, GET 405', async () => {
    const { sid } = await openSession(server.url);
    let r = await post(server.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': sid });
    assert.equal(r.status, 202);
    assert.equal(r.body, null);
    r = await post(server.url, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    assert.equal(r.status, 400);
    r = await post(server.url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'mcp-session-id': 'nope' });
    assert.equal(r.status, 404);
    r = await post(server.url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'mcp-session-id': sid });
    assert.equal(r.status, 200);
    assert.ok(r.body.result.tools.length >= 13);

    const get = await fetch(server.url, { headers: { accept: 'text/event-stream', 'mcp-session-id': sid } });
    assert.equal(get.status, 405);
    assert.equal(get.headers.get('allow'), 'POST, DELETE');

    let del = await fetch(server.url, { method: 'DELETE' });
    assert.equal(del.status, 400);
    del = await fetch(server.url, { method: 'DELETE', headers: { 'mcp-session-id': sid } });
    assert.equal(del.status, 204);
    del = await fetch(server.url, { method: 'DELETE', headers: { 'mcp-session-id': sid } });
    assert.equal(del.status, 404);
  });

  test('-32601, batches and parse errors', async () => {
    const { sid } = await openSession(server.url);
    let r = await post(server.url, { jsonrpc: '2.0', id: 'd', method: 'server/discover' }, { 'mcp-session-id': sid });
    assert.equal(r.status, 200);
    assert.equal(r.body.id, 'd');
    assert.equal(r.body.error.code, -32601);
    r = await post(server.url, [{ jsonrpc: '2.0', id: 1, method: 'ping' }], { 'mcp-session-id': sid });
    assert.equal(r.status, 400);
    assert.equal(r.body.error.code, -32600);
    r = await post(server.url, '{"jsonrpc":', { 'mcp-session-id': sid });
    assert.equal(r.status, 400);
    assert.equal(r.body.error.code, -32700);
  });

  test('Origin: loopback and the allow-list pass, others get 403', async () => {
    let r = await post(server.url, initializeRequest(1, '2025-11-25'), { origin: 'https://evil.example' });
    assert.equal(r.status, 403);
    r = await post(server.url, initializeRequest(1, '2025-11-25'), { origin: 'http://localhost:6274' });
    assert.equal(r.status, 200);
    r = await post(server.url, initializeRequest(1, '2025-11-25'), { origin: 'https://app.example.com' });
    assert.equal(r.status, 200);
  });

  test('two HTTP clients adding observations at once lose nothing', async () => {
    const a = await connectHttp(server.url);
    const b = await connectHttp(server.url);
    try {
      await a.client.callTool({
        name: 'create_entities', arguments: { entities: [{ name: 'Counter', entityType: 'thing', observations: [] }] },
      });
      const perClient = 20;
      const burst = (conn, tag) => Promise.all(Array.from({ length: perClient }, (_, i) => conn.client.callTool({
        name: 'add_observations', arguments: { observations: [{ entityName: 'Counter', contents: [`${tag}-${i}`] }] },
      })));
      const results = (await Promise.all([burst(a, 'a'), burst(b, 'b')])).flat();
      for (const r of results) assert.equal(r.isError, false, r.content?.[0]?.text);
      const opened = await b.client.callTool({ name: 'open_nodes', arguments: { names: ['Counter'] } });
      assert.equal(opened.structuredContent.entities[0].observations.length, 2 * perClient);
    } finally {
      await a.client.close();
      await b.client.close();
    }
  });
});

describe('Streamable HTTP with API keys', () => {
  let scratch;
  let server;
  before(async () => {
    scratch = tempDir('mcp-http-keys');
    server = await startHttpServer(`${scratch.dir}/data`, ['--key', 'key-a=tenant-a', '--key', 'key-b=tenant-b']);
  });
  after(async () => {
    await server?.close();
    scratch?.cleanup();
  });

  test('no key, no session; each key sees only its tenant', async () => {
    await assert.rejects(connectHttp(server.url));
    const a = await connectHttp(server.url, { authorization: 'Bearer key-a' });
    const b = await connectHttp(server.url, { authorization: 'Bearer key-b' });
    try {
      await a.client.callTool({
        name: 'create_entities', arguments: { entities: [{ name: 'Secret', entityType: 'plan', observations: ['of tenant a'] }] },
      });
      const seenByB = await b.client.callTool({ name: 'open_nodes', arguments: { names: ['Secret'] } });
      assert.deepEqual(seenByB.structuredContent.entities, []);
      const seenByA = await a.client.callTool({ name: 'open_nodes', arguments: { names: ['Secret'] } });
      assert.equal(seenByA.structuredContent.entities.length, 1);
      // b's key cannot ride a's session.
      const r = await post(server.url, { jsonrpc: '2.0', id: 1, method: 'ping' },
        { 'mcp-session-id': a.transport.sessionId, authorization: 'Bearer key-b' });
      assert.equal(r.status, 404);
    } finally {
      await a.client.close();
      await b.client.close();
    }
  });
});

describe('msp serve answers MCP at /mcp', () => {
  let scratch;
  let server;
  before(async () => {
    scratch = tempDir('mcp-serve');
    server = await startMspServe(`${scratch.dir}/data`, ['--api-keys', 'serve-key-0123456789=acme']);
  });
  after(async () => {
    await server?.close();
    scratch?.cleanup();
  });

  test('with its API keys, through the SDK client', async () => {
    await assert.rejects(connectHttp(server.url));
    const { client, transport } = await connectHttp(server.url, { authorization: 'Bearer serve-key-0123456789' });
    try {
      const { tools } = await client.listTools();
      for (const name of ['memory_write', 'memory_search', 'create_entities', 'read_graph', 'workflow_memory_query']) {
        assert.ok(tools.some((t) => t.name === name), name);
      }
      const created = await client.callTool({
        name: 'create_entities', arguments: { entities: [{ name: 'Served', entityType: 'thing', observations: ['via msp serve'] }] },
      });
      assert.equal(created.structuredContent.entities.length, 1);
      const found = await client.callTool({ name: 'search_nodes', arguments: { query: 'served' } });
      assert.deepEqual(found.structuredContent.entities.map((e) => e.name), ['Served']);
      await transport.terminateSession();
    } finally {
      await client.close();
    }
  });
});
