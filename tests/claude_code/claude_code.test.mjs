// The real Claude Code CLI (npm @anthropic-ai/claude-code, pinned in
// package-lock.json) with msp installed the way a user installs it
// (`msp setup claude-code --project`), offline: the model is a scripted
// stand-in for the Anthropic Messages API (scripted_anthropic.mjs), so every
// hook, MCP call and tool result below is Claude Code's own doing.
//
// Two sessions in one repository, as a user would have them:
//   1. "remember that the tests need Docker": the capture hook records the
//      prompt; the model loads msp's memory_write through Claude Code's tool
//      search and stores the note (no tags: the agent-write policy's default).
//   2. a later session: SessionStart hands the model the earlier prompt; the
//      model's memory_search returns the note.
//   3. a session started in a subdirectory: the MCP server still answers from
//      the repository's store. (Claude Code 2.1 reads a project's
//      .claude/settings.json only when started at the project's top, so no
//      project hook runs there: docs/coding-agents.md.)
import {test} from 'node:test';
import assert from 'node:assert/strict';
import {execFile} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {promisify} from 'node:util';
import {fileURLToPath} from 'node:url';

import {givenText, lastToolResults, startScriptedAnthropic} from './scripted_anthropic.mjs';

const run = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));
const claude = path.join(here, 'node_modules', '.bin', 'claude');
const msp = process.env.MSP_BIN;
const tmpBase = process.env.MSP_TEST_TMP ?? os.tmpdir();

// A model that uses one msp tool: the first turn loads it with Claude Code's
// ToolSearch (MCP tools are deferred behind it) unless it is already loaded,
// the next calls it with `input`, the last answers with the tool's result.
// Requests without tools (Claude Code's side queries) get a short text.
function oneToolModel(tool, input) {
  return (request) => {
    const tools = (request.tools ?? []).map((t) => t.name);
    if (tools.length === 0) return [{type: 'text', text: 'ok'}];
    const results = lastToolResults(request);
    const called = JSON.stringify(request.messages).includes(`"name":"${tool}"`);
    if (called) return [{type: 'text', text: `done: ${results.map((r) => r.text).join('\n')}`}];
    if (!tools.includes(tool)) {
      if (results.length > 0) return [{type: 'text', text: `the tool search did not load ${tool}`}];
      return [{type: 'tool_use', name: 'ToolSearch', input: {query: `select:${tool}`}}];
    }
    return [{type: 'tool_use', name: tool, input}];
  };
}

// The result Claude Code sent back for the model's call of `tool`, or
// undefined: the tool_result whose tool_use_id is that call's.
function resultOf(requests, tool) {
  for (const request of requests) {
    const calls = (request.messages ?? []).filter((m) => m.role === 'assistant' && Array.isArray(m.content))
      .flatMap((m) => m.content).filter((b) => b.type === 'tool_use' && b.name === tool);
    for (const call of calls) {
      const result = lastToolResults(request).find((r) => r.tool_use_id === call.id);
      if (result) return result;
    }
  }
  return undefined;
}

// Runs `claude -p prompt` in `cwd` against `api`; resolves to its JSON result.
async function claudePrint(api, cwd, home, prompt) {
  const {stdout} = await run(claude, ['-p', prompt, '--output-format', 'json', '--allowedTools', 'mcp__msp'], {
    cwd,
    timeout: 120_000,
    env: {
      PATH: process.env.PATH,
      HOME: home,
      ANTHROPIC_BASE_URL: api.url,
      ANTHROPIC_API_KEY: 'sk-ant-scripted-test-key',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      // msp is the sanitizer build under ctest: its leak report at exit is
      // not what this test is about (the C++ tests check leaks).
      ASAN_OPTIONS: 'detect_leaks=0',
    },
  });
  return JSON.parse(stdout);
}

