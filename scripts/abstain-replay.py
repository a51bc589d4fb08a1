#!/usr/bin/env python3
"""Replays `searchd eval abstain --dump` lines under other confidence
thresholds without searching again (docs/retrieval.md, "Abstention"): a
question is refused when none of its first three results is confident, a
result being confident when its standout is at least Z or its support at
least S (support alone when it has no standout: 0).

  scripts/abstain-replay.py DUMP.jsonl [DUMP2.jsonl ...] [--z Z] [--s S]
  scripts/abstain-replay.py DUMP.jsonl [...] --grid

--grid prints the thresholds with the best worst margin against the
targets over every dump (answerable refused <= 5 %, cross-set >= 90 %,
LoCoMo in-domain >= 50 %).
"""
import argparse, collections, json


def load(path):
    return [json.loads(line) for line in open(path)]


def confident(r, z, s):
    if r["standout"] == 0:
        return r["support"] >= s
    return r["standout"] >= z or r["support"] >= s


def table(rows, z, s):
    t = collections.defaultdict(lambda: [0, 0, 0.0, 0.0])
    for r in rows:
        refused = not any(confident(x, z, s) for x in r["top"] or [])
        k = (r["set"], r["kind"], r["via"])
        t[k][0] += 1
        t[k][1] += refused
        if r["recall10"] >= 0:
            t[k][2] += r["recall10"]
            t[k][3] += 0 if refused else r["recall10"]
    return t


def worst_margin(t):
    worst = float("inf")
    for (st, kind, _), (n, ref, _, _) in t.items():
        rate = 100 * ref / n
        if kind == "answerable":
            worst = min(worst, 5 - rate)
        elif kind == "cross-set":
            worst = min(worst, rate - 90)
        elif st.startswith("locomo"):
            worst = min(worst, rate - 50)
    return worst


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dumps", nargs="+")
    ap.add_argument("--grid", action="store_true")
    ap.add_argument("--z", type=float, default=0.5)
    ap.add_argument("--s", type=float, default=0.5)
    a = ap.parse_args()
    dumps = {p: load(p) for p in a.dumps}
    if a.grid:
        out = []
        for z in [x / 8 for x in range(-4, 25)]:
            for s in [x / 20 for x in range(2, 21)]:
                out.append((min(worst_margin(table(rows, z, s)) for rows in dumps.values()), z, s))
        out.sort(key=lambda x: -x[0])
        for w, z, s in out[:15]:
            print(f"worst margin {w:6.1f}  --z {z:.3f}  --s {s:.2f}")
        return
    for p, rows in dumps.items():
        print(p)
        t = table(rows, a.z, a.s)
        for k in sorted(t, key=lambda k: (k[2], k[0], k[1])):
            n, ref, rec, kept = t[k]
            line = f"  {k[2]:6} {k[0]:11} {k[1]:10} {n:4}  refused {100 * ref / n:5.1f} %"
            if k[1] == "answerable":
                line += f"  R@10 {100 * rec / n:5.1f}  kept {100 * kept / n:5.1f}"
            print(line)


main()
