#!/usr/bin/env python3
"""msp as an agent's tool meets it: one `msp search` process per question,
started from Python's subprocess (as agent frameworks and scripts call
command-line tools), beside `msp version` (the floor: starting msp at all),
alternately, on LoCoMo questions of conversations the retrieval was not
tuned on (5..9, 0-based: the held-out half, by default).

    python3 bench/agent_caller.py MSP DATA_DIR [--mode auto|direct] [--questions N] [--rounds R]
                                  [--questions-from DIR] [--search-args "ARGS"] [--skip N]

--mode auto (default): msp's defaults, so the first search finds no server
  and starts one (server.resident_autostart; docs/cli.md, "The resident
  path"); the first 12 searches are printed one by one, and the figures are
  taken from the 41st on, when the server is warm.
--mode direct: MSP_SERVER_RESIDENT_AUTOSTART=0 and no server: each search
  opens the store itself.
Before each round any server on DATA_DIR is asked to give its socket up
(the resign call a user's `msp serve` sends) and the start mark is set back,
so every round starts as a fresh user's would. Prints, per round, the p50
of search and version and the median of the pair-by-pair ratios.
--questions-from DIR: instead of LoCoMo, queries made from the text files
  under DIR (documents msp was not built against, e.g. a store made by
  `msp ingest DIR --mission M`): the first 8 words of lines of 6 to 30
  words, in an order fixed by a seed. --search-args: more arguments for
  every search (e.g. "--mission M"). --skip N: leave out the first N
  queries, so a change tuned on them is measured on others.
"""
import argparse
import json
import os
import random
import re
import shlex
import socket
import statistics
import struct
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def resign(data_dir):
    """Asks a server started by a command on data_dir to stop; waits for it."""
    path = os.path.join(data_dir, "msp.sock")
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(5)
            s.connect(path)
            body = json.dumps({"v": 1, "resign": True}).encode()
            s.sendall(struct.pack(">I", len(body)) + body)
            s.recv(4096)
    except OSError:
        return
    for _ in range(100):
        if not os.path.exists(path):
            return
        time.sleep(0.05)


def questions_from(root):
    """Queries from the text of the files under root (see --questions-from)."""
    lines = []
    for base, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            try:
                with open(os.path.join(base, name), errors="ignore") as f:
                    text = f.read()
            except OSError:
                continue
            for line in text.splitlines():
                words = re.findall(r"[A-Za-z][A-Za-z0-9'-]+", line)
                if 6 <= len(words) <= 30 and "<" not in line:
                    lines.append(" ".join(words[:8]))
    random.Random(7).shuffle(lines)
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("msp")
    ap.add_argument("data_dir")
    ap.add_argument("--mode", choices=["auto", "direct"], default="auto")
    ap.add_argument("--questions", type=int, default=120)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--locomo", default=os.environ.get(
        "MSP_LOCOMO", os.path.join(HERE, "..", "..", "shared", "bench-data", "locomo10.json")))
    ap.add_argument("--conversations", default="5:10", help="FROM:TO, 0-based, TO exclusive")
    ap.add_argument("--questions-from", help="DIR: queries from the text files under it, not LoCoMo")
    ap.add_argument("--search-args", default="", help="more arguments for every search")
    ap.add_argument("--skip", type=int, default=0,
                    help="leave out the first N queries (e.g. those a change was tuned on)")
    a = ap.parse_args()
    if a.questions_from:
        if not os.path.isdir(a.questions_from):
            ap.error("--questions-from: %s is not a directory" % a.questions_from)
        questions = questions_from(a.questions_from)
        if not questions:
            ap.error("--questions-from: no line of 6 to 30 words in the files under %s" % a.questions_from)
    else:
        lo, hi = (int(x) for x in a.conversations.split(":"))
        questions = [qa["question"] for conv in json.load(open(a.locomo))[lo:hi] for qa in conv["qa"]]
    if a.skip < 0:
        ap.error("--skip must be >= 0, got %d" % a.skip)
    if a.skip >= len(questions):
        ap.error("--skip %d leaves no query (there are %d)" % (a.skip, len(questions)))
    questions = questions[a.skip : a.skip + a.questions]
    search_args = shlex.split(a.search_args)
    env = dict(os.environ)
    if a.mode == "direct":
        env["MSP_SERVER_RESIDENT_AUTOSTART"] = "0"

    def run(args):
        t = time.perf_counter()
        subprocess.run(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        return (time.perf_counter() - t) * 1000

    with open("/proc/loadavg") as f:
        print("load before:", " ".join(f.read().split()[:3]))
    for r in range(a.rounds):
        resign(a.data_dir)
        lock = os.path.join(a.data_dir, "msp.sock.lock")
        if os.path.exists(lock):
            long_ago = time.time() - 3600
            os.utime(lock, (long_ago, long_ago))
        version, search = [], []
        for q in questions:
            version.append(run([a.msp, "version"]))
            search.append(run([a.msp, "--data-dir", a.data_dir, "search", q] + search_args))
        skip = 40 if len(questions) > 60 else 0
        s, v = search[skip:], version[skip:]
        print("round %d, %s: first 12 searches (ms) %s" % (r + 1, a.mode, " ".join("%.0f" % x for x in search[:12])))
        print("round %d, %s: searches %d..%d p50 %.1f ms, msp version p50 %.1f ms, search / version %.2fx"
              % (r + 1, a.mode, skip + 1, len(search), statistics.median(s), statistics.median(v),
                 statistics.median([x / y for x, y in zip(s, v)])))
    resign(a.data_dir)
    with open("/proc/loadavg") as f:
        print("load after:", " ".join(f.read().split()[:3]))


if __name__ == "__main__":
    main()
