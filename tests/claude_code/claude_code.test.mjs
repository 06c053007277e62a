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
// With `--scope user` the hooks run wherever Claude Code starts, a
// subdirectory too (docs/coding-agents.md's advice for that case).
// And msp as a Claude Code plugin (`msp setup claude-code --plugin DIR`),
// validated and installed through Claude Code's own plugin commands, in a
// repository with no msp files at all: the same capture, write and search.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import {execFile} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {promisify} from 'node:util';
import {fileURLToPath} from 'node:url';

import {givenText, lastToolResults, startScriptedAnthropic} from './scripted_anthropic.mjs';

const execFileAsync = promisify(execFile);
// Runs a program with its standard input closed (Claude Code waits on an open
// one); resolves to {stdout, stderr}.
function run(program, args, options) {
  const running = execFileAsync(program, args, options);
  running.child.stdin.end();
  return running;
}
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
      // Claude Code connects MCP servers in the background: on a loaded
      // machine the first search may come before msp's server is up, so the
      // model searches again (a few times) before giving up.
      const searches = JSON.stringify(request.messages).split('"name":"ToolSearch"').length - 1;
      if (searches >= 4) return [{type: 'text', text: `the tool search did not load ${tool}`}];
      const search = [{type: 'tool_use', name: 'ToolSearch', input: {query: `select:${tool}`}}];
      if (searches === 0) return search;
      return new Promise((resolve) => setTimeout(() => resolve(search), 2000));
    }
    return [{type: 'tool_use', name: tool, input}];
  };
}

