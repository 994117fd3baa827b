"""Benchmark: full-text search (knowledge.search) against a LIKE scan, on synthetic history.

    .venv/bin/python bench/search.py [--sizes 100000 1000000] [--queries 50]

For each size: a fresh SQLite database in a temp dir, created by the real migrations; synthetic
sessions of English messages (a few thousand words from Python's own docstrings, drawn with a
Zipf-like distribution, 20-60 words each, ~1% with Chinese text, some tool calls), loaded with
executemany in one transaction and indexed afterwards with the rebuild command's SQL. Then
median and p95 latency of typical 1-3 word queries through search_messages (ranked, snippets,
capped count) and search_sessions, and of the same queries as a LIKE '%term%' scan.
"""

from __future__ import annotations

import argparse
import ast
import collections
import json
import os
import random
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WORDS_PER_MESSAGE = (20, 60)
MESSAGES_PER_SESSION = (6, 40)
CHINESE = ["部署服务器", "数据库迁移", "配置文件", "日志分析", "性能优化", "用户权限", "缓存失效", "网络超时"]


def vocabulary(size: int = 4000) -> list[str]:
    """Words from the standard library's docstrings, most frequent first."""
    counts: collections.Counter[str] = collections.Counter()
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py"))[:400]:
        try:
            tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                doc = ast.get_docstring(node) or ""
                counts.update(re.findall(r"[a-z]{2,14}", doc.lower()))
    return [w for w, _ in counts.most_common(size)]


def migrate(home: Path, db: Path) -> None:
    env = dict(os.environ, HERMES_HOME=str(home), HERMES_DB=str(db))
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)


def _row_template(conn: sqlite3.Connection, table: str) -> dict[str, object]:
    """Type-appropriate values for NOT NULL columns (Django keeps defaults in Python)."""
    row: dict[str, object] = {}
    for _, name, ctype, notnull, _default, _pk in conn.execute(f"PRAGMA table_info({table})"):
        ctype = ctype.lower()
        if not notnull:
            row[name] = None
        elif "int" in ctype or "bool" in ctype or "real" in ctype or "decimal" in ctype:
            row[name] = 0
        else:
            row[name] = ""
    return row


def load(db: Path, n_messages: int, words: list[str], seed: int = 7) -> None:
    from knowledge.management.commands.rebuild_search_index import _fts_migration, rebuild_indexes

    rng = random.Random(seed)
    cum = list(_cumulative_zipf(len(words)))
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA synchronous=OFF")
    conn.execute("BEGIN")
    for name in _fts_migration.TRIGGER_NAMES:  # index once at the end, not row by row
        conn.execute(f"DROP TRIGGER IF EXISTS {name}")
    s_tpl, m_tpl = _row_template(conn, "knowledge_chatsession"), _row_template(conn, "knowledge_message")
    del m_tpl["id"]  # let SQLite number the messages
    s_cols, m_cols = list(s_tpl), list(m_tpl)
    s_sql = f"INSERT INTO knowledge_chatsession ({', '.join(s_cols)}) VALUES ({', '.join('?' * len(s_cols))})"
    m_sql = f"INSERT INTO knowledge_message ({', '.join(m_cols)}) VALUES ({', '.join('?' * len(m_cols))})"
    t0 = time.time() - 400 * 86400
    sessions: list[tuple[object, ...]] = []
    messages: list[tuple[object, ...]] = []
    made = 0
    while made < n_messages:
        sid, n = uuid.uuid4().hex, min(rng.randint(*MESSAGES_PER_SESSION), n_messages - made)
        start = t0 + made * 30
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(start))
        title = " ".join(rng.choices(words[30:600], k=3)).capitalize()
        sessions.append(tuple({**s_tpl, "id": sid, "title": title, "source": rng.choice(["web", "cli"]),
                               "started_at": stamp, "updated_at": stamp}[c] for c in s_cols))  # fmt: skip
        texts = rng.choices(words, cum_weights=cum, k=n * WORDS_PER_MESSAGE[1])
        for i in range(n):
            k = rng.randint(*WORDS_PER_MESSAGE)
            content = " ".join(texts[i * WORDS_PER_MESSAGE[1] : i * WORDS_PER_MESSAGE[1] + k])
            if rng.random() < 0.01:
                content += " " + rng.choice(CHINESE) + "的问题"
            role, tool_name, tool_calls = ("user", "assistant")[i % 2], "", None
            if rng.random() < 0.05:
                role, tool_name = "tool", "terminal"
            elif role == "assistant" and rng.random() < 0.05:
                args = json.dumps({"command": " ".join(rng.choices(words[100:2000], k=3))})
                tool_calls = json.dumps(
                    [{"id": "c", "type": "function", "function": {"name": "terminal", "arguments": args}}]
                )
            msg = {**m_tpl, "session_id": sid, "role": role, "content": content, "tool_name": tool_name,
                   "tool_calls": tool_calls, "created_at": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(start + i))}  # fmt: skip
            messages.append(tuple(msg[c] for c in m_cols))
        made += n
        if len(messages) >= 50_000:
            conn.executemany(s_sql, sessions)
            conn.executemany(m_sql, messages)
            sessions, messages = [], []
    conn.executemany(s_sql, sessions)
    conn.executemany(m_sql, messages)
    rebuild_indexes(conn.cursor())
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def _cumulative_zipf(n: int, s: float = 1.05) -> list[float]:
    total, out = 0.0, []
    for rank in range(1, n + 1):
        total += 1.0 / rank**s
        out.append(total)
    return out


