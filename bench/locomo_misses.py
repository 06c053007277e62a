#!/usr/bin/env python3
"""Which LoCoMo questions msp's lexical retrieval misses, and why (issue 23).

Reads `locomo_eval --ranks OUT` (per question, the rank of each evidence turn in
msp's top 200; 0: not in it) and the dataset, and sorts every question whose
evidence is not all in the top 10 into one of two classes:

  semantic  a missing evidence turn shares no content word with the question
            (after lower-casing, dropping English function words and the
            conversation's two speaker names, and cutting common suffixes):
            no lexical signal can find it; it needs an embedder that matches
            meaning ("disburse her recipes" / "teaching people how to make this").
  lexical   every missing turn shares a content word with the question: a
            lexical ranking could in principle have found it.

A lexical miss is also marked "tied" when some missing turn has at least 10
other turns in its conversation that hold every question word it holds (and
maybe more): no weighting of the question's words can then lift it above all
ten; only term frequency, length or context (neighbours, session) orders it
among them. The TSV gives that count per missing turn.

Writes one TSV row per missed question (--out) and prints, per category and per
half (conversations 0-4, the tuning half; 5-9, held out), the questions, the
misses of each class, turn recall_all@10, and recall_all@10 over the questions
that have no semantic-only miss.

  build/bench/locomo_eval --system msp --ranks /tmp/ranks.jsonl
  python3 bench/locomo_misses.py --ranks /tmp/ranks.jsonl --out /tmp/misses.tsv

The word check is deliberately crude (no stemmer, no synonyms): it names the
questions that share nothing with their evidence, not every question a better
ranking could answer.
"""

import argparse
import json
import os
import re
import sys
from collections import defaultdict

STOP = set("""
a about above after again against all am an and any are aren't as at be because been before being below between
both but by can could did didn't do does doesn't doing don't down during each few for from further had has have
having he her here hers herself him himself his how i if in into is isn't it it's its itself just let's me more most
my myself no nor not of off on once only or other ought our ours ourselves out over own same she should so some such
than that that's the their theirs them themselves then there there's these they this those through to too under
until up very was we were what what's when where which while who whom why will with would you your yours yourself
yourselves also did do get got go going like really yeah yes oh hey hi thanks thank much lot one ever still
""".split())

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


def stem(word):
    for suffix in ("ing", "ed", "es", "s", "ly"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def content_words(text, names):
    words = re.findall(r"[a-z0-9']+", text.lower())
    return {stem(w.strip("'")) for w in words if w.strip("'") and w.strip("'") not in STOP and w.strip("'") not in names}


def turn_texts(conversation):
    texts = {}
    for key, value in conversation.items():
        if not re.fullmatch(r"session_\d+", key):
            continue
        for turn in value:
            text = turn.get("text", "")
            if turn.get("blip_caption"):
                text += " " + turn["blip_caption"]
            texts[turn["dia_id"]] = text
    return texts


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--ranks", required=True, help="locomo_eval --ranks output (JSONL)")
    parser.add_argument("--data", default=os.environ.get("MSP_LOCOMO",
                                                         os.path.join(here, "..", "..", "shared", "bench-data",
                                                                      "locomo10.json")))
    parser.add_argument("--out", help="write the missed questions as TSV here")
    parser.add_argument("--depth", type=int, default=10, help="top k a question's evidence must all be in (10)")
    args = parser.parse_args()

    with open(args.data) as f:
        samples = json.load(f)
    order = [s["sample_id"] for s in samples]
    texts = {s["sample_id"]: turn_texts(s["conversation"]) for s in samples}
    names = {s["sample_id"]: {s["conversation"]["speaker_a"].lower(), s["conversation"]["speaker_b"].lower()}
             for s in samples}

    # stats[half][category] = [questions, hit, semantic misses, lexical misses]
    stats = defaultdict(lambda: defaultdict(lambda: [0, 0, 0, 0]))
    tied = defaultdict(int)  # lexical misses per half whose missing turn is tied with >= 10 turns
    words = {conv: {t: content_words(x, names[conv]) for t, x in texts[conv].items()} for conv in texts}
    rows = []
    with open(args.ranks) as f:
        for number, line in enumerate(f, 1):
            q = json.loads(line)
            conv = q["conversation"]
            if conv not in texts:
                sys.exit(f"{args.ranks}:{number}: conversation {conv} is not in {args.data}")
            half = "0-4" if order.index(conv) < 5 else "5-9"
            missing = [t for t, rank in q["evidence"].items() if rank == 0 or rank > args.depth]
            question_words = content_words(q["question"], names[conv])
            semantic = [t for t in missing if not (content_words(texts[conv].get(t, ""), names[conv]) & question_words)]
            cls = "hit" if not missing else ("semantic" if semantic else "lexical")
            # How many other turns hold every question word each missing turn holds.
            supersets = {}
            for t in missing:
                shared = words[conv].get(t, set()) & question_words
                supersets[t] = sum(1 for d, w in words[conv].items() if d != t and shared <= w) if shared else 0
            if cls == "lexical" and max(supersets.values()) >= 10:
                tied[half] += 1
                tied["all"] += 1
            for h in (half, "all"):
                s = stats[h][q["category"]]
                s[0] += 1
                s[{"hit": 1, "semantic": 2, "lexical": 3}[cls]] += 1
            if missing:
                rows.append((conv, q["category"], cls, " ".join(f"{t}@{q['evidence'][t] or '>200'}" for t in missing),
                             " ".join(semantic), " ".join(f"{t}:{supersets[t]}" for t in missing), q["question"]))

    if args.out:
        with open(args.out, "w") as f:
            f.write("conversation\tcategory\tclass\tmissing (turn@rank)\tsharing no content word\t"
                    "turns holding every question word it holds (turn:count)\tquestion\n")
            for r in rows:
                f.write("\t".join(str(x) for x in r) + "\n")

    for half in ("0-4", "5-9", "all"):
        print(f"conversations {half}" if half != "all" else "all conversations")
        print(f"  {'category':<14} {'n':>5} {'missed':>7} {'semantic':>9} {'lexical':>8} {'all@10':>7} "
              f"{'all@10 w/o semantic':>20}")
        total = [0, 0, 0, 0]
        for cat in sorted(stats[half]):
            s = stats[half][cat]
            total = [a + b for a, b in zip(total, s)]
            print_row(CATEGORIES.get(cat, str(cat)), s)
        print_row("overall", total)
        print(f"  lexical misses tied with >= 10 turns (no word weighting lifts them): {tied[half]} of {total[3]}")


def print_row(label, s):
    n, hit, sem, lex = s
    reachable = n - sem
    print(f"  {label:<14} {n:>5} {sem + lex:>7} {sem:>9} {lex:>8} {hit / n:>7.3f} "
          f"{(hit / reachable if reachable else 0):>20.3f}")


if __name__ == "__main__":
    main()
