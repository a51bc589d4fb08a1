#!/usr/bin/env python3
"""Replays `searchd eval abstain --dump` lines under other confidence
thresholds, without searching again: a question is refused when none of
its first three results is confident, a result being confident when its
standout is at least Z, or at least Z2 with a support of at least S.

  scripts/abstain-replay.py DUMP.jsonl [DUMP2.jsonl ...] [--grid] [--z Z --z2 Z2 --s S]

With --grid, prints the thresholds that meet the targets on every dump
(answerable refused <= 5 %, cross-set >= 90 %, in-domain >= 50 %), best
first by the worst margin; otherwise the table for the given thresholds.
"""
import argparse, collections, itertools, json

def load(path):
    return [json.loads(l) for l in open(path)]

def confident(r, z, z2, s, lexical_s):
    st, sup = r["standout"], r["support"]
    if st == 0:  # not judged by standout: support alone
        return sup >= lexical_s
    return st >= z or (st >= z2 and sup >= s)

def table(rows, z, z2, s):
    t = collections.defaultdict(lambda: [0, 0, 0.0, 0.0, 0])
    for r in rows:
        refused = not any(confident(x, z, z2, s, s) for x in r["top"])
        k = (r["set"], r["kind"], r["via"])
        t[k][0] += 1
        t[k][1] += refused
        if r["recall10"] >= 0:
            t[k][4] += 1
            t[k][2] += r["recall10"]
            t[k][3] += 0 if refused else r["recall10"]
    return t

def margins(t):
    worst = 1e9
    for (st, kind, via), (n, ref, rec, kept, na) in t.items():
        rate = 100 * ref / n
        need = {"answerable": 5 - rate, "cross-set": rate - 90, "in-domain": rate - 50}[kind]
        if kind == "in-domain" and not st.startswith("locomo"):
            continue  # the target is LoCoMo's
        worst = min(worst, need)
    return worst

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dumps", nargs="+")
    ap.add_argument("--grid", action="store_true")
    ap.add_argument("--z", type=float, default=3)
    ap.add_argument("--z2", type=float, default=1.5)
    ap.add_argument("--s", type=float, default=0.5)
    a = ap.parse_args()
    dumps = {p: load(p) for p in a.dumps}
    if a.grid:
        out = []
        for z, z2, s in itertools.product([x / 4 for x in range(4, 25)], [x / 4 for x in range(0, 17)], [x / 10 for x in range(1, 11)]):
            if z2 > z:
                continue
            w = min(margins(table(rows, z, z2, s)) for rows in dumps.values())
            out.append((w, z, z2, s))
        out.sort(reverse=True)
        for w, z, z2, s in out[:15]:
            print(f"worst margin {w:6.1f}  z {z:.2f}  z2 {z2:.2f}  s {s:.1f}")
        return
    for p, rows in dumps.items():
        print(p)
        t = table(rows, a.z, a.z2, a.s)
        for k in sorted(t, key=lambda k: (k[2], k[0], k[1])):
            n, ref, rec, kept, na = t[k]
            line = f"  {k[2]:6} {k[0]:11} {k[1]:10} {n:4}  refused {100*ref/n:5.1f} %"
            if na:
                line += f"  R@10 {100*rec/na:5.1f}  kept {100*kept/na:5.1f}"
            print(line)

main()