def queries(words: list[str], n: int, seed: int = 11) -> list[str]:
    """What people type: 1-3 topical words, not 'the' or 'and'."""
    rng = random.Random(seed)
    return [" ".join(rng.sample(words[40:1500], rng.choice([1, 1, 2, 2, 3]))) for _ in range(n)]


def timed(fns: dict[str, Callable[[str], object]], items: list[str]) -> dict[str, list[float]]:
    """Latencies in ms, the functions interleaved query by query so machine load hits all alike.

    The order rotates from one query to the next: whichever function runs right after a LIKE
    scan (which sweeps the whole table through the page cache) pays for it, so no function may
    always be that one."""
    for q in items[:5]:  # warm the page cache, as a running server's would be
        for fn in fns.values():
            fn(q)
    out: dict[str, list[float]] = {name: [] for name in fns}
    names = list(fns)
    for i, q in enumerate(items):
        for name in names[i % len(names) :] + names[: i % len(names)]:
            t = time.perf_counter()
            fns[name](q)
            out[name].append((time.perf_counter() - t) * 1000)
    return out


def like_scan(q: str, limit: int = 20, operator: str = "LIKE") -> list[object]:
    """The scan FTS is compared with, doing the same work for the same output: a page of
    `limit` MessageHits (session title, source, role, time, highlighted snippet) and a count
    capped like search_messages'. A LIKE scan cannot rank, so it returns the newest matches,
    which lets it stop early on common words: the comparison favours the scan."""
    from django.db import connection

    from knowledge.search import _to_datetime
    from knowledge.search_results import COUNT_CAP, MessageHit
    from knowledge.snippets import substring_snippet

    terms = q.split()
    where = " AND ".join([f"m.content {operator} %s"] * len(terms))
    params = [f"%{t}%" for t in terms]
    frm = "knowledge_message m JOIN knowledge_chatsession s ON s.id = m.session_id"
    cols = "m.id, m.session_id, s.title, s.name, s.source, m.role, m.created_at, m.content"
    with connection.cursor() as cur:
        cur.execute(f"SELECT count(*) FROM (SELECT 1 FROM {frm} WHERE {where} LIMIT %s) hits", [*params, COUNT_CAP + 1])
        cur.fetchone()
        cur.execute(f"SELECT {cols} FROM {frm} WHERE {where} ORDER BY m.id DESC LIMIT %s", [*params, limit])
        rows = cur.fetchall()
    return [
        MessageHit(
            mid,
            sid,
            title or name or "New chat",
            source,
            role,
            _to_datetime(created),
            substring_snippet(content, terms),
        )
        for mid, sid, title, name, source, role, created, content in rows
    ]


def stats(ms: list[float]) -> tuple[float, float]:
    ordered = sorted(ms)
    return statistics.median(ordered), ordered[max(0, int(round(0.95 * len(ordered))) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=50)
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="hermes-bench-"))
    os.environ.update(HERMES_HOME=str(tmp), HERMES_DB=str(tmp / "unused.sqlite3"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hermes_site.settings")
    import django

    django.setup()
    from django.db import connection

    import knowledge.search as search

    words = vocabulary()
    qs = queries(words, args.queries)
    print(f"vocabulary {len(words)} words; {len(qs)} queries, e.g. {qs[:4]}; temp dir {tmp}")
    for size in args.sizes:
        db = tmp / f"bench-{size}.sqlite3"
        migrate(tmp, db)
        t = time.time()
        load(db, size, words)
        build = time.time() - t
        connection.close()
        connection.settings_dict["NAME"] = str(db)
        ms = timed(
            {
                "fts": lambda q: search.search_messages(q, limit=20),
                "sessions": lambda q: search.search_sessions(q, limit=3),
                "like": like_scan,
            },
            qs,
        )
        cjk = timed({"cjk": lambda q: search.search_messages(q, limit=20)}, [f"{c}" for c in CHINESE] * 2)["cjk"]
        (fm, fp), (sm, sp) = stats(ms["fts"]), stats(ms["sessions"])
        (cm, cp), (lm, lp) = stats(cjk), stats(ms["like"])
        print(f"\n{size:,} messages: loaded + indexed in {build:.0f}s, db {db.stat().st_size / 1e6:.0f} MB")
        print(f"  search_messages (bm25, snippets, count)  median {fm:7.2f} ms   p95 {fp:7.2f} ms")
        print(f"  search_sessions (best per session)       median {sm:7.2f} ms   p95 {sp:7.2f} ms")
        print(f"  trigram (Chinese) search_messages        median {cm:7.2f} ms   p95 {cp:7.2f} ms")
        print(f"  LIKE '%term%' scan (same page + count)   median {lm:7.2f} ms   p95 {lp:7.2f} ms")
        print(f"  speed-up (median LIKE / median FTS)      {lm / fm:7.1f}x   (p95: {lp / fp:.1f}x)")
        connection.close()
        db.unlink()
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
