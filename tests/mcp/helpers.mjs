// Shared helpers of the Node MCP tests: scratch directories, the msp
// binaries (paths from ctest's environment), clients of the official SDK,
// and a line reader for raw stdio exchanges.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

function requiredEnv(name) {
  const value = process.env[name];
  assert.ok(value, `${name} is not set: run these tests through ctest (tests/mcp/CMakeLists.txt)`);
  return value;
}

export const mspBin = () => requiredEnv('MSP_BIN');
export const httpServerBin = () => requiredEnv('MSP_MCP_HTTP_SERVER');

// A new scratch directory, removed by the returned cleanup function.
export function tempDir(prefix) {
  const base = process.env.MSP_TEST_TMP || tmpdir();
  mkdirSync(base, { recursive: true });
  const dir = mkdtempSync(join(base, `${prefix}-`));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

// The MCP SDK client over stdio against `msp mcp --data-dir DIR ARGS...`.
export async function connectStdio(dataDir, args = []) {
  const transport = new StdioClientTransport({
    command: mspBin(),
    args: ['mcp', '--data-dir', dataDir, '--synchronous', 'normal', ...args],
    env: { ...process.env },  // keeps ASAN_OPTIONS and friends
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk) => { stderr += chunk; });
  const client = new Client({ name: 'msp-node-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport, stderr: () => stderr };
}

// The reference server (@modelcontextprotocol/server-memory) over stdio,
// keeping its graph in `file`.
export async function connectReference(file) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [new URL('./node_modules/@modelcontextprotocol/server-memory/dist/index.js', import.meta.url).pathname],
    env: { ...process.env, MEMORY_FILE_PATH: file },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'msp-node-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

// Starts mcp_http_test_server; resolves to { url, close }.
export function startHttpServer(dataDir, args = []) {
  return new Promise((resolve, reject) => {
    const child = spawn(httpServerBin(), ['--data-dir', dataDir, ...args], {
      env: process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => { stderr += chunk; });
    child.on('error', reject);
    const exited = new Promise((done) => child.on('exit', (code) => done(code)));
    const lines = createInterface({ input: child.stdout });
    lines.once('line', (line) => {
      const m = /^port (\d+)$/.exec(line);
      if (!m) {
        reject(new Error(`unexpected first line from the test server: ${line}`));
        return;
      }
      resolve({
        url: `http://127.0.0.1:${m[1]}/mcp`,
        // Closing standard input stops the server; its exit code must be 0.
        close: async () => {
          child.stdin.end();
          const code = await exited;
          assert.equal(code, 0, `mcp_http_test_server exited with ${code}: ${stderr}`);
        },
      });
    });
    exited.then((code) => reject(new Error(`mcp_http_test_server exited early (${code}): ${stderr}`)));
  });
}

// Starts `msp serve --port 0` with `args`; resolves to { url, close } once it
// prints where it listens. close() stops it with SIGTERM.
export function startMspServe(dataDir, args = []) {
  return new Promise((resolve, reject) => {
    const child = spawn(mspBin(), ['serve', '--data-dir', dataDir, '--port', '0', '--synchronous', 'normal', ...args], {
      env: process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const exited = new Promise((done) => child.on('exit', (code, signal) => done({ code, signal })));
    // Never outlive the test process, whatever happens to the test.
    const killOnExit = () => child.kill('SIGKILL');
    process.once('exit', killOnExit);
    exited.then(() => process.off('exit', killOnExit));
    let started = false;
    // It says where it listens on stderr (its log).
    const onData = (chunk) => {
      output += chunk;
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output);
      if (!m || started) return;
      started = true;
      resolve({
        url: `http://127.0.0.1:${m[1]}/mcp`,
        close: async () => {
          child.kill('SIGTERM');
          const { code } = await exited;
          assert.equal(code, 0, `msp serve exited with ${code}`);
        },
      });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', reject);
    exited.then(({ code }) => reject(new Error(`msp serve exited early (${code}): ${output}`)));
  });
}

// The MCP SDK client over Streamable HTTP.
export async function connectHttp(url, headers = {}) {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  const client = new Client({ name: 'msp-node-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

// A raw stdio exchange with `msp mcp`: send(obj or string) writes one line;
// next() resolves to the next stdout line parsed as JSON.
export function rawStdio(dataDir) {
  const child = spawn(mspBin(), ['mcp', '--data-dir', dataDir, '--synchronous', 'normal'], {
    env: process.env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  const exited = new Promise((done) => child.on('exit', (code) => done(code)));
  const queue = [];
  const waiting = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    const parsed = JSON.parse(line);  // stdout carries JSON-RPC messages only
    if (waiting.length) waiting.shift()(parsed);
    else queue.push(parsed);
  });
  return {
    send: (message) => child.stdin.write((typeof message === 'string' ? message : JSON.stringify(message)) + '\n'),
    next: () => (queue.length ? Promise.resolve(queue.shift()) : new Promise((r) => waiting.push(r))),
    stderr: () => stderr,
    close: async () => {
      child.stdin.end();
      return exited;
    },
  };
}

export const initializeRequest = (id, protocolVersion) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});
