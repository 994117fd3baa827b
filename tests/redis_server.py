"""A Redis for the tests whose frames must cross daphne workers (the channel layer past one process):
the suite's own when scripts/test.sh started one (REDIS_URL), otherwise one started here on
loopback, without persistence, for the test's duration."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def redis_url(tmp: Path) -> Iterator[str]:
    """The suite's Redis (scripts/test.sh), or one started here on loopback."""
    if os.environ.get("REDIS_URL"):
        yield os.environ["REDIS_URL"]
        return
    server = shutil.which("redis-server")
    if server is None:
        pytest.skip("needs Redis: mirroring across workers goes through it (scripts/test.sh installs it)")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    tmp.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(
        [server, "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no", "--dir", str(tmp)],
        stdout=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(10)
