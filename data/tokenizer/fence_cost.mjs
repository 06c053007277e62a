// Tokens the stored-text fence (src/util/fence.h) adds per item, on LoCoMo's
// turns (cl100k_base via js-tiktoken): node data/tokenizer/fence_cost.mjs [locomo10.json]
// (default /work/shared/bench-data/locomo10.json). Reported in docs/access.md.
import { getEncoding } from "js-tiktoken";
import fs from "node:fs";
const enc = getEncoding("cl100k_base");
const data = JSON.parse(fs.readFileSync(process.argv[2] ?? "/work/shared/bench-data/locomo10.json", "utf8"));
const turns = [];
for (const conv of data) {
  const c = conv.conversation;
  for (const k of Object.keys(c)) {
    if (!/^session_\d+$/.test(k)) continue;
    for (const t of c[k]) if (t.text) turns.push(t.text);
  }
}
const id = "2c1d8a90";  // ShortId: the last 8 characters of a record id
const n = (s) => enc.encode(s).length;
let base = 0, wmFact = 0, wmNoId = 0, digest = 0, hist = 0;
for (const t of turns) {
  const b = n("- " + t);
  base += b;
  wmFact += n("- [fact · from user · trusted · id " + id + "] " + t) - b;
  wmNoId += n("- [fact · from user · trusted] " + t) - b;
  digest += n("- [0.82] fact · normal · from user · trusted: " + t) - n("- [0.82] fact · normal: " + t);
  hist += n("User [episode · from user · trusted · id " + id + "]: " + t) - n("User: " + t);
}
const N = turns.length;
console.log(JSON.stringify({turns: N, mean_turn_tokens: (base / N).toFixed(1),
  working_memory_fact_label: (wmFact / N).toFixed(1), of_which_id: ((wmFact - wmNoId) / N).toFixed(1),
  working_memory_history_label: (hist / N).toFixed(1), digest_head_added: (digest / N).toFixed(1)}));
