#!/usr/bin/env bash
# The native embedder against torch on the same MiniLM-L6-shaped random model
# (6 layers, hidden 384, 12 heads, intermediate 1536, vocabulary 30,522; ~91 MB
# of F32 weights), one thread each, in one run (bench/README.md, "Native
# embedder").
#
#   bench/native_bench.sh NATIVE_BENCH [NATIVE_BENCH ...]
#
# Each NATIVE_BENCH is a native_bench binary (e.g. one built with
# -DMSP_NATIVE_BLAS=openblas, one with blocked). The model is written to a
# temporary directory by scripts/make_bert.py (Debian's python3-torch, run
# with /usr/bin/python3) and removed at the end. Rounds alternate torch and
# msp (MSP_BENCH_ROUNDS, default 3) so that a change in the machine's load
# hits both; each prints one JSON line, then the ratios of the medians.
# Each binary runs fp32 and int8 (embedder.quantize; MSP_BENCH_QUANTIZE,
# default "none int8"); int8's line has its vectors' cosine to fp32's.
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: bench/native_bench.sh NATIVE_BENCH [NATIVE_BENCH ...]" >&2
  exit 2
fi
here="$(cd "$(dirname "$0")" && pwd)"
model="$(mktemp -d /tmp/msp-native-bench.XXXXXX)"
trap 'rm -rf "$model"' EXIT
rounds="${MSP_BENCH_ROUNDS:-3}"
# One core each: torch.set_num_threads(1) does not reach the OpenBLAS that
# Debian's torch calls (it would use every core), so both get one thread.
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
out="$model/results.jsonl"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
/usr/bin/python3 "$here/../scripts/make_bert.py" bench "$model" | tee -a "$out"
for ((r = 1; r < rounds; ++r)); do
  /usr/bin/python3 "$here/../scripts/make_bert.py" bench-torch "$model" | tee -a "$out"
done
for ((r = 0; r < rounds; ++r)); do
  for b in "$@"; do
    for q in ${MSP_BENCH_QUANTIZE:-none int8}; do "$b" "$model" 1 "$q" | tee -a "$out"; done
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
/usr/bin/python3 - "$out" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
by = {}
for r in rows:
    by.setdefault(r["backend"], []).append(r)
med = lambda rs, k: statistics.median(x[k] for x in rs)
torch = [k for k in by if k.startswith("torch")][0]
t_lat, t_thr = med(by[torch], "latency_p50_cpu_ms_seq32"), med(by[torch], "batch32_seq128_texts_per_cpu_s")
print("medians of %d rounds, CPU time (one thread):" % len(by[torch]))
print("%-30s %10s %12s %8s %8s %8s %s" % ("", "p50 ms @32", "texts/cpu-s", "load ms", "peak MB", "RSS MB", "cosine to fp32 min/mean"))
print("%-30s %10.2f %12.2f" % (torch, t_lat, t_thr))
for k, rs in by.items():
    if k == torch:
        continue
    lat, thr = med(rs, "latency_p50_cpu_ms_seq32"), med(rs, "batch32_seq128_texts_per_cpu_s")
    cos = ("%.5f/%.5f" % (min(x["cosine_to_fp32_min"] for x in rs), med(rs, "cosine_to_fp32_mean"))
           if rs[0].get("cosine_texts") else "")
    print("%-30s %10.2f %12.2f %8.1f %8.1f %8.1f %s   throughput %.2fx torch, latency %.2fx torch's"
          % ("msp " + k, lat, thr, med(rs, "load_ms_median"), med(rs, "peak_rss_mb"), med(rs, "rss_after_mb"), cos,
             thr / t_thr, lat / t_lat))
PY
