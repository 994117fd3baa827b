"""Synthetic history for the search benchmark, and the LIKE scan FTS is compared with.

Sessions of English messages (a few thousand words from Python's own docstrings, drawn with a
Zipf-like distribution, 20-60 words each, ~1% with Chinese text, some tool calls), loaded with
executemany in one transaction into a database created by the real migrations, and indexed
afterwards with the rebuild command's SQL.
"""

from __future__ import annotations

import ast
import collections
import json
import os
import random
import re
import sqlite3
import subprocess
import sys
import sysconfig
import time
import uuid
from pathlib import Path

from bench.common import ROOT

WORDS_PER_MESSAGE = (20, 60)
MESSAGES_PER_SESSION = (6, 40)
REGENERATED = 0.01  # share of answers written a second time (a version of the chat)
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
    env = dict(os.environ, HERMES_HOME=str(home), HERMES_DB=str(db), DJANGO_SETTINGS_MODULE="hermes_site.settings")
    env.pop("DATABASE_URL", None)  # the SQLite database named by HERMES_DB
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
    from knowledge.search import schema

    rng = random.Random(seed)
    cum = list(_cumulative_zipf(len(words)))
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA synchronous=OFF")
    conn.execute("BEGIN")
    for name in schema.SQLITE_TRIGGERS:  # index once at the end, not row by row
        conn.execute(f"DROP TRIGGER IF EXISTS {name}")
    s_tpl, m_tpl = _row_template(conn, "knowledge_chatsession"), _row_template(conn, "knowledge_message")
    next_id = conn.execute("SELECT coalesce(max(id), 0) + 1 FROM knowledge_message").fetchone()[0]
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
        parents: list[int | None] = []
        roles: list[str] = []
        for i in range(n):
            k = rng.randint(*WORDS_PER_MESSAGE)
            content = " ".join(texts[i * WORDS_PER_MESSAGE[1] : i * WORDS_PER_MESSAGE[1] + k])
            if rng.random() < 0.01:
                content += " " + rng.choice(CHINESE) + "的问题"
            role, tool_name, tool_calls = ("user", "assistant")[i % 2], "", None
            # Each message follows the one before, as stored chats do; now and then an answer
            # is regenerated: a second version of it (same parent), which the rest follows.
            parent = next_id - 1 if i else None
            if i >= 2 and roles[-1] == "assistant" and rng.random() < REGENERATED:
                role, parent = "assistant", parents[-1]
            elif rng.random() < 0.05:
                role, tool_name = "tool", "terminal"
            elif role == "assistant" and rng.random() < 0.05:
                args = json.dumps({"command": " ".join(rng.choices(words[100:2000], k=3))})
                tool_calls = json.dumps(
                    [{"id": "c", "type": "function", "function": {"name": "terminal", "arguments": args}}]
                )
            parents.append(parent)
            roles.append(role)
            msg = {**m_tpl, "id": next_id, "parent_id": parent, "session_id": sid, "role": role, "content": content,
                   "tool_name": tool_name, "tool_calls": tool_calls, "created_at": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(start + i))}  # fmt: skip
            messages.append(tuple(msg[c] for c in m_cols))
            next_id += 1
        made += n
        if len(messages) >= 50_000:
            conn.executemany(s_sql, sessions)
            conn.executemany(m_sql, messages)
            sessions, messages = [], []
    conn.executemany(s_sql, sessions)
    conn.executemany(m_sql, messages)
    schema.rebuild_sqlite(conn.cursor())
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


def like_scan(q: str, limit: int = 20, operator: str = "LIKE") -> list[object]:
    """The scan FTS is compared with, doing the same work for the same output: a page of
    `limit` MessageHits (session title, source, role, time, highlighted snippet) and a count
    capped like search_messages'. A LIKE scan cannot rank, so it returns the newest matches,
    which lets it stop early on common words: the comparison favours the scan."""
    from django.db import connection

    from knowledge.search.results import COUNT_CAP, MessageHit, to_datetime
    from knowledge.search.snippets import substring_snippet

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
            to_datetime(created),
            substring_snippet(content, terms),
        )
        for mid, sid, title, name, source, role, created, content in rows
    ]
