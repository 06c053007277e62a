#!/usr/bin/env bash
# Where a `msp search` process's time goes, phase by phase, without
# rebuilding msp: uprobes (the kernel's tracefs) on the functions that begin
# and end each phase, and the scheduler's exec / exit events; medians over N
# runs. Needs root (tracefs) and a Release binary with symbols.
#
#   bash bench/search_phases.sh MSP DATA_DIR [RUNS] [QUESTION]
#
# Prints, in ms: exec -> main (the loader), main -> the open, the open
# (SQLite and Xapian within it), Xapian's query, the docid map and first
# vector reads, the candidates' cosines (ScoreCold), records, passages and
# the cl100k table, print -> exit. Phases a run does not reach (a question
# whose hits need no token counter never loads cl100k) are left out.
set -euo pipefail
msp=$(readlink -f "${1:?usage: search_phases.sh MSP DATA_DIR [RUNS] [QUESTION]}")
data_dir=${2:?usage: search_phases.sh MSP DATA_DIR [RUNS] [QUESTION]}
runs=${3:-31}
question=${4:-what did Caroline research}
T=/sys/kernel/tracing
[ -w "$T/uprobe_events" ] || { echo "search_phases.sh: $T is not writable (run as root)" >&2; exit 2; }
xapian=$(ldconfig -p | awk '/libxapian\.so\.30 / && !found {print $NF; found = 1}')
xapian=$(readlink -f "$xapian")

# A uprobe and a return probe named NAME on SYMBOL of BINARY (file offset
# of the symbol: its address less its segment's address plus the segment's
# file offset).
probe() {
  local name=$1 symbol=$2 bin=$3 addr seg
  # (awk reads to the end: an early exit would fail the pipe under pipefail)
  addr=$(nm "$bin" 2>/dev/null | awk -v s="$symbol" '$3 == s && !found {print $1; found = 1}')
  [ -n "$addr" ] || addr=$(nm -D "$bin" | awk -v s="$symbol" '$3 == s && !found {print $1; found = 1}')
  [ -n "$addr" ] || { echo "search_phases.sh: no $symbol in $bin" >&2; exit 1; }
  seg=$(readelf -lW "$bin" | awk '$1 == "LOAD" && $8 == "E" && !found {print $2, $3; found = 1}')
  set -- $seg
  local off=$(( 0x$addr - $2 + $1 ))
  echo "p:msp_phases/$name $bin:$(printf '0x%x' $off)" >>"$T/uprobe_events"
  echo "r:msp_phases/${name}_r $bin:$(printf '0x%x' $off)" >>"$T/uprobe_events"
}
mangled() { nm "$msp" | awk -v p="$1" '$2 == "T" && index($3, p) == 1 && !found {print $3; found = 1}'; }

cleanup() {
  echo 0 >"$T/events/msp_phases/enable" 2>/dev/null || true
  echo 0 >"$T/events/sched/sched_process_exec/enable"
  echo 0 >"$T/events/sched/sched_process_exit/enable"
  grep -v '^[pr]:msp_phases/' "$T/uprobe_events" >/tmp/msp_phases.keep 2>/dev/null || true
  echo >"$T/uprobe_events"
  while read -r line; do echo "$line" >>"$T/uprobe_events"; done </tmp/msp_phases.keep
  rm -f /tmp/msp_phases.keep
}
trap cleanup EXIT

probe main main "$msp"
probe openengine "$(mangled _ZN3msp10OpenEngineERNS_10InvocationEb)" "$msp"
probe sqlite "$(mangled _ZN3msp15OpenSqliteStore)" "$msp"
probe lexical "$(mangled _ZN3msp16OpenLexicalIndex)" "$msp"
probe cl100k "$(mangled _ZN3msp16Cl100kVocabulary10LoadShared)" "$msp"
probe scorecold "$(mangled _ZNK3msp11exact_index16ExactVectorIndex9ScoreCold)" "$msp"
probe print "$(mangled _ZN3msp11PrintAnswer)" "$msp"
probe mset "$(nm -D "$xapian" | awk '$3 ~ /^_ZNK6Xapian7Enquire8get_mset/ && !found {print $3; found = 1}')" "$xapian"

"$msp" search --data-dir "$data_dir" "$question" >/dev/null  # warm the page cache
echo >"$T/trace"
echo 1 >"$T/events/msp_phases/enable"
echo 1 >"$T/events/sched/sched_process_exec/enable"
echo 1 >"$T/events/sched/sched_process_exit/enable"
for _ in $(seq 1 "$runs"); do "$msp" search --data-dir "$data_dir" "$question" >/dev/null; done
echo 0 >"$T/events/msp_phases/enable"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$T/trace" <<'EOF'
import re, statistics, sys
runs, at = [], None
for line in open(sys.argv[1]):
    m = re.search(r' (\d+\.\d+): (\S+?):', line)
    if line.startswith('#') or not m:
        continue
    t, ev = float(m.group(1)) * 1000, m.group(2)
    if ev == 'sched_process_exec':
        at = {'exec': t}
    elif at is None:
        continue
    elif ev == 'sched_process_exit':
        if 'group_dead=true' in line and 'print' in at:
            at['exit'] = t
            runs.append(at)
    else:
        at.setdefault(ev, t)
print('runs', len(runs))
for name, a, b in [('exec -> main', 'exec', 'main'), ('main -> open', 'main', 'openengine'),
                   ('open', 'openengine', 'openengine_r'), ('  SQLite', 'sqlite', 'sqlite_r'),
                   ('  Xapian', 'lexical', 'lexical_r'), ('open -> query', 'openengine_r', 'mset'),
                   ('Xapian query', 'mset', 'mset_r'), ('docids, first reads', 'mset_r', 'scorecold'),
                   ('cosines (ScoreCold)', 'scorecold', 'scorecold_r'),
                   ('records, passages', 'scorecold_r', 'print'), ('  cl100k table', 'cl100k', 'cl100k_r'),
                   ('print -> exit', 'print', 'exit'), ('exec -> exit', 'exec', 'exit')]:
    v = [r[b] - r[a] for r in runs if a in r and b in r]
    if v:
        print('%-22s %6.2f ms' % (name, statistics.median(v)))
EOF
