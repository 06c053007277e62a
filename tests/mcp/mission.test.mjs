// The mission tools through the official SDK client against `msp serve`'s
// /mcp: workflow_mark_used after a workflow_memory_query, a key's clearance
// limiting what its session is served, the decision tools, the ADR import and
// the task tools.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { connectHttp, startMspServe, tempDir } from './helpers.mjs';

const FULL_KEY = 'mission-full-key-0123456789';
const LOW_KEY = 'mission-low-key-0123456789';

describe('mission tools over msp serve', () => {
  let scratch;
  let server;
  before(async () => {
    scratch = tempDir('mcp-mission');
    server = await startMspServe(`${scratch.dir}/data`, [
      '--api-keys', `${FULL_KEY}=acme,${LOW_KEY}=acme:0`, '--tokens-counter', 'estimate',
    ]);
  });
  after(async () => {
    await server?.close();
    scratch?.cleanup();
  });

  test('workflow_mark_used: schemas, marks that accumulate, unknown entries refused', async () => {
    const { client } = await connectHttp(server.url, { authorization: `Bearer ${FULL_KEY}` });
    try {
      const { tools } = await client.listTools();
      const tool = tools.find((t) => t.name === 'workflow_mark_used');
      assert.ok(tool, 'workflow_mark_used is listed');
      assert.deepEqual([...tool.inputSchema.required].sort(), ['entries', 'retrieval_id']);
      assert.equal(tool.outputSchema.type, 'object');
      assert.ok(tool.outputSchema.required.includes('used'));

      const first = await client.callTool({
        name: 'decision_record',
        arguments: {
          namespace: { mission: 'mars' }, title: 'Use UDP for the relay channel', context: 'The relay drops packets under load.',
          decision: 'Carry relay telemetry over UDP.', component: 'relay',
        },
      });
      assert.equal(first.isError, false, JSON.stringify(first));
      const second = await client.callTool({
        name: 'decision_record',
        arguments: {
          namespace: { mission: 'mars' }, title: 'Log every relay packet drop', context: 'Drops were invisible.',
          decision: 'Count relay drops per minute.', component: 'relay',
        },
      });
      assert.equal(second.isError, false);
      const ids = [first.structuredContent.id, second.structuredContent.id];

      const q = await client.callTool({
        name: 'workflow_memory_query', arguments: { namespace: { mission: 'mars' }, task_description: 'relay channel packet drops' },
      });
      assert.equal(q.isError, false, JSON.stringify(q));
      const served = q.structuredContent.digest.sections.flatMap((s) => s.entries.map((e) => e.id));
      for (const id of ids) assert.ok(served.includes(id), `${id} served`);

      const rid = q.structuredContent.retrieval_id;
      const marked = await client.callTool({
        name: 'workflow_mark_used', arguments: { namespace: { mission: 'mars' }, retrieval_id: rid, entries: [ids[0]] },
      });
      assert.equal(marked.isError, false, JSON.stringify(marked));
      assert.deepEqual(marked.structuredContent.used, [ids[0]]);
      assert.equal(marked.structuredContent.served, served.length);
      assert.deepEqual(JSON.parse(marked.content[0].text), marked.structuredContent);
      const again = await client.callTool({
        name: 'workflow_mark_used', arguments: { namespace: { mission: 'mars' }, retrieval_id: rid, entries: [ids[1]] },
      });
      assert.deepEqual([...again.structuredContent.used].sort(), [...ids].sort());

      const unknown = await client.callTool({
        name: 'workflow_mark_used', arguments: { namespace: { mission: 'mars' }, retrieval_id: rid, entries: ['not-served'] },
      });
      assert.equal(unknown.isError, true);
      const noRetrieval = await client.callTool({
        name: 'workflow_mark_used',
        arguments: { namespace: { mission: 'mars' }, retrieval_id: '01900000-0000-7000-8000-000000000000', entries: [ids[0]] },
      });
      assert.equal(noRetrieval.isError, true);
      assert.match(noRetrieval.content[0].text, /no retrieval/);
    } finally {
      await client.close();
    }
  });

  test("a key's clearance limits what its session is served", async () => {
    const full = await connectHttp(server.url, { authorization: `Bearer ${FULL_KEY}` });
    const low = await connectHttp(server.url, { authorization: `Bearer ${LOW_KEY}` });
    try {
      const secret = await full.client.callTool({
        name: 'decision_record',
        arguments: {
          namespace: { mission: 'venus' }, title: 'Aim the lasers at the orbiter', context: 'The radio link is jammed.',
          decision: 'Switch the uplink to the laser terminal.', component: 'uplink', access_level: 2,
        },
      });
      assert.equal(secret.isError, false, JSON.stringify(secret));
      const id = secret.structuredContent.id;
      const search = { name: 'memory_search', arguments: { query: 'lasers orbiter uplink terminal', top_k: 10 } };
      const seenByFull = await full.client.callTool(search);
      assert.ok(seenByFull.structuredContent.hits.some((h) => h.memory.id === id));
      const seenByLow = await low.client.callTool(search);
      assert.equal(seenByLow.isError, false);
      assert.ok(!seenByLow.structuredContent.hits.some((h) => h.memory.id === id));
      const history = await low.client.callTool({ name: 'fact_history', arguments: { id } });
      assert.equal(history.isError, true);
      const writeUp = await low.client.callTool({
        name: 'decision_record',
        arguments: {
          namespace: { mission: 'venus' }, title: 'Another secret', context: 'c', decision: 'd', access_level: 1,
        },
      });
      assert.equal(writeUp.isError, true);
      assert.match(writeUp.content[0].text, /clearance/);
    } finally {
      await full.client.close();
      await low.client.close();
    }
  });

  test('the decision tools: list, show, status and supersede serve only what the asker may read', async () => {
    const full = await connectHttp(server.url, { authorization: `Bearer ${FULL_KEY}` });
    const low = await connectHttp(server.url, { authorization: `Bearer ${LOW_KEY}` });
    try {
      const { tools } = await full.client.listTools();
      for (const name of ['decision_record', 'decision_list', 'decision_show', 'decision_status', 'decision_supersede']) {
        const tool = tools.find((t) => t.name === name);
        assert.ok(tool, `${name} is listed`);
        assert.equal(tool.outputSchema.type, 'object');
        assert.ok(tool.inputSchema.properties.namespace, `${name} takes the namespace`);
      }
      const record = async (args) => {
        const r = await full.client.callTool({
          name: 'decision_record',
          arguments: { namespace: { mission: 'europa' }, context: 'The ice is thicker than modelled.', ...args },
        });
        assert.equal(r.isError, false, JSON.stringify(r));
        return r.structuredContent;
      };
      const drill = await record({
        title: 'Drill through the ice shelf', decision: 'Use the thermal drill.',
        alternatives: [{ option: 'Mechanical drill', reason: 'It jams in the cold.' }],
        provenance: [{ type: 'issue', ref: '7', detail: 'the thermal budget' }], decided_by: 'ann',
      });
      assert.deepEqual(drill.alternatives, [{ option: 'Mechanical drill', reason: 'It jams in the cold.' }]);
      assert.deepEqual(drill.provenance, [{ type: 'issue', ref: '7', detail: 'the thermal budget' }]);
      const melt = await record({ title: 'Melt a shaft instead', decision: 'Use the melt probe.' });
      const secret = await record({ title: 'Keep the landing site secret', decision: 'Tell no one.', access_level: 2 });
      const ns = { mission: 'europa' };

      const listed = await full.client.callTool({ name: 'decision_list', arguments: { namespace: ns } });
      assert.equal(listed.isError, false, JSON.stringify(listed));
      assert.deepEqual(listed.structuredContent.decisions.map((d) => d.id).sort(), [drill.id, melt.id, secret.id].sort());
      const lowList = await low.client.callTool({ name: 'decision_list', arguments: { namespace: ns, limit: 10 } });
      assert.deepEqual(lowList.structuredContent.decisions.map((d) => d.id).sort(), [drill.id, melt.id].sort());
      const shown = await full.client.callTool({ name: 'decision_show', arguments: { namespace: ns, decision_id: secret.id } });
      assert.equal(shown.structuredContent.title, 'Keep the landing site secret');

      // Above the low key's clearance: not found, whichever way it is named, and nothing changes.
      for (const [name, args] of [
        ['decision_show', { decision_id: secret.id }],
        ['decision_status', { decision_id: secret.id, status: 'rejected' }],
        ['decision_supersede', { decision_id: secret.id, by: melt.id }],
        ['decision_supersede', { decision_id: drill.id, by: secret.id }],
      ]) {
        const refused = await low.client.callTool({ name, arguments: { namespace: ns, ...args } });
        assert.equal(refused.isError, true, `${name} ${JSON.stringify(args)}`);
        assert.match(refused.content[0].text, /^not_found: /);
      }
      const untouched = await full.client.callTool({ name: 'decision_show', arguments: { namespace: ns, decision_id: drill.id } });
      assert.equal(untouched.structuredContent.status, 'accepted');
      assert.equal(untouched.structuredContent.superseded_by, '');

      const status = await low.client.callTool({
        name: 'decision_status', arguments: { namespace: ns, decision_id: drill.id, status: 'deprecated' },
      });
      assert.equal(status.isError, false, JSON.stringify(status));
      assert.equal(status.structuredContent.status, 'deprecated');
      const superseded = await full.client.callTool({ name: 'decision_status', arguments: { namespace: ns, decision_id: drill.id, status: 'superseded' } });
      assert.equal(superseded.isError, true, 'superseded comes only from decision_supersede');
      assert.match(superseded.content[0].text, /^invalid_argument: field 'status': unknown value 'superseded'/);

      const sup = await full.client.callTool({
        name: 'decision_supersede', arguments: { namespace: ns, decision_id: drill.id, by: melt.id },
      });
      assert.equal(sup.isError, false, JSON.stringify(sup));
      assert.equal(sup.structuredContent.old.status, 'superseded');
      assert.equal(sup.structuredContent.old.superseded_by, melt.id);
      assert.equal(sup.structuredContent.new.supersedes, drill.id);
      const again = await full.client.callTool({
        name: 'decision_supersede', arguments: { namespace: ns, decision_id: drill.id, by: melt.id },
      });
      assert.equal(again.isError, true);
      assert.match(again.content[0].text, /^failed_precondition: .*already superseded/);
      const old = await full.client.callTool({ name: 'decision_list', arguments: { namespace: ns, statuses: ['superseded'] } });
      assert.deepEqual(old.structuredContent.decisions.map((d) => d.id), [drill.id]);

      // The mission is the namespace's, as on every face: a flat "mission" is no field.
      const flat = await full.client.callTool({ name: 'decision_list', arguments: { mission: 'europa' } });
      assert.equal(flat.isError, true);
      assert.match(flat.content[0].text, /unknown field 'mission'/);
    } finally {
      await full.client.close();
      await low.client.close();
    }
  });

  test('decision_import_adr: ADRs as text become linked decisions; again, nothing new; bad files and low keys refused', async () => {
    const full = await connectHttp(server.url, { authorization: `Bearer ${FULL_KEY}` });
    const low = await connectHttp(server.url, { authorization: `Bearer ${LOW_KEY}` });
    try {
      const files = [
        {
          name: '0001-use-tcp.md',
          text: '# 1. Use TCP for the relay\n\n## Status\n\nSuperseded by [2. Use UDP](0002-use-udp.md)\n\n'
            + '## Context\n\nThe relay needs a transport.\n\n## Decision\n\nTCP.\n\n## Consequences\n\nStalls.\n',
        },
        {
          name: '0002-use-udp.md',
          text: '# 2. Use UDP for the relay\n\n## Status\n\nAccepted\n\n## Context\n\nTCP stalled.\n\n'
            + '## Decision\n\nUDP with retries.\n\n## Consequences\n\nWe own the retries.\n',
        },
      ];
      const args = { namespace: { mission: 'ceres' }, folder: 'relay/docs/adr', files, component: 'relay' };
      const first = await full.client.callTool({ name: 'decision_import_adr', arguments: args });
      assert.equal(first.isError, false, JSON.stringify(first));
      assert.equal(first.structuredContent.added, 2);
      assert.deepEqual(first.structuredContent.entries.map((e) => e.file),
        ['relay/docs/adr/0001-use-tcp.md', 'relay/docs/adr/0002-use-udp.md']);
      const q = await full.client.callTool({
        name: 'workflow_memory_query', arguments: { namespace: { mission: 'ceres' }, task_description: 'relay transport UDP retries' },
      });
      assert.equal(q.isError, false, JSON.stringify(q));
      assert.match(q.structuredContent.markdown, /Use UDP for the relay/);

      const again = await full.client.callTool({ name: 'decision_import_adr', arguments: args });
      assert.equal(again.structuredContent.added, 0);
      assert.equal(again.structuredContent.unchanged, 2);

      const broken = await full.client.callTool({
        name: 'decision_import_adr',
        arguments: { ...args, files: [...files, { name: '0003-broken.md', text: '# 3. Only a title\n' }] },
      });
      // A file that cannot be imported fails alone, with its reason.
      assert.equal(broken.isError, false, JSON.stringify(broken));
      assert.equal(broken.structuredContent.failed, 1);
      assert.equal(broken.structuredContent.entries[2].action, 'failed');
      assert.match(broken.structuredContent.entries[2].error, /no text to take a decision from/);
      const noFiles = await full.client.callTool({
        name: 'decision_import_adr', arguments: { namespace: { mission: 'ceres' }, files: [] },
      });
      assert.equal(noFiles.isError, true);
      assert.match(noFiles.content[0].text, /field 'files' must hold 1\.\.1000/);
      // The answer says whether it was a dry run, as on every face.
      assert.equal(again.structuredContent.dry_run, false);

      const lowImport = await low.client.callTool({ name: 'decision_import_adr', arguments: args });
      assert.equal(lowImport.isError, true);
      assert.match(lowImport.content[0].text, /^forbidden: .*clearance/);
      const after = await full.client.callTool({ name: 'decision_import_adr', arguments: { ...args, dry_run: true } });
      assert.equal(after.structuredContent.unchanged, 2, 'the refused imports changed nothing');
    } finally {
      await full.client.close();
      await low.client.close();
    }
  });

  test('task tools: add, comment, status, list and show; a low key neither sees nor writes above itself', async () => {
    const full = await connectHttp(server.url, { authorization: `Bearer ${FULL_KEY}` });
    const low = await connectHttp(server.url, { authorization: `Bearer ${LOW_KEY}` });
    try {
      const { tools } = await full.client.listTools();
      for (const name of ['task_add', 'task_list', 'task_show', 'task_comment', 'task_status']) {
        assert.ok(tools.some((t) => t.name === name), `${name} is listed`);
      }
      const add = await full.client.callTool({
        name: 'task_add',
        arguments: {
          namespace: { mission: 'jupiter' }, task_id: 'T-7', title: 'Calibrate the magnetometer', labels: ['LONG-TERM'],
          paths: ['src/mag'], criticality: 'high',
        },
      });
      assert.equal(add.isError, false, JSON.stringify(add));
      assert.equal(add.structuredContent.task_id, 'T-7');
      assert.equal(add.structuredContent.status, 'open');
      const again = await full.client.callTool({
        name: 'task_add', arguments: { namespace: { mission: 'jupiter' }, task_id: 'T-7', title: 'A second T-7' },
      });
      assert.equal(again.isError, true);

      // Task reads run with the operator's clearance (the mission's registry),
      // capped by the key's: "chief" may read level 5.
      const put = await fetch(`${new URL(server.url).origin}/v1/operators/chief`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${FULL_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ namespace: { mission: 'jupiter' }, clearance: 5 }),
      });
      assert.equal(put.status, 200, await put.text());
      const secret = await full.client.callTool({
        name: 'task_add', arguments: { namespace: { mission: 'jupiter' }, task_id: 'T-8', title: 'Classified burn', access_level: 3 },
      });
      assert.equal(secret.isError, false, JSON.stringify(secret));

      const comment = await full.client.callTool({
        name: 'task_comment', arguments: { namespace: { mission: 'jupiter' }, task_id: 'T-7', text: 'Drift is 3 nT per hour.' },
      });
      assert.equal(comment.isError, false, JSON.stringify(comment));
      assert.equal(comment.structuredContent.comments.length, 1);
      assert.equal(comment.structuredContent.comments[0].text, 'Drift is 3 nT per hour.');

      const status = await full.client.callTool({
        name: 'task_status', arguments: { namespace: { mission: 'jupiter' }, task_id: 'T-7', status: 'in_progress' },
      });
      assert.equal(status.isError, false, JSON.stringify(status));
      assert.equal(status.structuredContent.status, 'in_progress');
      const badStatus = await full.client.callTool({
        name: 'task_status', arguments: { namespace: { mission: 'jupiter' }, task_id: 'T-7', status: 'finished' },
      });
      assert.equal(badStatus.isError, true);
      // The mission is the namespace's, as on every face: a flat "mission" is no field.
      const flat = await full.client.callTool({ name: 'task_show', arguments: { mission: 'jupiter', task_id: 'T-7' } });
      assert.equal(flat.isError, true);
      assert.match(flat.content[0].text, /unknown field 'mission'/);

      const shown = await full.client.callTool({ name: 'task_show', arguments: { namespace: { mission: 'jupiter' }, task_id: 'T-7' } });
      assert.equal(shown.structuredContent.status, 'in_progress');
      assert.equal(shown.structuredContent.comments.length, 1);

      const listed = await full.client.callTool({ name: 'task_list', arguments: { namespace: { mission: 'jupiter', operator: 'chief' } } });
      assert.deepEqual(listed.structuredContent.tasks.map((t) => t.task_id), ['T-7', 'T-8']);
      const anonymous = await full.client.callTool({ name: 'task_list', arguments: { namespace: { mission: 'jupiter' } } });
      assert.deepEqual(anonymous.structuredContent.tasks.map((t) => t.task_id), ['T-7', 'T-8'],
        'no operator: the session\'s caller asks (a key without a clearance)');
      const stranger = await full.client.callTool({ name: 'task_list', arguments: { namespace: { mission: 'jupiter', operator: 'stranger' } } });
      assert.deepEqual(stranger.structuredContent.tasks.map((t) => t.task_id), ['T-7'], 'an unknown operator has clearance 0');
      const lowAnonymous = await low.client.callTool({ name: 'task_list', arguments: { namespace: { mission: 'jupiter' } } });
      assert.deepEqual(lowAnonymous.structuredContent.tasks.map((t) => t.task_id), ['T-7'], 'the low key itself');
      const longTerm = await full.client.callTool({
        name: 'task_list', arguments: { namespace: { mission: 'jupiter' }, long_term: true, statuses: ['in_progress'] },
      });
      assert.deepEqual(longTerm.structuredContent.tasks.map((t) => t.task_id), ['T-7']);

      const lowList = await low.client.callTool({ name: 'task_list', arguments: { namespace: { mission: 'jupiter', operator: 'chief' } } });
      assert.deepEqual(lowList.structuredContent.tasks.map((t) => t.task_id), ['T-7']);
      const lowShow = await low.client.callTool({
        name: 'task_show', arguments: { namespace: { mission: 'jupiter', operator: 'chief' }, task_id: 'T-8' },
      });
      assert.equal(lowShow.isError, true);
      const lowComment = await low.client.callTool({
        name: 'task_comment', arguments: { namespace: { mission: 'jupiter', operator: 'chief' }, task_id: 'T-8', text: 'peek' },
      });
      assert.equal(lowComment.isError, true);
      const lowAdd = await low.client.callTool({
        name: 'task_add', arguments: { namespace: { mission: 'jupiter' }, task_id: 'T-9', title: 'Above me', access_level: 1 },
      });
      assert.equal(lowAdd.isError, true);
      assert.match(lowAdd.content[0].text, /clearance/);
      const after = await full.client.callTool({
        name: 'task_show', arguments: { namespace: { mission: 'jupiter', operator: 'chief' }, task_id: 'T-8' },
      });
      assert.equal(after.isError, false, JSON.stringify(after));
      assert.equal(after.structuredContent.comments?.length ?? 0, 0, 'the refused comment changed nothing');
    } finally {
      await full.client.close();
      await low.client.close();
    }
  });
});
