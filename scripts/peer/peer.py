#!/usr/bin/env python3
"""The peer of issue 28: Slackquery's retrieval design (../shared/seeds/
slackquery-retrieval-and-rrf.txt) on DuckDB, over the messages of a searchd
database, timed the way dsearch-bench times searchd.

  peer.py build --data D --out PEER.duckdb   copy D's messages, index them
  peer.py bench --db PEER.duckdb --mode M    time the fixed query set
  peer.py query --db PEER.duckdb --mode M Q  print one search's page

Lexical: DuckDB's own fts extension (the signed 1.4.4 binary, from PyPI's
duckdb-ext-fts), BM25 via its match_bm25 macro, stemmer none, stopwords
none, lowercase, accent stripping. Semantic: an exact
array_cosine_similarity scan over the filtered stored vectors. Hybrid:
reciprocal rank fusion (k 60, weights 1) of each retriever's top 100,
the filters applied to each retriever before fusion, then the page joined
back to the messages. Vectors are random unit vectors: a scan's cost does
not depend on their values. See docs/benchmarks.md, "Against the peer,
interleaved".
"""
import argparse
import csv
import glob
import hashlib
import importlib.util
import math
import os
import random
import re
import resource
import sqlite3
import sys
import tempfile
import time

import duckdb

# dsearch-bench's query set (searchd/cmd/dsearch-bench/main.go, `queries`):
# keep the two in step.
QUERIES = [
    ("이사 집 전세", []),
    ("보일러 수리", []),
    ("ranked game tonight", ["game"]),
    ("deploy server bug deadline", []),
    ("치킨 맥주 저녁", []),
    ("coding interview", ["면접"]),
    ("금리 환율 주식", []),
    ("weather coffee weekend", []),
]

PAGE = 10         # searchd's default page (search.DefaultLimit)
WINDOW = 100      # candidates per retriever before fusion (both systems)
RRF_K = 60
MAX_QUERY_CHARS = 1000
MAX_QUERY_TOKENS = 64


def connect(path, read_only=False):
    """Opens the peer database with DuckDB's fts extension loaded from the
    pinned PyPI package: DuckDB checks the binary's signature (unsigned
    extensions stay refused) and never downloads anything."""
    con = duckdb.connect(path, read_only=read_only)
    con.execute("SET autoinstall_known_extensions = false")
    con.execute("SET autoload_known_extensions = false")
    con.execute("LOAD '" + fts_binary().replace("'", "''") + "'")
    return con


def fts_binary():
    """The fts extension for this DuckDB release, from duckdb-ext-fts or
    duckdb-extension-fts (two packagings of the same signed binary)."""
    for package in ("duckdb_ext", "duckdb_extension_fts"):
        spec = importlib.util.find_spec(package)
        for root in (spec.submodule_search_locations if spec else []):
            found = glob.glob(os.path.join(root, "extensions", "v" + duckdb.__version__, "**", "fts.duckdb_extension"),
                              recursive=True)
            if found:
                return found[0]
    sys.exit(f"peer: no fts extension for DuckDB {duckdb.__version__} (make peer installs it)")


def build(args):
    if os.path.exists(args.out):
        sys.exit(f"peer: {args.out} exists; remove it to build again")
    src = sqlite3.connect(f"file:{os.path.join(args.data, 'dsearch.db')}?mode=ro", uri=True)
    con = connect(args.out)
    con.execute("""CREATE TABLE messages (id BIGINT PRIMARY KEY, channel_id BIGINT NOT NULL,
        author_id BIGINT NOT NULL, ts_us BIGINT NOT NULL, text VARCHAR NOT NULL)""")
    start = time.time()
    # Through a CSV file: DuckDB's reader is far faster than row inserts.
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "messages.csv")
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            n = 0
            for row in src.execute("""SELECT id, channel_id, author_id, created_at, content
                    FROM messages WHERE content <> '' ORDER BY id"""):
                w.writerow(row)
                n += 1
        con.execute("INSERT INTO messages SELECT * FROM read_csv(?, header = false, quote = '\"', escape = '\"', "
                    "columns = {'id': 'BIGINT', 'channel_id': 'BIGINT', 'author_id': 'BIGINT', "
                    "'ts_us': 'BIGINT', 'text': 'VARCHAR'})", [path])
    print(f"{n} messages copied in {time.time() - start:.1f} s")
    start = time.time()
    # The extension's defaults otherwise: its 1.4 ignore pattern (digits
    # and ASCII punctuation) keeps Hangul, and words split on whitespace.
    con.execute("PRAGMA create_fts_index('messages', 'id', 'text', stemmer = 'none', "
                "stopwords = 'none', lower = 1, strip_accents = 1)")
    print(f"fts index built in {time.time() - start:.1f} s")
    start = time.time()
    con.execute("SELECT setseed(0.28)")
    # Random unit vectors for a random sample of messages, as dsearch-bench
    # gives searchd's segments; each with its message's channel, author and
    # time, so that the filters restrict the scan itself (joining every
    # message to the vectors cost 3-4x the scan).
    con.execute(f"""CREATE TABLE vectors AS
        WITH picked AS (SELECT id, channel_id, author_id, ts_us FROM messages ORDER BY hash(id) LIMIT {args.vectors}),
        raw AS (SELECT *, list_transform(range({args.dim}), j -> random() * 2 - 1) AS v FROM picked),
        normed AS (SELECT *, sqrt(list_sum(list_transform(v, y -> y * y))) AS n FROM raw)
        SELECT id, channel_id, author_id, ts_us, list_transform(v, x -> x / n)::FLOAT[{args.dim}] AS embedding
        FROM normed ORDER BY id""")
    con.execute("CHECKPOINT")
    n = con.execute("SELECT count(*) FROM vectors").fetchone()[0]
    print(f"{n} × {args.dim} vectors in {time.time() - start:.1f} s")


