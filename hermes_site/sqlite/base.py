"""Django's SQLite backend, with the writers of one process queueing in Python.

SQLite lets one writer in at a time; a writer that finds the database locked waits in SQLite's
busy handler, which does not wake when the lock frees but sleeps in growing steps (1, 2, 5,
10, ... 100 ms). With dozens of chats writing at once on one server's threads (each turn stores
its messages and releases its lease), a write of a millisecond waited tens of milliseconds, and
at 100 sessions the first token of some turns came a second late (bench/live.py).

Here every write of this process (a transaction, which the settings begin IMMEDIATE, or a
single INSERT/UPDATE/DELETE outside one) first takes one lock per database file, handed over
the moment the previous writer commits. Other processes on the same file (the terminal chat, a
second server) still meet SQLite's own locking and busy timeout, as before. A writer waits for
the lock at most the busy timeout, then goes on to SQLite's own waiting (and its error).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from django.db.backends.sqlite3 import base

from foundation.fileio import create_private

_WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE")
_locks: dict[str, threading.Lock] = {}
_locks_lock = threading.Lock()


def write_lock(name: str) -> threading.Lock:
    """The one lock of this process for the database file `name`."""
    with _locks_lock:
        return _locks.setdefault(name, threading.Lock())


class DatabaseWrapper(base.DatabaseWrapper):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.write_lock = write_lock(str(self.settings_dict["NAME"]))
        self.holds_write_lock = False

    def get_new_connection(self, conn_params: dict[str, Any]) -> Any:
        # First use of a fresh HERMES_HOME (`migrate`): its folder is made here, not when settings
        # load. SQLite creates a database file 0644 and its -wal/-shm with the database's own mode:
        # an empty file created 0600 first keeps every conversation (and live session keys) private.
        name = str(conn_params.get("database", ""))
        if name and name != ":memory:" and not name.startswith("file:"):
            path = Path(name)
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            if not path.exists():
                create_private(path)
        return super().get_new_connection(conn_params)

    def _wait_seconds(self) -> float:
        return float(self.settings_dict.get("OPTIONS", {}).get("timeout", 5))

    def take_write_lock(self) -> None:
        if not self.holds_write_lock:
            self.holds_write_lock = self.write_lock.acquire(timeout=self._wait_seconds())

    def give_write_lock(self) -> None:
        if self.holds_write_lock:
            self.holds_write_lock = False
            self.write_lock.release()

    def _start_transaction_under_autocommit(self) -> None:
        self.take_write_lock()
        try:
            super()._start_transaction_under_autocommit()
        except BaseException:
            self.give_write_lock()
            raise

    def _commit(self) -> None:
        try:
            super()._commit()
        finally:
            self.give_write_lock()

    def _rollback(self) -> None:
        try:
            super()._rollback()
        finally:
            self.give_write_lock()

    def _close(self) -> None:
        try:
            super()._close()
        finally:
            self.give_write_lock()

    def create_cursor(self, name: str | None = None) -> Any:
        cursor = self.connection.cursor(factory=_Cursor)
        cursor.wrapper = self
        return cursor


class _Cursor(base.SQLiteCursorWrapper):
    wrapper: DatabaseWrapper

    def execute(self, query: str, params: Any = None) -> Any:
        wrapper = self.wrapper
        if wrapper.holds_write_lock or not query.lstrip()[:7].upper().startswith(_WRITES):
            return super().execute(query, params)
        wrapper.take_write_lock()
        try:
            return super().execute(query, params)
        finally:
            wrapper.give_write_lock()

    def executemany(self, query: str, param_list: Any) -> Any:
        wrapper = self.wrapper
        if wrapper.holds_write_lock or not query.lstrip()[:7].upper().startswith(_WRITES):
            return super().executemany(query, param_list)
        wrapper.take_write_lock()
        try:
            return super().executemany(query, param_list)
        finally:
            wrapper.give_write_lock()
