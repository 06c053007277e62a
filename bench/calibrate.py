#!/usr/bin/env python3
"""Fits msp's score calibration (src/core/calibration.cc) and prints its curve.

Input: the JSONL of `locomo_eval --features-out FILE`: for each LoCoMo question
its top 10 (each hit's relative score, the query's match, the tokens it
shows), the same question asked of the next conversation ("wrong": nothing
there is about it) and word-salad queries ("salad"). A hit is relevant when
it comes from a session that holds the question's answer (one of its
evidence turns' sessions): the part of memory the query is about. With
--label turn, only when it is an evidence turn itself (a stricter label the
lexical ranking cannot reach with confidence: its best hit is an evidence
turn about half the time, so no score would reach 0.7).

The curve is logit = bias + w_relative x relative + w_match x match +
w_rank x ln(1 + rank) (rank: the hit's place, 0 first), fitted by maximum
likelihood (Newton's method) on the tuning half (conversations 0-4) only; the held-out half (5-9) is reported apart. Then, per min_score:
turn recall_all@10 of the questions, the tokens the kept hits show, the
share of questions answered with nothing, and the share of wrong / salad
queries answered with nothing.

usage: bench/calibrate.py FEATURES.jsonl [--label session|turn] [--coef BIAS,W_REL,W_MATCH,W_RANK]
(--coef: report the curve of given coefficients instead of fitting)
"""
import json
import math
import sys


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


TOP = 10
LABEL = "session"


def session_of(dia_id):
    return dia_id.split(":")[0]


def relevant(r, h):
    if r["kind"] != "question":
        return False
    if LABEL == "turn":
        return h["id"] in r["evidence"]
    return session_of(h["id"]) in {session_of(e) for e in r["evidence"]}


def samples(rows, half):
    out = []
    for r in rows:
        if half(r["conversation"]):
            for rank, h in enumerate(r["hits"][:TOP]):
                out.append((features(h, rank), 1.0 if relevant(r, h) else 0.0))
    return out


def features(h, rank):
    return (1.0, h["relative"], h["match"], math.log1p(rank))


def fit(data, iterations=50, ridge=1e-6):
    k = len(data[0][0])
    w = [0.0] * k
    for _ in range(iterations):
        g = [0.0] * k
        hess = [[0.0] * k for _ in range(k)]
        for x, y in data:
            p = 1.0 / (1.0 + math.exp(-sum(wi * xi for wi, xi in zip(w, x))))
            for i in range(k):
                g[i] += (y - p) * x[i]
                for j in range(k):
                    hess[i][j] += p * (1 - p) * x[i] * x[j]
        for i in range(k):
            hess[i][i] += ridge
        step = solve(hess, g)
        w = [wi + si for wi, si in zip(w, step)]
        if max(abs(s) for s in step) < 1e-9:
            break
    return w


def solve(a, b):
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        for r in range(n):
            if r != c:
                f = m[r][c] / m[c][c]
                for k in range(c, n + 1):
                    m[r][k] -= f * m[c][k]
    return [m[i][n] / m[i][i] for i in range(n)]


def score(w, h, rank):
    return 1.0 / (1.0 + math.exp(-sum(wi * xi for wi, xi in zip(w, features(h, rank)))))


def curve(rows, w, half, name):
    print(f"\n{name}")
    print("| min_score | recall_all@10 | tokens@10 | hits kept | questions with nothing | cat 5 with nothing "
          "| wrong-conversation with nothing | word salad with nothing | precision of kept |")
    print("|---|---|---|---|---|---|---|---|---|")
    qs = [r for r in rows if half(r["conversation"]) and r["kind"] == "question"]
    for t in [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]:
        recall = tokens = kept = empty = c5 = c5_empty = rel_kept = 0
        for r in qs:
            hits = [h for rank, h in enumerate(r["hits"][:TOP]) if score(w, h, rank) >= t]
            ids = {h["id"] for h in hits}
            recall += set(r["evidence"]) <= ids
            tokens += sum(h["tokens"] for h in hits)
            kept += len(hits)
            rel_kept += sum(relevant(r, h) for h in hits)
            empty += not hits
            if r["category"] == 5:
                c5 += 1
                c5_empty += not hits
        neg = {}
        for kind in ("wrong", "salad"):
            rs = [r for r in rows if half(r["conversation"]) and r["kind"] == kind]
            none = sum(all(score(w, h, rank) < t for rank, h in enumerate(r["hits"][:TOP])) for r in rs)
            neg[kind] = none / max(1, len(rs))
        n = max(1, len(qs))
        print(f"| {t:.1f} | {recall / n:.3f} | {tokens / n:.0f} | {kept / n:.2f} | {empty / n:.3f} | "
              f"{c5_empty / max(1, c5):.3f} | {neg['wrong']:.3f} | {neg['salad']:.3f} | "
              f"{rel_kept / max(1, kept):.3f} |")


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    global LABEL
    rows = load(sys.argv[1])
    if "--label" in sys.argv:
        LABEL = sys.argv[sys.argv.index("--label") + 1]
    tuning = lambda c: c < 5
    held = lambda c: c >= 5
    if "--coef" in sys.argv:
        w = [float(x) for x in sys.argv[sys.argv.index("--coef") + 1].split(",")]
    else:
        w = fit(samples(rows, tuning))
    print(f"bias {w[0]:.4f}, w_relative {w[1]:.4f}, w_match {w[2]:.4f}, w_rank {w[3]:.4f}")
    curve(rows, w, tuning, "tuning half (conversations 0-4), fitted here")
    curve(rows, w, held, "held-out half (conversations 5-9)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