test('Claude Code with msp: prompts captured, SessionStart context, MCP write and search', {timeout: 300_000}, async () => {
  assert.ok(msp, 'MSP_BIN names the msp binary');
  assert.ok(fs.existsSync(claude), `the Claude Code CLI is installed (${claude}): npm ci in tests/claude_code`);
  fs.mkdirSync(tmpBase, {recursive: true});
  const root = fs.mkdtempSync(path.join(tmpBase, 'claude-code-'));
  const home = path.join(root, 'home');
  const repo = path.join(root, 'repo with space');
  fs.mkdirSync(home);
  fs.mkdirSync(path.join(repo, 'src', 'lib'), {recursive: true});
  await run('git', ['init', '-q', '-b', 'main', repo]);

  // The install a user runs, then the approval of the project's MCP server
  // that Claude Code otherwise asks for interactively (docs/coding-agents.md).
  await run(msp, ['setup', 'claude-code', '--project'], {cwd: repo, env: {...process.env, HOME: home, ASAN_OPTIONS: 'detect_leaks=0'}});
  fs.writeFileSync(path.join(repo, '.claude', 'settings.local.json'), JSON.stringify({enabledMcpjsonServers: ['msp']}));

  // Session 1: an agent's natural "remember ...".
  const note = 'The integration tests need Docker running (docker compose up -d db first).';
  const first = await startScriptedAnthropic(oneToolModel('mcp__msp__memory_write', {text: note, kind: 'fact'}));
  let result;
  try {
    result = await claudePrint(first, repo, home, 'remember that the tests need Docker');
  } finally {
    await first.close();
  }
  assert.equal(result.is_error, false, JSON.stringify(result));
  // (Claude Code defers MCP tools behind its tool search, but not always: the
  // model may have loaded memory_write first or called it at once.)
  const written = resultOf(first.requests, 'mcp__msp__memory_write');
  assert.ok(written, `memory_write was called: ${JSON.stringify(first.requests.flatMap(lastToolResults))}`);
  assert.equal(written.is_error, false, written.text);
  const write = JSON.parse(written.text);
  assert.match(write.id, /^[0-9a-f-]{36}$/);
  assert.ok(write.tags.includes('note'), `stored with the default agent tag: ${JSON.stringify(write)}`);

  // Session 2.
  const second = await startScriptedAnthropic(oneToolModel('mcp__msp__memory_search', {query: 'what do the tests need docker'}));
  try {
    result = await claudePrint(second, repo, home, 'what do the tests need before I run them?');
  } finally {
    await second.close();
  }
  assert.equal(result.is_error, false, JSON.stringify(result));
  const context = givenText(second.requests.find((r) => (r.tools ?? []).length > 0));
  // (assert.ok rather than match: the context is tens of kilobytes)
  assert.ok(context.includes('SessionStart hook additional context'), 'the SessionStart hook ran');
  assert.ok(context.includes('# Recent prompts in this repository'), 'SessionStart lists the recent prompts');
  assert.ok(context.includes('remember that the tests need Docker'), 'session 1\'s prompt reaches session 2');
  // Session 1's tool uses were observed (PostToolUse) and its SessionEnd
  // wrote a summary: session 2 opens with the index of the last sessions.
  assert.ok(context.includes('# Last sessions on this repository and branch'), 'SessionStart lists the last sessions');
  assert.ok(context.includes('asked: \\"remember that the tests need Docker\\"') ||
            context.includes('asked: "remember that the tests need Docker"'), 'the index line of session 1');
  const indexed = context.match(/record ([0-9a-f-]{36})\]/);
  assert.ok(indexed, 'the index names the summary record');
  const found = resultOf(second.requests, 'mcp__msp__memory_search');
  assert.ok(found, 'memory_search was called');
  assert.equal(found.is_error, false, found.text);
  const hits = JSON.parse(found.text).hits;
  assert.ok(hits.length >= 1, found.text);
  assert.equal(hits[0].memory.id, write.id, `the note is the top hit: ${found.text}`);
  assert.equal(hits[0].memory.text, note);
  assert.match(result.result, /Docker running/);

  // Session 3, in a subdirectory: the MCP server finds the repository's store
  // (no new one in the subdirectory).
  const third = await startScriptedAnthropic(oneToolModel('mcp__msp__memory_search', {query: 'docker compose'}));
  try {
    result = await claudePrint(third, path.join(repo, 'src', 'lib'), home, 'how do I start the database for the tests?');
  } finally {
    await third.close();
  }
  assert.equal(result.is_error, false, JSON.stringify(result));
  const fromSub = resultOf(third.requests, 'mcp__msp__memory_search');
  assert.ok(fromSub, 'memory_search was called');
  assert.equal(fromSub.is_error, false, fromSub.text);
  assert.equal(JSON.parse(fromSub.text).hits[0]?.memory.id, write.id, fromSub.text);
  assert.equal(fs.existsSync(path.join(repo, 'src', 'lib', '.msp')), false);

  // The store, with every prompt, stays out of git.
  assert.ok(fs.existsSync(path.join(repo, '.msp', 'msp.db')));
  const {stdout: status} = await run('git', ['status', '--porcelain', '--untracked-files=all'], {cwd: repo});
  assert.doesNotMatch(status, /\.msp\//);
  fs.rmSync(root, {recursive: true, force: true});
});
