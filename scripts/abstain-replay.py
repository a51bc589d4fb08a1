#!/usr/bin/env python3
"""Replays `searchd eval abstain --dump` lines under other confidence
rules without searching again (docs/retrieval.md, "Abstention"): a
question is refused when none of its first three results is confident.
A result is confident when

  its standout (z over the conversations compared, less where the best of
  n unrelated ones falls) is at least --z,
  or its lead (how far its similarity stands above the best other
  conversation's, in the query's spreads: above 0 only for the most
  similar) is at least --lead,
  or its support (the share of the query's content words in its
  messages beyond those as much text holds by chance; --share: the
  share found, the rule before; --rare: the share weighted by word
  rarity) is at least --s and it holds at least --found of the query's
  content words (all of them, when the query has fewer), and, where
  its standout is judged and the dump has it, its messages nearer the
  query than the average message rescored hold some of the words
  beyond chance (the dump's "near_support" above 0, search's
  --support-near; --no-near: anywhere),
  or, with --zm, its best message's standout over the messages rescored
  is at least --zm,
  or, with --agree, it is first by both the lexical and the semantic
  retriever (hybrid, as /v1/query searches: /v1/search's default mode
  has no lexical side),
  or, with --cos / --mcos, its similarity / its best message's
  (absolute cosines: one model's) is at least that,
  or its closeness is at least --copy (0.4, search's; inf: off): its
  similarity's share of the way from the query's mean similarity over
  the conversations compared to the query's similarity to itself
  embedded as a passage (1: as close as a copy; the dump's "self",
  "mean", "std"; --copy-other, 0.304, search's, for a result mostly in
  another script than the query, the dump's "other_script", which can
  only be a translation: 0 holds it to --copy, and the grid moves it in
  proportion to --copy), or, with --gap, it is within that many of the
  query's spreads of that ceiling;

or, with --together (0.6, search's; inf: off), the response's first
results together hold that share of the query's content words beyond
what their length of text holds by chance (the dump's "together", over
its first ten, as search judges it; from a dump without it, over the
first three, from "terms": each word's messages holding it and its
share p of the other messages): a question's answer told over several
conversations, as LoCoMo's multi-hop ones are;

a standout or lead is judged over --min-n conversations or more (fewer:
not judged, support alone). --correction says where the best of n falls:
"sqrt" (sqrt(2 ln n), what search uses) or "blom" (the expected maximum
of n normal scores, Blom's formula: lower for small n; measured worse,
docs/retrieval.md).

  scripts/abstain-replay.py DUMP.jsonl [DUMP2.jsonl ...] [--z Z] [--lead L] [--s S] [--found F] [--zm ZM] [--share | --rare] [--agree] [--cos C] [--mcos C]
  scripts/abstain-replay.py DUMP.jsonl [...] [--copy C] [--copy-other C] [--gap G] [--together T] [--no-near]
  scripts/abstain-replay.py DUMP.jsonl [...] --grid [--no-lead] [--grid-copy]

--grid prints the rules with the best worst margin against the targets
over every dump (answerable refused <= 5 %, recall@10 kept within 2
points, cross-set >= 90 %, LoCoMo in-domain >= 50 %), for each how many
targets it meets and on how many it misses by more or by less than the
reference rule (the other flags: by default search's own), and then the
rules that would be better whatever the targets weigh (missing none by
more, one by less); --no-lead leaves the lead out of the grid,
--grid-copy adds the copy share's thresholds; --together keeps its threshold
through the grid.
"""
import argparse, collections, itertools, json, math, statistics

INF = float("inf")


def load(path):
    return [json.loads(line) for line in open(path)]


def best_of(n, correction):
    """Where the best of n unrelated (normal) scores falls."""
    if correction == "sqrt":
        return math.sqrt(2 * math.log(n))
    p = (n - 0.375) / (n + 0.25)  # Blom
    return statistics.NormalDist().inv_cdf(p)


