#!/usr/bin/env python3
"""searchd against the peer (scripts/peer/peer.py), interleaved: for each
round, mode (lexical, semantic, hybrid) and filter (none; half the channels
and the middle half of the time range), dsearch-bench and the peer each run
the same 8 queries N times, one after the other, the one that goes first
alternating. Prints each block as it ends, then p50/p95 over all rounds and
the ratios peer / searchd. `make peer-compare` runs it; docs/benchmarks.md,
"Against the peer, interleaved", has its results.
"""
import argparse
import os
import re
import sqlite3
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MODES = ["lexical", "semantic", "hybrid"]
# A request's line under -v, and the summary row, alike in both programs.
REQUEST = re.compile(r"^\s+(lexical|semantic|hybrid)\s+([\d.]+) ms\s")
ROW = re.compile(r"^(lexical|semantic|hybrid)\s+(\d+)\s+([\d.]+) ms\s+([\d.]+) ms\s+([\d.]+) ms\s+([\d.]+) ms$")


def pct(sorted_ms, q):
    # dsearch-bench's percentile
    return sorted_ms[min(len(sorted_ms) - 1, int(q * len(sorted_ms)))]


def run(cmd, mode, want):
    out = subprocess.run(cmd, capture_output=True, text=True)
    lines = out.stdout.splitlines()
    lat = [float(m.group(2)) for m in map(REQUEST.match, lines) if m and m.group(1) == mode]
    cpu = [float(m.group(6)) for m in map(ROW.match, lines) if m and m.group(1) == mode]
    if out.returncode != 0 or len(lat) != want or len(cpu) != 1:
        sys.exit(f"compare: {' '.join(cmd)} failed (exit {out.returncode}, {len(lat)} of {want} requests):\n"
                 f"{out.stdout[-2000:]}{out.stderr[-2000:]}")
    return lat, cpu[0]