// What the model was last told, for a failure's message: the tool results of
// every request, in order.
function toolResultsOf(requests) {
  return JSON.stringify(requests.flatMap(lastToolResults).map((r) => r.text.slice(0, 300)));
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

// The environment Claude Code runs in: an empty home, no network but `api`.
// (Without `api`, for the plugin commands, no API key either: with one and no
// base URL Claude Code tries api.anthropic.com and waits ~18 s for it.)
function claudeEnv(home, api) {
  return {
    PATH: process.env.PATH,
    HOME: home,
    ...(api ? {ANTHROPIC_BASE_URL: api.url, ANTHROPIC_API_KEY: 'sk-ant-scripted-test-key'} : {}),
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    // msp is the sanitizer build under ctest: its leak report at exit is
    // not what this test is about (the C++ tests check leaks).
    ASAN_OPTIONS: 'detect_leaks=0',
  };
}

// Runs `claude -p prompt` in `cwd` against `api` with the MCP tools of
// `server` (the prefix Claude Code gives them) allowed; resolves to its JSON
// result.
async function claudePrint(api, cwd, home, prompt, server = 'mcp__msp') {
  const {stdout} = await run(claude, ['-p', prompt, '--output-format', 'json', '--allowedTools', server], {
    cwd,
    timeout: 120_000,
    env: claudeEnv(home, api),
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
  assert.ok(found, `memory_search was called: ${toolResultsOf(second.requests)}`);
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
  assert.ok(fromSub, `memory_search was called: ${toolResultsOf(third.requests)}`);
  assert.equal(fromSub.is_error, false, fromSub.text);
  assert.equal(JSON.parse(fromSub.text).hits[0]?.memory.id, write.id, fromSub.text);
  assert.equal(fs.existsSync(path.join(repo, 'src', 'lib', '.msp')), false);

  // The store, with every prompt, stays out of git.
  assert.ok(fs.existsSync(path.join(repo, '.msp', 'msp.db')));
  const {stdout: status} = await run('git', ['status', '--porcelain', '--untracked-files=all'], {cwd: repo});
  assert.doesNotMatch(status, /\.msp\//);
  fs.rmSync(root, {recursive: true, force: true});
});

test('msp as a Claude Code plugin: validated, installed from its marketplace, captures and answers', {timeout: 300_000}, async () => {
  assert.ok(msp, 'MSP_BIN names the msp binary');
  fs.mkdirSync(tmpBase, {recursive: true});
  const root = fs.mkdtempSync(path.join(tmpBase, 'claude-plugin-'));
  const home = path.join(root, 'home');
  const plugin = path.join(root, 'msp plugin');
  const repo = path.join(root, 'repo');
  fs.mkdirSync(home);
  await run('git', ['init', '-q', '-b', 'main', repo]);

  // The plugin, written once, then Claude Code's own commands: validate, add
  // the marketplace beside it, install.
  await run(msp, ['setup', 'claude-code', '--plugin', plugin], {env: {...process.env, HOME: home, ASAN_OPTIONS: 'detect_leaks=0'}});
  // (Its "directory" findings are about submitting to Anthropic's catalog.)
  const {stdout: validation} = await run(claude, ['plugin', 'validate', '--json', plugin], {env: claudeEnv(home)});
  const report = JSON.parse(validation);
  assert.equal(report.success, true, validation);
  assert.deepEqual([report.manifest.errors, report.manifest.warnings], [[], []], validation);
  assert.deepEqual(report.provides.hooks.map((h) => h.event).sort(),
                   ['PostToolUse', 'PostToolUseFailure', 'SessionEnd', 'SessionStart', 'UserPromptSubmit']);
  assert.deepEqual(report.provides.mcpServers.map((m) => [m.name, m.target]), [['msp', msp]]);
  await run(claude, ['plugin', 'marketplace', 'add', plugin], {env: claudeEnv(home)});
  await run(claude, ['plugin', 'install', 'msp@msp'], {env: claudeEnv(home)});
  const {stdout: installed} = await run(claude, ['plugin', 'list'], {env: claudeEnv(home)});
  assert.match(installed, /msp@msp/);

  // Session 1: the prompt is captured and the plugin's memory_write stores a note.
  const tool = (name) => `mcp__plugin_msp_msp__${name}`;
  const note = 'Release builds need the LTO toolchain: run scripts/lto.sh once per machine.';
  const first = await startScriptedAnthropic(oneToolModel(tool('memory_write'), {text: note, kind: 'fact'}));
  let result;
  try {
    result = await claudePrint(first, repo, home, 'remember how release builds work', 'mcp__plugin_msp_msp');
  } finally {
    await first.close();
  }
  assert.equal(result.is_error, false, JSON.stringify(result));
  const written = resultOf(first.requests, tool('memory_write'));
  assert.ok(written, `the plugin's memory_write was called: ${JSON.stringify(first.requests.flatMap(lastToolResults))}`);
  assert.equal(written.is_error, false, written.text);
  const write = JSON.parse(written.text);

  // Session 2: SessionStart brings session 1's prompt; memory_search finds the note.
  const second = await startScriptedAnthropic(oneToolModel(tool('memory_search'), {query: 'release build LTO toolchain'}));
  try {
    result = await claudePrint(second, repo, home, 'how do I make a release build?', 'mcp__plugin_msp_msp');
  } finally {
    await second.close();
  }
  assert.equal(result.is_error, false, JSON.stringify(result));
  const context = givenText(second.requests.find((r) => (r.tools ?? []).length > 0));
  assert.ok(context.includes('remember how release builds work'), 'session 1\'s prompt reaches session 2');
  const found = resultOf(second.requests, tool('memory_search'));
  assert.ok(found, 'memory_search was called');
  assert.equal(found.is_error, false, found.text);
  assert.equal(JSON.parse(found.text).hits[0]?.memory.id, write.id, found.text);

  // The store is the repository's, kept out of git by the plugin's SessionStart hook.
  assert.ok(fs.existsSync(path.join(repo, '.msp', 'msp.db')));
  assert.match(fs.readFileSync(path.join(repo, '.git', 'info', 'exclude'), 'utf8'), /^\/\.msp\/$/m);
  const {stdout: status} = await run('git', ['status', '--porcelain', '--untracked-files=all'], {cwd: repo});
  assert.equal(status, '');
  fs.rmSync(root, {recursive: true, force: true});
});

test('user scope: from a subdirectory the hooks run and the MCP server answers', {timeout: 300_000}, async () => {
  assert.ok(msp, 'MSP_BIN names the msp binary');
  fs.mkdirSync(tmpBase, {recursive: true});
  const root = fs.mkdtempSync(path.join(tmpBase, 'claude-user-'));
  const home = path.join(root, 'home');
  const repo = path.join(root, 'repo');
  const sub = path.join(repo, 'services', 'api');
  const store = path.join(root, 'store');
  fs.mkdirSync(home);
  fs.mkdirSync(sub, {recursive: true});
  await run('git', ['init', '-q', '-b', 'main', repo]);
  await run(msp, ['setup', 'claude-code', '--scope', 'user', '--data-dir', store],
            {cwd: repo, env: {...process.env, HOME: home, ASAN_OPTIONS: 'detect_leaks=0'}});

  const note = 'The API service reads its port from API_PORT (default 8080).';
  const first = await startScriptedAnthropic(oneToolModel('mcp__msp__memory_write', {text: note, kind: 'fact'}));
  let result;
  try {
    result = await claudePrint(first, sub, home, 'remember which port the api service uses');
  } finally {
    await first.close();
  }
  assert.equal(result.is_error, false, JSON.stringify(result));
  const written = resultOf(first.requests, 'mcp__msp__memory_write');
  assert.ok(written, 'memory_write was called');
  assert.equal(written.is_error, false, written.text);

  const second = await startScriptedAnthropic(oneToolModel('mcp__msp__memory_search', {query: 'api service port'}));
  try {
    result = await claudePrint(second, sub, home, 'what port does the api listen on?');
  } finally {
    await second.close();
  }
  assert.equal(result.is_error, false, JSON.stringify(result));
  // The first session's prompt was captured from the subdirectory, for the
  // repository (its top), and SessionStart hands it to the second.
  const context = givenText(second.requests.find((r) => (r.tools ?? []).length > 0));
  assert.ok(context.includes('SessionStart hook additional context'), 'the SessionStart hook ran');
  assert.ok(context.includes('remember which port the api service uses'), 'session 1\'s prompt reaches session 2');
  assert.ok(context.includes(`Repository repo (${repo})`), 'the digest names the repository, not the subdirectory');
  const found = resultOf(second.requests, 'mcp__msp__memory_search');
  assert.ok(found, `memory_search was called: ${toolResultsOf(second.requests)}`);
  assert.equal(JSON.parse(found.text).hits[0]?.memory.id, JSON.parse(written.text).id, found.text);
  // One store, where --data-dir put it; nothing in the repository.
  assert.ok(fs.existsSync(path.join(store, 'msp.db')));
  const {stdout: status} = await run('git', ['status', '--porcelain', '--untracked-files=all'], {cwd: repo});
  assert.equal(status, '');
  fs.rmSync(root, {recursive: true, force: true});
});