def results(row, a):
    """Each of a question's first results as (support, found, words,
    standout, lead, message standout, agreement, cosine, message
    cosine, copy share, gap to the copy's ceiling),
    -inf (gap: inf) where not judged."""
    out = []
    for r in row["top"] or []:
        words = r.get("words", 0)
        s = r.get("rare_support", r["support"]) if a.rare else r["support"]
        if a.share:
            s = r["found"] / words if words else 1
        found = r.get("found", words)  # an old dump: found unknown, not held back
        z = lead = zm = -INF
        n = r.get("n", 0)
        if "n" not in r:  # an old dump: its standout as it was
            if r["standout"] != 0:
                z = r["standout"]
        elif n >= a.min_n and r.get("z", 0) != 0:
            z = r["z"] - best_of(n, a.correction)
            if "lead" in r:
                lead = r["lead"]
            if not a.no_near and r.get("near_support", 1) <= 0:
                s = -INF  # its words are not where its meaning is
        m = r.get("m", 0)
        if m >= a.min_n and r.get("message_z", 0) != 0:
            zm = r["message_z"] - best_of(m, a.correction)
        agree = r.get("semantic_rank") == 1 and r.get("lexical_rank") == 1
        copy, gap = -INF, INF
        if z != -INF and r.get("self", 0) > r.get("mean", 0) and r.get("std", 0) > 0:
            copy = (r["cosine"] - r["mean"]) / (r["self"] - r["mean"])
            gap = (r["self"] - r["cosine"]) / r["std"]
            if r.get("other_script") and a.copy_other > 0 and a.copy not in (0, INF):
                copy *= a.copy / a.copy_other  # clears --copy when it clears --copy-other
        out.append((s, found, words, z, lead, zm, agree, r.get("cosine", -INF), r.get("message_cosine") or -INF, copy, gap))
    return out


def together(row, k=3):
    """The share of the query's content words that the first results
    hold between them beyond chance: the dump's own "together" (search's,
    over its first ten), else from the first k's per-word evidence, their
    summed length (an approximation: the chance of each word left out
    only the first's own messages); -inf without either."""
    top = (row["top"] or [])[:k]
    if top and "together" in top[0]:
        return top[0]["together"]
    terms = [r.get("terms") for r in top]
    if not top or any(t is None for t in terms) or not terms[0]:
        return -INF
    length = sum(r.get("length", 0) for r in top)
    found = sum(any(t[i]["held"] > 0 for t in terms) for i in range(len(terms[0])))
    expected = sum(1 - (1 - w["p"]) ** length for w in terms[0])
    return (found - expected) / len(terms[0])


def confident(res, z, lead, s, found, zm, agree=False, cos=INF, mcos=INF, copy=INF, gap=-INF):
    rs, rf, rw, rz, rl, rzm, ragree, rcos, rmcos, rcopy, rgap = res
    return (rz >= z or rl >= lead or rzm >= zm or rs >= s and rf >= min(found, rw)
            or agree and ragree or rcos >= cos or rmcos >= mcos or rcopy >= copy or rgap <= gap)


def table(rows, a, res=None):
    res = res or [results(r, a) for r in rows]
    zm = INF if a.zm is None else a.zm
    t = collections.defaultdict(lambda: [0, 0, 0.0, 0.0])
    for r, rr in zip(rows, res):
        refused = not any(confident(x, a.z, a.lead, a.s, a.found, zm, a.agree, a.cos, a.mcos, a.copy, a.gap) for x in rr)
        refused = refused and together(r) < a.together
        k = (r["set"], r["kind"], r["via"])
        t[k][0] += 1
        t[k][1] += refused
        if r["recall10"] >= 0:
            t[k][2] += r["recall10"]
            t[k][3] += 0 if refused else r["recall10"]
    return t


def margins(t):
    """Each target's margin: how far it is met (>= 0) or missed (< 0)."""
    out = []
    for (st, kind, _), (n, ref, rec, kept) in t.items():
        rate = 100 * ref / n
        if kind == "answerable":
            out += [5 - rate, 2 - 100 * (rec - kept) / n]
        elif kind == "cross-set":
            out.append(rate - 90)
        elif st.startswith("locomo"):
            out.append(rate - 50)
    return out


