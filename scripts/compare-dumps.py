#!/usr/bin/env python3
"""Compares two runs of `searchd eval retrieval --dump` question by question.

    scripts/compare-dumps.py QUERIES BEFORE.jsonl AFTER.jsonl [K]

QUERIES is the set's queries.jsonl (the relevant messages and categories).
It prints recall@K (10 unless given) of both runs per category and overall,
and how many questions AFTER ranks better and worse than BEFORE: a change
of a point over a few hundred questions means more when it comes from many
questions one way than from a few each way.
"""
import collections
import json
import sys


def recalls(dump, queries, k):
    out = {}
    for line in open(dump):
        d = json.loads(line)
        q = queries[d["id"]]
        rel = {str(x) for x in q["relevant"]}
        if rel:
            out[d["id"]] = len(rel & {str(x) for x in d["ranked"][:k]}) / len(rel)
    return out


def main(args):
    if len(args) not in (3, 4):
        sys.exit(__doc__)
    queries = {}
    for line in open(args[0]):
        q = json.loads(line)
        queries[q["id"]] = q
    k = int(args[3]) if len(args) == 4 else 10
    a, b = recalls(args[1], queries, k), recalls(args[2], queries, k)
    ids = sorted(set(a) & set(b))
    by = collections.defaultdict(list)
    for i in ids:
        by[str(queries[i].get("category", "all"))].append(i)
    if len(by) > 1:
        by["all"] = ids
    print(f"| category | questions | before R@{k} | after R@{k} | better | worse |")
    print("|---|---|---|---|---|---|")
    for cat, qs in sorted(by.items(), key=lambda kv: (kv[0] == "all", kv[0])):
        ra = 100 * sum(a[i] for i in qs) / len(qs)
        rb = 100 * sum(b[i] for i in qs) / len(qs)
        better = sum(b[i] > a[i] for i in qs)
        worse = sum(b[i] < a[i] for i in qs)
        print(f"| {cat} | {len(qs)} | {ra:.1f} | {rb:.1f} | {better} | {worse} |")


if __name__ == "__main__":
    main(sys.argv[1:])