def safe_query(q):
    """Slackquery's query handling: capped, an allowlist of word characters,
    at most 64 tokens, then quoted for the generated macro's SQL."""
    tokens = re.findall(r"\w+", q[:MAX_QUERY_CHARS])[:MAX_QUERY_TOKENS]
    return "'" + " ".join(tokens).replace("'", "''") + "'"


class Peer:
    def __init__(self, con, dim, channels=(), since=0, until=0, direct=False):
        self.con, self.dim = con, dim
        if direct:
            self.lexical = self.lexical_direct
        conds, params = [], []
        if channels:
            conds.append(f"m.channel_id IN ({', '.join('?' * len(channels))})")
            params += list(channels)
        if since:
            conds.append("m.ts_us >= ?")
            params.append(since)
        if until:
            conds.append("m.ts_us <= ?")
            params.append(until)
        self.filter_sql, self.filter_params = conds, params

    def where(self, keywords):
        """The metadata filters, and each keyword as a required word (the
        fts index's own terms), for every retriever."""
        conds, params = list(self.filter_sql), list(self.filter_params)
        for k in keywords:
            conds.append("""m.id IN (SELECT d.name FROM fts_main_messages.dict w
                JOIN fts_main_messages.terms t ON t.termid = w.termid
                JOIN fts_main_messages.docs d ON d.docid = t.docid
                WHERE w.term IN (SELECT unnest(fts_main_messages.tokenize(?))))""")
            params.append(k)
        return (" AND " + " AND ".join(conds)) if conds else "", params

    def lexical(self, q, keywords, limit, columns="m.id"):
        where, params = self.where(keywords)
        return self.con.execute(f"""SELECT {columns}, fts_main_messages.match_bm25(m.id, {safe_query(q)}) AS score
            FROM messages m WHERE score IS NOT NULL{where}
            ORDER BY score DESC, m.id LIMIT {limit}""", params).fetchall()

    def lexical_direct(self, q, keywords, limit, columns="m.id"):
        """The macro's BM25 (k1 1.2, b 0.75) over the extension's own
        tables, written to score only the documents holding a query term:
        the same ranking, without the macro's join over every message
        (peer.py --direct; docs/benchmarks.md)."""
        where, params = self.where(keywords)
        return self.con.execute(f"""WITH qterms AS (
                SELECT termid, df FROM fts_main_messages.dict
                WHERE term IN (SELECT DISTINCT unnest(fts_main_messages.tokenize({safe_query(q)})))),
            tf AS (SELECT t.docid, t.termid, count(*) AS tf
                FROM fts_main_messages.terms t JOIN qterms USING (termid) GROUP BY ALL),
            scored AS (SELECT d.name AS id, sum(log((s.num_docs - q.df + 0.5) / (q.df + 0.5) + 1)
                    * tf.tf * 2.2 / (tf.tf + 1.2 * (1 - 0.75 + 0.75 * d.len / s.avgdl))) AS score
                FROM tf JOIN qterms q USING (termid) JOIN fts_main_messages.docs d USING (docid),
                    fts_main_messages.stats s
                GROUP BY d.name)
            SELECT {columns}, score FROM scored JOIN messages m ON m.id = scored.id WHERE true{where}
            ORDER BY score DESC, m.id LIMIT {limit}""", params).fetchall()

    def semantic(self, q, keywords, limit, columns="m.id"):
        # The vector goes in as text: the Python client binds a list of
        # 1,024 floats in about 200 ms of CPU, more than the scan.
        where, params = self.where(keywords)
        vec = "[" + ",".join(f"{x:.9g}" for x in query_vector(q, self.dim)) + "]"
        return self.con.execute(f"""WITH hits AS (
                SELECT m.id, array_cosine_similarity(m.embedding, CAST(?::VARCHAR AS FLOAT[{self.dim}])) AS score
                FROM vectors m WHERE true{where} ORDER BY score DESC, m.id LIMIT {limit})
            SELECT {columns}, score FROM hits JOIN messages m ON m.id = hits.id
            ORDER BY score DESC, m.id""", [vec] + params).fetchall()

    def hybrid(self, q, keywords, limit):
        fused, parts = {}, {}
        for name, hits in (("lexical", self.lexical(q, keywords, WINDOW)),
                           ("semantic", self.semantic(q, keywords, WINDOW))):
            for rank, (mid, score) in enumerate(hits, 1):
                fused[mid] = fused.get(mid, 0.0) + 1.0 / (RRF_K + rank)
                parts.setdefault(mid, {})[name] = (rank, score)
        page = sorted(fused, key=lambda mid: (-fused[mid], mid))[:limit]
        if not page:
            return []
        rows = {r[0]: r for r in self.con.execute(
            f"SELECT id, channel_id, author_id, ts_us, text FROM messages WHERE id IN ({', '.join('?' * len(page))})",
            page).fetchall()}
        return [rows[mid] + (fused[mid], parts[mid]) for mid in page]

    def search(self, mode, q, keywords, limit=PAGE):
        if mode == "hybrid":
            return self.hybrid(q, keywords, limit)
        return getattr(self, mode)(q, keywords, limit, "m.id, m.channel_id, m.author_id, m.ts_us, m.text")


