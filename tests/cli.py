"""Run the real `manage.py` in a subprocess against its own HERMES_HOME (a fresh database)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests import dbs

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class CLIHome:
    path: Path
    base_url: str = ""

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "HERMES_MODEL")}
        env.pop("HERMES_DB", None)
        env.update(
            {"HERMES_HOME": str(self.path), "PYTHONUNBUFFERED": "1", "DJANGO_SETTINGS_MODULE": "hermes_site.settings"}
        )
        env.update(dbs.database_env(self.path))
        if self.base_url:
            env.update({"OPENAI_BASE_URL": self.base_url, "OPENAI_API_KEY": "k", "HERMES_MODEL": "scripted-model"})
        env.update(extra)
        return env

    def query(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        return dbs.query(self.path, sql, *args)

    def manage(self, *args: str, timeout: float = 120, input: str | None = None, env: dict[str, str] | None = None):
        return subprocess.run(
            [sys.executable, str(ROOT / "manage.py"), *args],
            cwd=ROOT,
            env=self.env(**(env or {})),
            capture_output=True,
            text=True,
            timeout=timeout,
            input=input,
        )

    def migrate(self) -> None:
        r = self.manage("migrate", "--noinput")
        assert r.returncode == 0, r.stderr


def new_home(tmp_path: Path, base_url: str = "") -> CLIHome:
    home = CLIHome(tmp_path / "hermes-home", base_url)
    home.path.mkdir(parents=True, exist_ok=True)
    home.migrate()
    return home


def start_learning_worker(home: CLIHome, log: Path, **env: str) -> subprocess.Popen[bytes]:
    """`manage.py learning_worker` on `home`, polling fast, its output appended to `log`."""
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, str(ROOT / "manage.py"), "learning_worker", "--interval", "0.2"],
            cwd=ROOT,
            env=home.env(**env),
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def wait_until(predicate: Callable[[], Any], what: str, timeout: float = 60) -> None:
    """Poll `predicate` until it holds; fail naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)
