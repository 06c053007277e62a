#!/usr/bin/env bash
# A 100,000-step store for the console's first-paint measurement
# (docs/console.md, "First paint"): 2,000 sessions of 50 steps whose texts are
# LoCoMo's turns in order (tenant default), then 100 decisions and 700 events
# in mission `work` through the msp command.
#   bash bench/console_store.sh MSP DIR      (DIR must not hold a store yet)
set -euo pipefail
msp=$1
dir=$2
locomo=${MSP_LOCOMO:-$(dirname "$0")/../../shared/bench-data/locomo10.json}
jsonl=$(mktemp)
trap 'rm -f "$jsonl"' EXIT
python3 - "$locomo" "$jsonl" <<'PY'
import datetime, json, sys
turns = []
for conversation in json.load(open(sys.argv[1])):
    c = conversation['conversation']
    for key in sorted(c):
        if key.startswith('session_') and isinstance(c[key], list):
            turns += [(t['speaker'], t['text']) for t in c[key]]
base = datetime.datetime(2026, 1, 1)
with open(sys.argv[2], 'w') as out:
    for i in range(100000):
        session, step = divmod(i, 50)
        speaker, text = turns[i % len(turns)]
        at = (base + datetime.timedelta(minutes=session * 240 + step + 1)).strftime('%Y-%m-%dT%H:%M:%S.000Z')
        out.write(json.dumps({'kind': 'episode', 'namespace': {'tenant': 'default', 'session': f's{session:04d}'},
                              'text': f'{speaker}: {text}',
                              'body': {'type': 'user_message' if step % 2 == 0 else 'assistant_message',
                                       'content': text, 'metadata': {}},
                              'step_number': step + 1, 'created_at': at, 'updated_at': at}) + '\n')
PY
"$msp" import "$jsonl" --data-dir "$dir"
for i in $(seq 1 100); do
  "$msp" decision add --mission work --title "Decision $i on the ledger rotation" --context "Context $i: weather and supply" \
    --decision "Rotate ledger $i weekly" --alternative "Monthly: too slow" --component "comp$((i % 5))" --data-dir "$dir" >/dev/null
done
types=(incident alert question change)
for i in $(seq 1 700); do
  "$msp" event add "Event $i: sensor $((i % 7)) reported drift in component comp$((i % 5))" --type "${types[$((i % 4))]}" \
    --component "comp$((i % 5))" --mission work --data-dir "$dir" >/dev/null
done
echo "store of 100,000 steps, 100 decisions and 700 events in $dir"
