#!/usr/bin/env python3
"""How much of the exact top 10 a sign-sketch first pass keeps, over the
real vectors of a searchd database (docs/benchmarks.md, "A first pass by
sketches"). The corpus is every segment and message vector; 300 message
vectors are the queries (each skips itself). For each share of the corpus
kept as candidates, it prints the share of the exact top 10 among the
closest by sketch: raw signs, centred signs (what searchd does), and the
query's own values against the rows' centred signs (asymmetric). Needs numpy.

  scripts/sketch-recall.py DATA/dsearch.db
"""
import sqlite3
import sys

import numpy as np


def load(db, table):
    out = []
    for (b,) in sqlite3.connect(db).execute(f"SELECT vector FROM {table} WHERE vector IS NOT NULL"):
        scale = np.frombuffer(b[:4], dtype="<f4")[0]
        out.append(np.frombuffer(b[4:], dtype=np.int8).astype(np.float32) * scale)
    return np.array(out)


def main():
    db = sys.argv[1]
    segments, messages = load(db, "segment_vectors"), load(db, "message_vectors")
    corpus = np.concatenate([segments, messages])
    rng = np.random.default_rng(0)
    queries = messages[rng.choice(len(messages), min(300, len(messages)), replace=False)]
    mean = corpus.mean(0)
    signs = (corpus - mean) > 0
    print(f"corpus {corpus.shape}")
    for share in (0.005, 0.01, 0.02, 0.04, 0.08):
        keep = max(10, int(share * len(corpus)))
        for way in ("raw signs", "centred signs", "asymmetric"):
            kept = []
            for q in queries:
                top = np.argsort(-(corpus @ q))[1:11]  # the first is the query itself
                if way == "raw signs":
                    estimate = -((q > 0)[None, :] != (corpus > 0)).sum(1)
                elif way == "centred signs":
                    estimate = -(((q - mean) > 0)[None, :] != signs).sum(1)
                else:
                    estimate = (signs * 2 - 1) @ (q - mean)
                closest = set(np.argsort(-estimate)[: keep + 1])
                kept.append(np.mean([t in closest for t in top]))
            print(f"{keep:6} candidates ({100 * share:.1f} %), {way}: {100 * np.mean(kept):.1f} % of the exact top 10")


main()
