#!/usr/bin/env python3
"""Regenerates src/cli/hot_text.order: the functions a short-lived `msp`
process runs, which a release link places together at the start of the
program's text (lld --symbol-ordering-file; src/cli/CMakeLists.txt).

Why: a process's code comes in one page fault per 64 KB window it touches,
and on the virtual machines msp runs on such a fault costs ~20 us. Linked in
the order of the sources, the functions a resident `msp search` runs lie
scattered over 10 MB of text: 33 faults on msp's text (`msp version`: 11);
placed together, 11 (version: 3).

How: a release build of msp (MSP_HOT_TEXT=OFF or an older order: the list is
by name, not by place) runs each scenario below under valgrind's callgrind,
and every function of the msp binary that ran is listed, mangled, scenario
by scenario (the start every command runs first, then the resident search,
...), each scenario's new names sorted. Names the code no longer has are
ignored by the linker, so a stale list costs speed, never correctness.

    python3 scripts/hot_text.py --msp build/src/cli/msp [--out src/cli/hot_text.order]

Needs valgrind (apt-get install valgrind). Takes about a minute.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time


def callgrind_functions(msp, args, env, work, expect=None):
    """The mangled names of the msp binary's functions that ran. `expect`:
    text the command must print on standard error (the resident path says so
    under --timing)."""
    out = os.path.join(work, "callgrind.out")
    if os.path.exists(out):
        os.remove(out)
    cmd = ["valgrind", "--tool=callgrind", "--demangle=no", "--compress-strings=no",
           "--compress-pos=no", "--callgrind-out-file=" + out, msp] + args
    run = subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    if run.returncode != 0:
        sys.exit("hot_text: msp %s failed (exit %d):\n%s" % (" ".join(args), run.returncode, run.stderr[-2000:]))
    if expect is not None and expect not in run.stderr:
        sys.exit("hot_text: msp %s did not print %r:\n%s" % (" ".join(args), expect, run.stderr[-2000:]))
    binary = os.path.realpath(msp)
    names, seen, obj = [], set(), None
    with open(out, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("ob="):
                obj = os.path.realpath(line[3:].strip()) if line[3:].strip() else obj
            elif line.startswith("fn=") and obj == binary:
                # "'2": callgrind's mark of a recursion level, not the name.
                name = re.sub(r"'\d+$", "", line[3:].strip())
                if name and not name.startswith(("0x", "(")) and name not in seen:
                    seen.add(name)
                    names.append(name)
    return names


# The scenarios, most important first: every command starts as `msp version`
# does; hooks and scripts search, mostly with `msp serve` running; then the
# same search opening the store itself, and the common writes and reads.
QUESTION = "when did Caroline go to the support group"
RESIDENT = [("resident search", ["search", "--timing", QUESTION]),
            ("resident search --json", ["search", "--timing", "--json", "sunrise"])]
ALONE = [("search", ["search", QUESTION]),
         ("write", ["write", "--tag", "note", "The service restarts at 02:00 UTC every Sunday."]),
         ("episode add", ["episode", "add", "--session", "s2", "--text", "hello"]),
         ("list", ["list", "--limit", "5"]),
         ("stats", ["stats"]),
         ("help", ["help"])]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--msp", required=True, help="a release build's msp")
    p.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "src", "cli", "hot_text.order"))
    a = p.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("hot_text: valgrind is not installed (apt-get install valgrind)")
    msp = os.path.abspath(a.msp)
    if not os.access(msp, os.X_OK):
        sys.exit("hot_text: %s is not an executable msp" % msp)

    work = tempfile.mkdtemp(prefix="msp-hot-text-")
    data = os.path.join(work, "data")
    env = dict(os.environ, MSP_DATA_DIR=data, MSP_SERVER_ALLOW_ANONYMOUS="true")
    env.pop("MSP_CONFIG", None)
    quiet = dict(stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def msp_run(*args):
        r = subprocess.run([msp] + list(args), env=env, **quiet)
        if r.returncode != 0:
            sys.exit("hot_text: msp %s failed (exit %d)" % (" ".join(args), r.returncode))

    lists = []
    try:
        msp_run("init")
        for text in ["Caroline went to the LGBTQ support group on 7 May 2023.",
                     "Melanie painted a sunrise over the lake last year.",
                     "The deploy runbook: drain the node, then restart the service."]:
            msp_run("episode", "add", "--session", "s1", "--text", text)
        lists.append(("version", callgrind_functions(msp, ["version"], env, work)))
        server = subprocess.Popen([msp, "serve", "--port", "0", "--access-log", "false"], env=env, **quiet)
        try:
            sock = os.path.join(data, "msp.sock")
            for _ in range(600):
                if os.path.exists(sock):
                    break
                time.sleep(0.05)
            else:
                sys.exit("hot_text: msp serve did not open %s" % sock)
            for label, args in RESIDENT:
                lists.append((label, callgrind_functions(msp, args, env, work, "answered by the msp server")))
        finally:
            server.terminate()
            server.wait(timeout=60)
        for label, args in ALONE:
            lists.append((label, callgrind_functions(msp, args, env, work)))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    # Each scenario's new names sorted: every one of them runs in that
    # scenario, so their order within it matters little, and a sorted list
    # changes by the lines the code changed.
    ordered, seen, added = [], set(), []
    for label, names in lists:
        new = sorted(set(names) - seen)
        seen.update(new)
        ordered.extend(new)
        added.append("%s +%d" % (label, len(new)))
    with open(a.out, "w", encoding="utf-8") as f:
        f.write("\n".join(ordered) + "\n")
    print("hot_text: %d functions written to %s (%s)" % (len(ordered), os.path.normpath(a.out), ", ".join(added)))


if __name__ == "__main__":
    main()
