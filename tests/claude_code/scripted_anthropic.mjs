// A scripted stand-in for the Anthropic Messages API, for running the real
// Claude Code CLI offline (ANTHROPIC_BASE_URL): no model runs here. Each POST
// /v1/messages is recorded and answered by the test's `reply(request)`, which
// returns the assistant's content blocks ({type: 'text', text} or {type:
// 'tool_use', name, input}); streamed (server-sent events) or whole, as the
// request asks. Anything else is a 404 in the API's error shape.
import http from 'node:http';

// Writes one message in the API's streaming event sequence.
function stream(res, message) {
  res.writeHead(200, {'content-type': 'text/event-stream', 'cache-control': 'no-cache'});
  const event = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({type, ...data})}\n\n`);
  event('message_start', {message: {...message, content: [], stop_reason: null, usage: {input_tokens: 10, output_tokens: 1}}});
  message.content.forEach((block, index) => {
    if (block.type === 'tool_use') {
      event('content_block_start', {index, content_block: {type: 'tool_use', id: block.id, name: block.name, input: {}}});
      event('content_block_delta', {index, delta: {type: 'input_json_delta', partial_json: JSON.stringify(block.input)}});
    } else {
      event('content_block_start', {index, content_block: {type: 'text', text: ''}});
      event('content_block_delta', {index, delta: {type: 'text_delta', text: block.text}});
    }
    event('content_block_stop', {index});
  });
  event('message_delta', {delta: {stop_reason: message.stop_reason, stop_sequence: null}, usage: {output_tokens: 5}});
  event('message_stop', {});
  res.end();
}

// Starts the server on a loopback port. `reply(request)`: the parsed request
// body -> content blocks (or a promise of them). Returns {url, requests, close()}; `requests` holds
// every /v1/messages body in arrival order.
export async function startScriptedAnthropic(reply) {
  const requests = [];
  let next = 0;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => { body += chunk; });
    req.on('end', async () => {
      if (req.method !== 'POST' || !req.url.startsWith('/v1/messages') || req.url.startsWith('/v1/messages/count_tokens')) {
        res.writeHead(404, {'content-type': 'application/json'});
        res.end(JSON.stringify({type: 'error', error: {type: 'not_found_error', message: `scripted: no ${req.method} ${req.url}`}}));
        return;
      }
      const request = JSON.parse(body);
      requests.push(request);
      const content = (await reply(request)).map((block) =>
        block.type === 'tool_use' ? {id: `toolu_scripted_${++next}`, ...block} : block);
      const message = {
        id: `msg_scripted_${++next}`, type: 'message', role: 'assistant', model: request.model, content,
        stop_reason: content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn', stop_sequence: null,
        usage: {input_tokens: 10, output_tokens: 5},
      };
      if (request.stream) {
        stream(res, message);
      } else {
        res.writeHead(200, {'content-type': 'application/json'});
        res.end(JSON.stringify(message));
      }
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    requests,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

// Every text the model was given: the system prompt and each turn's text
// blocks (Claude Code puts SessionStart's output in a turn of its own).
export function givenText(request) {
  const parts = [];
  const add = (content) => {
    if (typeof content === 'string') { parts.push(content); return; }
    for (const block of content ?? []) if (typeof block.text === 'string') parts.push(block.text);
  };
  add(request.system);
  for (const m of request.messages ?? []) add(m.content);
  return parts.join('\n');
}

// The tool results of the last user turn of `request`: [{tool_use_id, text, is_error}].
export function lastToolResults(request) {
  const last = (request.messages ?? []).at(-1);
  if (!last || last.role !== 'user' || typeof last.content === 'string') return [];
  return last.content.filter((b) => b.type === 'tool_result').map((b) => ({
    tool_use_id: b.tool_use_id,
    is_error: Boolean(b.is_error),
    text: typeof b.content === 'string' ? b.content : (b.content ?? []).map((c) => c.text ?? '').join('\n'),
  }));
}