def query_vector(q, dim):
    """A fixed random unit vector per query text (dsearch-bench's
    randomEmbedder does the same): the query's embedding is not timed."""
    r = random.Random(hashlib.sha256(q.encode()).digest())
    v = [r.gauss(0, 1) for _ in range(dim)]
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v]


def open_peer(args):
    con = connect(args.db, read_only=True)
    columns = {r[0] for r in con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'vectors'").fetchall()}
    if "channel_id" not in columns:
        sys.exit(f"peer: {args.db} was built by an older peer.py; remove it to build it again")
    dim = con.execute("SELECT array_length(embedding) FROM vectors LIMIT 1").fetchone()[0]
    channels = [int(c) for c in args.channels.split(",") if c.strip()] if args.channels else []
    return Peer(con, dim, channels, args.since, args.until, args.direct)


def bench(args):
    peer = open_peer(args)
    for q, kw in QUERIES:  # warm the page cache and DuckDB's, untimed
        peer.search(args.mode, q, kw)
    lat = []
    cpu = resource.getrusage(resource.RUSAGE_SELF)
    for _ in range(args.n):
        for q, kw in QUERIES:
            t = time.perf_counter()
            peer.search(args.mode, q, kw)
            lat.append(time.perf_counter() - t)
            if args.v:  # the format of dsearch-bench -v
                print(f"  {args.mode:<9} {lat[-1] * 1000:8.2f} ms  \"{q}\" {kw}", flush=True)
    now = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (now.ru_utime + now.ru_stime - cpu.ru_utime - cpu.ru_stime) / len(lat)
    lat.sort()
    ms = lambda s: f"{s * 1000:.2f} ms"
    pct = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))]
    # dsearch-bench's table, so one parser reads both
    print(f"{'mode':<9} {'requests':>9} {'p50':>9} {'p95':>9} {'max':>9} {'CPU/request':>13}")
    print(f"{args.mode:<9} {len(lat):>9} {ms(pct(0.5)):>9} {ms(pct(0.95)):>9} {ms(lat[-1]):>9} {ms(cpu):>13}")


def count(args):
    print(connect(args.db, read_only=True).execute("SELECT count(*) FROM messages").fetchone()[0])


def query(args):
    peer = open_peer(args)
    for row in peer.search(args.mode, args.q, args.keywords, args.limit):
        print(*row, sep="\t")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="copy a searchd database's messages into a new peer database")
    b.add_argument("--data", required=True, help="searchd data directory (read only)")
    b.add_argument("--out", required=True, help="the DuckDB file to create")
    b.add_argument("--vectors", type=int, default=29000, help="messages given vectors (dsearch-bench -segments)")
    b.add_argument("--dim", type=int, default=1024, help="vector dimension (dsearch-bench -dim)")
    sub.add_parser("count", help="print how many messages the peer holds").add_argument("--db", required=True)
    for name, helptext in (("bench", "time the fixed query set"), ("query", "print one search's page")):
        s = sub.add_parser(name, help=helptext)
        s.add_argument("--db", required=True)
        s.add_argument("--mode", choices=["lexical", "semantic", "hybrid"], required=True)
        s.add_argument("--channels", default="", help="comma-separated channel IDs")
        s.add_argument("--since", type=int, default=0, help="µs, inclusive")
        s.add_argument("--until", type=int, default=0, help="µs, inclusive")
        s.add_argument("--direct", action="store_true",
                       help="lexical retrieval by BM25 over the fts tables, not by the match_bm25 macro")
        if name == "bench":
            s.add_argument("-n", type=int, default=3, help="runs of the query set")
            s.add_argument("-v", action="store_true", help="print each request's latency")
        else:
            s.add_argument("--keyword", dest="keywords", action="append", default=[], help="a required word (repeatable)")
            s.add_argument("--limit", type=int, default=PAGE)
            s.add_argument("q")
    args = p.parse_args()
    {"build": build, "bench": bench, "query": query, "count": count}[args.cmd](args)


if __name__ == "__main__":
    main()
