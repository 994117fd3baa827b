"""The database a test's subprocess (daphne, manage.py) uses, and reading it from the test.

By default each subprocess home has its own SQLite file (HERMES_HOME/dashboard.sqlite3). When
the suite runs against PostgreSQL (scripts/test.sh sets DATABASE_URL), each home gets a fresh
database of its own on that server instead, so subprocess tests never see each other's rows.
Queries are written with SQLite's `?` placeholders and translated for PostgreSQL.
"""

from __future__ import annotations

import os
import secrets
import sqlite3
from pathlib import Path
from typing import Any

import psycopg

ADMIN_URL = os.environ.get("DATABASE_URL", "")
_URL_FILE = ".test_database_url"


def on_postgres() -> bool:
    return ADMIN_URL.startswith(("postgres://", "postgresql://"))


def database_env(home: Path) -> dict[str, str]:
    """DATABASE_URL for a subprocess using `home` (the same one for every process of that home)."""
    if not on_postgres():
        return {}
    marker = home / _URL_FILE
    if not marker.exists():
        name = f"t_{secrets.token_hex(6)}"
        with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        home.mkdir(parents=True, exist_ok=True)
        marker.write_text(ADMIN_URL.rsplit("/", 1)[0] + "/" + name, encoding="utf-8")
    return {"DATABASE_URL": marker.read_text(encoding="utf-8")}


def test_database_env(name: str) -> dict[str, str]:
    """DATABASE_URL of this pytest process's own test database (for subprocesses that must share it)."""
    return {"DATABASE_URL": ADMIN_URL.rsplit("/", 1)[0] + "/" + name} if on_postgres() else {}


def query(home: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    """Rows from the database of the server or command that ran with `home`."""
    marker = home / _URL_FILE
    if marker.exists():
        with psycopg.connect(marker.read_text(encoding="utf-8")) as conn:
            pg_sql = sql.replace("%", "%%").replace("?", "%s")  # a literal % (LIKE '%x%') stays literal
            return [tuple(row) for row in conn.execute(pg_sql, args).fetchall()]
    with sqlite3.connect(home / "dashboard.sqlite3", timeout=20) as db:
        return db.execute(sql, args).fetchall()
