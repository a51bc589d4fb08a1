#!/usr/bin/env python3
"""Replays `searchd eval abstain --dump` lines under other confidence
rules without searching again (docs/retrieval.md, "Abstention"): a
question is refused when none of its first three results is confident.
A result is confident when

  its standout (z over the conversations compared, less where the best of
  n unrelated ones falls) is at least --z,
  or its support (--rare: weighted by word rarity) is at least --s,
  or, with --zm, its best message's standout over the messages rescored
  is at least --zm;

a standout is judged over --min-n conversations or more (fewer: not
judged, support alone). --correction says where the best of n falls:
"sqrt" (sqrt(2 ln n), what search uses) or "blom" (the expected maximum
of n normal scores, Blom's formula: lower for small n; measured worse,
docs/retrieval.md).

  scripts/abstain-replay.py DUMP.jsonl [DUMP2.jsonl ...] [--z Z] [--s S] [--zm ZM] [--rare]
  scripts/abstain-replay.py DUMP.jsonl [...] --grid

--grid prints the rules with the best worst margin against the targets
over every dump (answerable refused <= 5 %, recall@10 kept within 2
points, cross-set >= 90 %, LoCoMo in-domain >= 50 %).
"""
import argparse, collections, json, math, statistics


def load(path):
    return [json.loads(line) for line in open(path)]


def best_of(n, correction):
    """Where the best of n unrelated (normal) scores falls."""
    if correction == "sqrt":
        return math.sqrt(2 * math.log(n))
    p = (n - 0.375) / (n + 0.25)  # Blom
    return statistics.NormalDist().inv_cdf(p)


def evidence(row, a):
    """The best support, conversation standout and message standout among
    a question's first results (-inf where not judged): a question is
    refused when none passes its threshold, so the best of each decides."""
    ninf = float("-inf")
    s = z = zm = ninf
    for r in row["top"] or []:
        s = max(s, r.get("rare_support", r["support"]) if a.rare else r["support"])
        n = r.get("n", 0)
        if "n" not in r:  # an old dump: its standout as it was
            if r["standout"] != 0:
                z = max(z, r["standout"])
        elif n >= a.min_n and r.get("z", 0) != 0:
            z = max(z, r["z"] - best_of(n, a.correction))
        m = r.get("m", 0)
        if m >= a.min_n and r.get("message_z", 0) != 0:
            zm = max(zm, r["message_z"] - best_of(m, a.correction))
    return s, z, zm


def table(rows, a, feats=None):
    feats = feats or [evidence(r, a) for r in rows]
    zm = float("inf") if a.zm is None else a.zm
    t = collections.defaultdict(lambda: [0, 0, 0.0, 0.0])
    for r, (s, z, m) in zip(rows, feats):
        refused = s < a.s and z < a.z and m < zm
        k = (r["set"], r["kind"], r["via"])
        t[k][0] += 1
        t[k][1] += refused
        if r["recall10"] >= 0:
            t[k][2] += r["recall10"]
            t[k][3] += 0 if refused else r["recall10"]
    return t


def worst_margin(t):
    worst = float("inf")
    for (st, kind, _), (n, ref, rec, kept) in t.items():
        rate = 100 * ref / n
        if kind == "answerable":
            worst = min(worst, 5 - rate, 2 - 100 * (rec - kept) / n)
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
    ap.add_argument("--zm", type=float, default=None)
    ap.add_argument("--rare", action="store_true")
    ap.add_argument("--min-n", type=int, default=8)
    ap.add_argument("--correction", choices=["sqrt", "blom"], default="sqrt")
    a = ap.parse_args()
    dumps = {p: load(p) for p in a.dumps}
    if a.grid:
        out = []
        for a.correction in ["blom", "sqrt"]:
            for a.rare in [False, True]:
                feats = {p: [evidence(r, a) for r in rows] for p, rows in dumps.items()}
                for a.zm in [None] + [x / 4 for x in range(-4, 9)]:
                    for a.z in [x / 4 for x in range(-4, 13)]:
                        for a.s in [x / 20 for x in range(2, 21)]:
                            w = min(worst_margin(table(rows, a, feats[p])) for p, rows in dumps.items())
                            out.append((w, a.correction, a.rare, a.zm, a.z, a.s))
        out.sort(key=lambda x: -x[0])
        for w, c, rare, zm, z, s in out[:25]:
            print(f"worst margin {w:6.1f}  --correction {c} {'--rare ' if rare else ''}--z {z:.3f} --s {s:.2f}" + (f" --zm {zm:.2f}" if zm is not None else ""))
        return
    for p, rows in dumps.items():
        print(p)
        t = table(rows, a)
        for k in sorted(t, key=lambda k: (k[2], k[0], k[1])):
            n, ref, rec, kept = t[k]
            line = f"  {k[2]:6} {k[0]:11} {k[1]:10} {n:4}  refused {100 * ref / n:5.1f} %"
            if k[1] == "answerable":
                line += f"  R@10 {100 * rec / n:5.1f}  kept {100 * kept / n:5.1f}"
            print(line)
        print(f"  worst margin {worst_margin(t):.1f}")


main()
