#!/usr/bin/env python3
"""Replays hybrid's lexical-support rule over the candidates an eval dumped.

`searchd eval retrieval --mode hybrid --dump FILE` writes, per question,
each retriever's scored messages. Hybrid fuses the lexical side only when
one of its first 10 hits holds a share (--lexical-support, 0.25) of the
query's content words (search/fusion.go); this script ranks the dumped
candidates again with the rule at several shares, and without it, and
prints R@1 / R@10 / MRR per set:

    scripts/lexical-support-replay.py SET=DUMP ...

SET is the set's directory under ../shared/eval (its export gives the
messages' text and the authors' names, its queries.jsonl the questions).
The content words and support are search/confidence.go's (topicTerms,
support), names of the channel's authors taken out as the search does;
a dump made with the rule on ranks the same candidates.
"""
import glob
import json
import os
import re
import statistics
import sys

EVAL = os.environ.get("DSEARCH_EVAL", os.path.join(os.path.dirname(__file__), "..", "..", "shared", "eval"))
W = 100  # candidates per retriever, as search.Config.Window
HITS = 10  # lexical hits looked at, as search.supportHits

STOP = set("""the and for with what who whom whose which when where why how did does was were are
has have had that this these those from about into than then there their they them she her his him you your
our not any all can could would should will say said tell told talk talked conversation chat
happen happened happens happening""".split())
DATE_NAMES = set("""january february march april may june july august september october november december
monday tuesday wednesday thursday friday saturday sunday""".split())
KOREAN_QUESTION = ["언제", "누가", "누구", "무엇", "뭐", "어디", "어떻게", "어떤", "어느", "왜", "몇", "얼마",
                   "했", "한다", "하는", "하고", "하다", "말했", "말한", "얘기", "이야기"]
DATES = re.compile(r"[0-9]+\s*(년|월|일|시|분|주|개월)?")


def cjk(c):
    o = ord(c)
    return 0x1100 <= o <= 0x11FF or 0x3130 <= o <= 0x318F or 0xAC00 <= o <= 0xD7AF or \
        0x3040 <= o <= 0x30FF or 0x3400 <= o <= 0x4DBF or 0x4E00 <= o <= 0x9FFF


def terms(text):  # lexical.EachTerm: runs of letters and digits, a CJK run its own
    out, cur, is_cjk = [], [], False
    for c in text + " ":
        if cjk(c) or c.isalnum() or c == "_":
            if cur and cjk(c) != is_cjk:
                out.append(("".join(cur).lower(), is_cjk))
                cur = []
            is_cjk = cjk(c)
            cur.append(c)
        elif cur:
            out.append(("".join(cur).lower(), is_cjk))
            cur = []
    return out


def topic_terms(text):  # search.topicTerms
    out = []
    for t, c in terms(DATES.sub(" ", text)):
        if (t, c) in out:
            continue
        if not c and len(t) >= 3 and t not in STOP and t not in DATE_NAMES or \
                c and len(t) >= 2 and not any(t.startswith(p) for p in KOREAN_QUESTION):
            out.append((t, c))
    return out


def support(ts, text):  # search.support over one message
    if not ts:
        return 1.0
    found = terms(text)
    words = {w[:4] for w, c in found if not c}
    joined = " ".join(w for w, c in found if c)
    return sum(1 for t, c in ts if (t[:2] in joined if c else t[:4] in words)) / len(ts)


def without_names(query, names):  # search.NamesIn, roughly: whole words
    kept = [w for w in query.split()
            if re.sub(r"'s$", "", w.strip(".,!?;:()'\"“”’").lower()) not in names]
    return " ".join(kept) if kept else query


def z(lst):
    if not lst:
        return {}
    v = [s for _, s in lst]
    m, sd = statistics.mean(v), statistics.pstdev(v)
    return {i: ((s - m) / sd if sd else 0.0) for i, s in lst}


def load(name, dump):
    texts, names = {}, {}
    for f in glob.glob(os.path.join(EVAL, name, "*.json")):
        d = json.load(open(f))
        ch = str(d["channel"]["id"])
        for m in d["messages"]:
            texts[str(m["id"])] = m["content"]
            a = m["author"]
            names.setdefault(ch, set()).update(n.lower() for n in (a.get("name"), a.get("nickname")) if n)
    questions = {}
    for line in open(os.path.join(EVAL, name, "queries.jsonl")):
        d = json.loads(line)
        questions[d["id"]] = d
    qs = []
    for line in open(dump):
        d = json.loads(line)
        if "candidates" not in d:
            continue
        c = d["candidates"]
        L = [(str(x["id"]), x["score"]) for x in (c.get("lexical") or [])][:W]
        S = [(str(x["id"]), x["score"]) for x in (c.get("semantic") or [])][:W]
        q = questions[d["id"]]
        ts = topic_terms(without_names(q["query"], names.get(q["channel_id"], set())))
        qs.append({"rel": set(d["relevant"]), "kind": d["kind"], "unread": d.get("unread", False), "L": L, "S": S,
                   "support": max((support(ts, texts.get(i, "")) for i, _ in L[:HITS]), default=0)})
    return qs


def hybrid(least, lw=0.5):
    def rank(q):
        left_out = least > 0 and not q["unread"] and q["L"] and q["support"] < least
        L = {} if left_out else z(q["L"])
        S = z(q["S"])
        if q["unread"]:
            sc = {i: L[i] if i in L else S.get(i, 0) for i in set(L) | set(S)}
        else:
            sc = {i: lw * L.get(i, 0) + S.get(i, 0) for i in set(L) | set(S)}
        first = L.keys() if (q["kind"] == "exact" or q["unread"]) and not left_out else ()
        return sorted(sc, key=lambda i: (i not in first, -sc[i], int(i)))
    return rank


def metrics(qs, rank):
    r1 = r10 = rr = 0
    for q in qs:
        r = rank(q)
        r1 += len(set(r[:1]) & q["rel"]) / len(q["rel"])
        r10 += len(set(r[:10]) & q["rel"]) / len(q["rel"])
        rr += next((1 / (k + 1) for k, i in enumerate(r) if i in q["rel"]), 0)
    n = len(qs)
    return f"{100 * r1 / n:.1f} / {100 * r10 / n:.1f} / {rr / n:.3f}"


def main(args):
    sets = [(a.partition("=")[0], load(a.partition("=")[0].split("/")[0], a.partition("=")[2])) for a in args]
    print("| R@1 / R@10 / MRR | " + " | ".join(n for n, _ in sets) + " |")
    print("|---|" + "---|" * len(sets))
    rows = [("semantic", lambda q: [i for i, _ in q["S"]]), ("hybrid, lexical always fused", hybrid(0))]
    rows += [(f"lexical fused when a hit holds {s:g} of the words", hybrid(s)) for s in (0.1, 0.2, 0.25, 0.3, 0.34, 0.5)]
    for label, rank in rows:
        print(f"| {label} | " + " | ".join(metrics(qs, rank) for _, qs in sets) + " |")
    print("| questions left out at 0.25 | " + " | ".join(
        str(sum(1 for q in qs if q["L"] and not q["unread"] and q["support"] < 0.25)) for _, qs in sets) + " |")


if __name__ == "__main__":
    main(sys.argv[1:] or sys.exit(__doc__))
