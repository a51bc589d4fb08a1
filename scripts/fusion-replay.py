#!/usr/bin/env python3
"""Replays fusions of hybrid search over the candidates an eval dumped.

`searchd eval retrieval --mode hybrid --dump FILE` writes, per question,
each retriever's scored messages (the top 100 of each that hybrid fuses),
the relevant messages, how the query read and the model's reading of it. This script ranks them again
by each fusion tried in docs/retrieval.md ("Fusion") and prints recall@10:

    scripts/fusion-replay.py SET=DUMP[:EXPORT_DIR] ...

EXPORT_DIR (the set's export) gives channel sizes for the whole-channel
z-score row; without it that row is left out.
"""
import glob
import json
import math
import statistics
import sys

W = 100  # candidates per retriever, as search.Config.Window


def z(lst):
    if not lst:
        return {}
    v = [s for _, s in lst]
    m, sd = statistics.mean(v), statistics.pstdev(v)
    return {i: ((s - m) / sd if sd else 0.0) for i, s in lst}


def minmax(lst):
    if not lst:
        return {}
    v = [s for _, s in lst]
    lo, r = min(v), (max(v) - min(v)) or 1
    return {i: (s - lo) / r for i, s in lst}


def ranked(scores, first=None):
    return sorted(scores, key=lambda i: (first is not None and i not in first, -scores[i], i))


def rrf_kind(q):  # the fusion before: RRF k = 60, the classifier's weights
    lw = 0.5 if q["kind"] == "conceptual" else 1
    sw = 0.5 if q["kind"] == "exact" else 1
    sc = {}
    for w, lst in ((lw, q["L"]), (sw, q["S"])):
        for r, (i, _) in enumerate(lst):
            sc[i] = sc.get(i, 0) + w / (60 + r + 1)
    return ranked(sc)


def combsum(norm, exact_first=False, sem_conf=False, unread_first=False, by_reading=False, lw=1.0):
    def f(q):
        L, S = norm(q["L"]), norm(q["S"])
        c = 1.0
        if sem_conf:  # semantic weighted by how far its top stands out
            c = min(1, max(0, (max(S.values(), default=0) - 1) / 2))
        if by_reading:  # semantic weighted by the model's reading of the query
            c = q["reading"]
        unread = unread_first and q["unread"]
        # unread: a lexical candidate's lexical z alone, the hits first
        sc = {i: L[i] if unread and i in L else lw * L.get(i, 0) + c * S.get(i, 0) for i in set(L) | set(S)}
        first = exact_first and q["kind"] == "exact" or unread
        return ranked(sc, set(L) if first else None)
    return f


def channel_z(q):  # lexical z over the whole channel, unlisted messages 0
    v = [s for _, s in q["L"]]
    L = {}
    if v:
        n = max(q["N"], len(v))
        mu = sum(v) / n
        sd = math.sqrt(max(sum(x * x for x in v) / n - mu * mu, 1e-12))
        L = {i: (s - mu) / sd for i, s in q["L"]}
    lmiss = -mu / sd if v else 0
    S = z(q["S"])
    smiss = min(S.values(), default=0)
    sc = {i: L.get(i, lmiss) + S.get(i, smiss) for i in set(L) | set(S)}
    return ranked(sc)


FUSIONS = [
    ("lexical", lambda q: [i for i, _ in q["L"]]),
    ("semantic", lambda q: [i for i, _ in q["S"]]),
    ("RRF k = 60, kind weights (before)", rrf_kind),
    ("min-max normalized sum", combsum(minmax)),
    ("z-score sum", combsum(z)),
    ("z-score sum, an exact query's hits first (before)", combsum(z, exact_first=True)),
    ("z-score sum, exact hits first, semantic weighted by the reading", combsum(z, exact_first=True, by_reading=True)),
    ("z-score sum, exact hits first, lexical alone first for a query the model cannot read (before)",
     combsum(z, exact_first=True, unread_first=True)),
    ("... and the lexical z-scores weighted 0.75 (chosen)", combsum(z, exact_first=True, unread_first=True, lw=0.75)),
    ("... weighted 0.6", combsum(z, exact_first=True, unread_first=True, lw=0.6)),
    ("... weighted 0.5", combsum(z, exact_first=True, unread_first=True, lw=0.5)),
    ("... weighted 0.3", combsum(z, exact_first=True, unread_first=True, lw=0.3)),
    ("z-score sum, semantic weighted by how far its top stands out", combsum(z, exact_first=True, sem_conf=True)),
    ("lexical z over the whole channel (unlisted messages score 0)", channel_z),
]


def load(dump, export):
    sizes = {}
    if export:
        for f in glob.glob(export + "/*.json"):
            d = json.load(open(f))
            ch = str(d["channel"]["id"])
            sizes[ch] = sizes.get(ch, 0) + len(d["messages"])
    qs = []
    for line in open(dump):
        d = json.loads(line)
        if "candidates" not in d:
            continue
        c = d["candidates"]
        qs.append({
            "rel": {str(x) for x in d["relevant"]},
            "kind": d["kind"],
            "reading": d.get("reading", 1),
            "unread": d.get("unread", False),
            "L": [(str(x["id"]), x["score"]) for x in (c.get("lexical") or [])][:W],
            "S": [(str(x["id"]), x["score"]) for x in (c.get("semantic") or [])][:W],
            "N": sizes.get(d["channel_id"], 0),
        })
    return qs


def recall10(qs, fuse):
    return 100 * sum(len(set(fuse(q)[:10]) & q["rel"]) / len(q["rel"]) for q in qs if q["rel"]) / len(qs)


def main(args):
    sets = []
    for a in args:
        name, _, rest = a.partition("=")
        dump, _, export = rest.partition(":")
        sets.append((name, load(dump, export), bool(export)))
    print("| fusion | " + " | ".join(n for n, _, _ in sets) + " |")
    print("|---|" + "---|" * len(sets))
    for label, fuse in FUSIONS:
        if fuse is channel_z and not all(e for _, _, e in sets):
            continue
        print(f"| {label} | " + " | ".join(f"{recall10(qs, fuse):.1f}" for _, qs, _ in sets) + " |")
    # How far each list's best candidate stands above the rest of its list:
    # why lexical z-scores are weighed down ("Fusion").
    for side, name in (("L", "lexical"), ("S", "semantic")):
        tops = lambda qs: [max(z(q[side]).values()) for q in qs if len(q[side]) > 2]
        print(f"| median z of the {name} list's best | " +
              " | ".join(f"{statistics.median(tops(qs)):.1f}" if tops(qs) else "-" for _, qs, _ in sets) + " |")


if __name__ == "__main__":
    main(sys.argv[1:] or sys.exit(__doc__))