def corpus_filter(data):
    """Every other channel that has messages, and the middle half of the
    corpus's time range."""
    db = sqlite3.connect(f"file:{os.path.join(data, 'dsearch.db')}?mode=ro", uri=True)
    channels = [r[0] for r in db.execute("SELECT DISTINCT channel_id FROM messages ORDER BY channel_id")][::2]
    lo, hi = db.execute("SELECT min(created_at), max(created_at) FROM messages").fetchone()
    return channels, lo + (hi - lo) // 4, hi - (hi - lo) // 4


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--data", default="build/bench-data", help="searchd's benchmark database (make bench imports it)")
    p.add_argument("--peer-db", default="build/peer.duckdb", help="the peer's database (built from --data if missing)")
    p.add_argument("--bench", default="bin/dsearch-bench")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("-n", type=int, default=20, help="runs of the 8 queries per block")
    p.add_argument("--modes", default=",".join(MODES))
    p.add_argument("--segments", type=int, default=29000, help="vectors on each side (dsearch-bench -segments)")
    p.add_argument("--dim", type=int, default=1024)
    p.add_argument("--direct", action="store_true",
                   help="the peer's lexical retrieval by BM25 over the fts tables, not the match_bm25 macro")
    a = p.parse_args()
    peer = [sys.executable, os.path.join(HERE, "peer.py")]
    if not os.path.exists(a.peer_db):
        print(f"building the peer's database {a.peer_db} from {a.data}", flush=True)
        subprocess.run(peer + ["build", "--data", a.data, "--out", a.peer_db,
                               "--vectors", str(a.segments), "--dim", str(a.dim)], check=True)
    have = subprocess.run(peer + ["count", "--db", a.peer_db], check=True, capture_output=True, text=True).stdout.strip()
    db = sqlite3.connect(f"file:{os.path.join(a.data, 'dsearch.db')}?mode=ro", uri=True)
    want_n = str(db.execute("SELECT count(*) FROM messages WHERE content <> ''").fetchone()[0])
    if have != want_n:
        sys.exit(f"compare: {a.peer_db} holds {have} messages, {a.data} {want_n}: remove {a.peer_db} to build it again")
    # Gives searchd's database its random vectors if it has none yet.
    subprocess.run([a.bench, "--data", a.data, "-segments", str(a.segments), "-dim", str(a.dim),
                    "-mode", "lexical", "-n", "1"], check=True, stdout=subprocess.DEVNULL)

    channels, since, until = corpus_filter(a.data)
    filters = {"none": ([], []),
               "filtered": (["-channels", ",".join(map(str, channels)), "-since", str(since), "-until", str(until)],
                            ["--channels", ",".join(map(str, channels)), "--since", str(since), "--until", str(until)])}
    print(f"filtered: channels {channels}, time {since}–{until} µs", flush=True)
    want = 8 * a.n
    results = {}  # (mode, filter, system) -> latencies in ms
    cpus = {}
    rounds = {}  # (mode, filter, system) -> each round's latencies
    loads = []
    block = 0
    for r in range(a.rounds):
        for mode in a.modes.split(","):
            for fname, (bench_args, peer_args) in filters.items():
                cmds = {"searchd": [a.bench, "--data", a.data, "-segments", str(a.segments), "-dim", str(a.dim),
                                    "-mode", mode, "-n", str(a.n), "-v"] + bench_args,
                        "peer": peer + ["bench", "--db", a.peer_db, "--mode", mode, "-n", str(a.n), "-v"] + peer_args
                        + (["--direct"] if a.direct else [])}
                order = ["searchd", "peer"] if block % 2 == 0 else ["peer", "searchd"]
                block += 1
                load = os.getloadavg()[0]
                line = []
                for system in order:
                    lat, cpu = run(cmds[system], mode, want)
                    results.setdefault((mode, fname, system), []).extend(lat)
                    rounds.setdefault((mode, fname, system), []).append(sorted(lat))
                    cpus.setdefault((mode, fname, system), []).append(cpu)
                    lat.sort()
                    line.append(f"{system} p50 {pct(lat, .5):.2f} p95 {pct(lat, .95):.2f} ms (CPU {cpu:.2f} ms)")
                loads.append(load)
                loads.append(os.getloadavg()[0])
                print(f"round {r + 1} {mode:<8} {fname:<8} load {load:5.2f}  " + ", ".join(line), flush=True)

    print(f"\n{time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC, {a.rounds} rounds × {a.n} runs of 8 queries "
          f"per block, load average (1 min) {min(loads):.1f}–{max(loads):.1f} on {os.cpu_count()} cores; "
          f"the peer's lexical retrieval {'direct BM25 over the fts tables' if a.direct else 'by match_bm25'}\n")
    print("| mode | filters | searchd p50 / p95 | peer p50 / p95 | p50 ratio | p95 ratio | p50 / p95 ratio by round "
          "| CPU/request searchd / peer |")
    print("|---|---|---|---|---|---|---|---|")
    for mode in a.modes.split(","):
        for fname in filters:
            s = sorted(results[(mode, fname, "searchd")])
            q = sorted(results[(mode, fname, "peer")])
            sc, qc = cpus[(mode, fname, "searchd")], cpus[(mode, fname, "peer")]
            print(f"| {mode} | {fname} | {pct(s, .5):.2f} / {pct(s, .95):.2f} ms | {pct(q, .5):.1f} / {pct(q, .95):.1f} ms "
                  f"| **{pct(q, .5) / pct(s, .5):.1f}×** | **{pct(q, .95) / pct(s, .95):.1f}×** "
                  f"| {by_round(rounds, mode, fname)} | {sum(sc) / len(sc):.2f} / {sum(qc) / len(qc):.1f} ms |")


def by_round(rounds, mode, fname):
    pairs = zip(rounds[(mode, fname, "searchd")], rounds[(mode, fname, "peer")])
    return ", ".join(f"{pct(q, .5) / pct(s, .5):.1f}× / {pct(q, .95) / pct(s, .95):.1f}×" for s, q in pairs)


if __name__ == "__main__":
    main()
