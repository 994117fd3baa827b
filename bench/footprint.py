"""8. Footprint: daphne's start-up (process start until the login page answers) and its resident
memory when idle, against a bare interpreter importing the same stack (Django, Channels, daphne,
openai) — the floor no server can go under; interleaved. Resident memory after 1M messages is
measured by the search benchmark (5), under 20 sessions by the concurrency benchmark (3)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from bench.common import ROOT, Figure, Samples, figure_from, median, rss_mb, temp_home
from tests.daphne import Daphne, Http, another_worker, start_daphne

SCALES = {"full": 5, "tiny": 1}
IMPORTS = "import django, channels, daphne.server, openai, yaml; django.setup()"


def _daphne_once(base: Daphne) -> tuple[float, float]:
    """One more daphne process on the migrated home: process start until /login answers."""
    t = time.perf_counter()
    with another_worker(base) as server:
        status = Http(server.port).get("/login").status
        took = time.perf_counter() - t
        if status >= 500:
            raise RuntimeError(f"/login answered {status}")
        time.sleep(1.0)  # let start-up work (stale runs, turns) settle before reading memory
        return took * 1000, rss_mb(server.process.pid)


def _bare_once(home: Path) -> tuple[float, float]:
    code = f"{IMPORTS}; import re, pathlib; print(re.search(r'VmRSS:\\s+(\\d+)', pathlib.Path('/proc/self/status').read_text())[1])"  # fmt: skip
    env = {"DJANGO_SETTINGS_MODULE": "hermes_site.settings", "HERMES_HOME": str(home), "PATH": "/usr/bin:/bin"}
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return (time.perf_counter() - t) * 1000, int(out.stdout.split()[-1]) / 1024


def run(scale: str) -> list[Figure]:
    tmp = temp_home()
    start, rss = Samples(), Samples()
    with start_daphne(tmp / "home") as base:
        for i in range(SCALES[scale]):
            for product in [True, False] if i % 2 == 0 else [False, True]:
                took, mem = _daphne_once(base) if product else _bare_once(base.home)
                (start.product if product else start.reference).append(took)
                (rss.product if product else rss.reference).append(mem)
    up = figure_from("8", "server start-up (until /login answers)", "ms", start, reference="bare import of the stack")
    up.result = f"{median(start.product) - median(start.reference):+.0f} ms against the imports"
    up.notes = "daphne started on an already migrated home, as a restart would"
    idle = figure_from("8", "resident memory, idle server", "MB", rss, reference="bare import of the stack")
    idle.result = f"{median(rss.product) - median(rss.reference):+.0f} MB against the imports"
    return [up, idle]