def worst_margin(t):
    return min(margins(t))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dumps", nargs="+")
    ap.add_argument("--grid", action="store_true")
    ap.add_argument("--no-lead", action="store_true")
    ap.add_argument("--z", type=float, default=1.0)
    ap.add_argument("--lead", type=float, default=INF)
    ap.add_argument("--s", type=float, default=0.4)
    ap.add_argument("--found", type=int, default=1)
    ap.add_argument("--zm", type=float, default=None)
    ap.add_argument("--rare", action="store_true")
    ap.add_argument("--share", action="store_true")
    ap.add_argument("--agree", action="store_true")
    ap.add_argument("--cos", type=float, default=INF)
    ap.add_argument("--mcos", type=float, default=INF)
    ap.add_argument("--copy", type=float, default=0.4)
    ap.add_argument("--copy-other", type=float, default=0.304)
    ap.add_argument("--gap", type=float, default=-INF)
    ap.add_argument("--grid-copy", action="store_true")
    ap.add_argument("--together", type=float, default=0.6)
    ap.add_argument("--no-near", action="store_true")
    ap.add_argument("--min-n", type=int, default=8)
    ap.add_argument("--correction", choices=["sqrt", "blom"], default="sqrt")
    a = ap.parse_args()
    dumps = {p: load(p) for p in a.dumps}
    if a.grid:
        # Per question, the best of each piece of evidence over its first
        # results (support: among those holding enough words), so that a
        # rule is a few comparisons.
        feats = {}
        for p, rows in dumps.items():
            feats[p] = []
            for r in rows:
                rr = results(r, a)
                best = lambda f: max(f(x) for x in rr) if rr else -INF
                feats[p].append((best(lambda x: x[3]), best(lambda x: x[4]),
                                 [best(lambda x: x[0] if x[1] >= min(f, x[2]) else -INF) for f in (1, 2, 3)],
                                 best(lambda x: x[9]), together(r)))
        leads = [INF] if a.no_lead else [INF] + [x / 4 for x in range(2, 11)]
        copies = [INF] + ([x / 20 for x in range(6, 19)] if a.grid_copy else [])

        def run(z, lead, s, found, copy=INF):
            ms = []
            for p, rows in dumps.items():
                t = collections.defaultdict(lambda: [0, 0, 0.0, 0.0])
                for r, (fz, fl, fs, fc, tg) in zip(rows, feats[p]):
                    refused = fz < z and fl < lead and fs[found - 1] < s and fc < copy and tg < a.together
                    k = t[(r["set"], r["kind"], r["via"])]
                    k[0] += 1
                    k[1] += refused
                    if r["recall10"] >= 0:
                        k[2] += r["recall10"]
                        k[3] += 0 if refused else r["recall10"]
                ms += margins(t)
            return ms

        # Compared target by target with the rule the other flags give
        # (by default search's own): a rule that misses no target by more
        # and one by less would be better whatever the targets weigh.
        ref = run(a.z, a.lead, a.s, a.found, a.copy)
        out = []
        for z, lead, s, found, copy in itertools.product(
                [x / 8 for x in range(0, 9)] + [INF], leads, [x / 20 for x in range(6, 15)] + [INF], [1, 2, 3], copies):
            if s == INF and found > 1:
                continue
            ms = run(z, lead, s, found, copy)
            worse = sum(min(0, m) < min(0, r) - 1e-9 for m, r in zip(ms, ref))
            better = sum(min(0, m) > min(0, r) + 1e-9 for m, r in zip(ms, ref))
            out.append((min(ms), sum(m >= 0 for m in ms), len(ms), worse, better, z, lead, s, found, copy))
        out.sort(key=lambda x: (-x[0], -x[1]))
        show = lambda o: print(f"worst margin {o[0]:6.1f}  targets met {o[1]:2}/{o[2]}  missed by more/less than the reference {o[3]:2}/{o[4]:2}"
                               f"  --z {o[5]} --lead {o[6]} --s {o[7]} --found {o[8]}"
                               + (f" --copy {o[9]}" if o[9] != INF else ""))
        for o in out[:20]:
            show(o)
        dominating = [o for o in out if o[3] == 0 and o[4] > 0]
        print(f"rules missing no target by more than the reference and one by less: {len(dominating)}")
        for o in dominating[:10]:
            show(o)
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
        ms = margins(t)
        print(f"  worst margin {min(ms):.1f}, targets met {sum(m >= 0 for m in ms)}/{len(ms)}")


main()
