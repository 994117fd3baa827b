"""12. First run: `./scripts/serve.sh` on a fresh clone (no `.venv`) until it prints the login
link, and the size of the `.venv` it made — with what running needs (requirements.txt), against
the same clone whose requirements.txt also holds the test tools (requirements-dev.txt), as the
one file did before they were split. Rounds alternate the two sides; pip's cache is warm for both
(the first round of each side fills it), so the time is installing, not downloading.

    .venv/bin/python -m bench.first_run          # full: 3 rounds of each side (and a restart)
    .venv/bin/python -m bench.first_run tiny     # the run side once (the dev side is the slow one)

A third figure is the second start in the same clone (packages in place, pip not run).
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from bench.common import ROOT, Figure, median, temp_home

SCALES = {"full": 3, "tiny": 1}
LINK = "Hermes dashboard: http://"
START_LIMIT = 900  # seconds for one first run (every package installed)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _clone(into: Path, with_dev: bool) -> Path:
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(into)], check=True, timeout=300)
    if with_dev:
        # One requirements file holding both, as before the split: serve.sh then installs it all.
        dev = (into / "requirements-dev.txt").read_text(encoding="utf-8").splitlines()
        extra = [line for line in dev if not line.startswith("-r ")]
        with (into / "requirements.txt").open("a", encoding="utf-8") as out:
            out.write("\n".join(extra) + "\n")
    return into


def _serve_until_link(clone: Path, home: Path) -> tuple[float, float]:
    """Seconds from starting serve.sh to its login link, and the processor seconds serve.sh and
    everything it ran used until then (the server is stopped at the link, so it counts its start
    only). The processor time barely moves with the machine's load; the wall time does."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    drop = ("DATABASE_URL", "REDIS_URL", "HERMES_QUEUE", "VIRTUAL_ENV", "DJANGO_SETTINGS_MODULE", "HERMES_DB")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(HERMES_HOME=str(home), HERMES_PORT=str(_free_port()))
    start = time.perf_counter()
    proc = subprocess.Popen(
        [str(clone / "scripts" / "serve.sh")],
        cwd=clone,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    seen: list[str] = []
    try:
        assert proc.stdout is not None
        while time.perf_counter() - start < START_LIMIT:
            line = proc.stdout.readline()
            if not line:
                break
            seen.append(line)
            if line.startswith(LINK):
                wall = time.perf_counter() - start
                os.killpg(proc.pid, signal.SIGTERM)
                proc.communicate(timeout=60)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        raise RuntimeError("serve.sh printed no login link:\n" + "".join(seen[-20:]))
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.communicate(timeout=60)


def _size_mb(folder: Path) -> float:
    out = subprocess.run(["du", "-sk", str(folder)], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[0]) / 1024


def run(scale: str) -> list[Figure]:
    rounds = SCALES[scale]
    sides = [False, True] if scale == "full" else [False]
    base = temp_home("hermes-bench-first-run-")
    seconds: dict[bool, list[float]] = {False: [], True: []}
    cpu: dict[bool, list[float]] = {False: [], True: []}
    sizes: dict[bool, float] = {}
    restarts: list[float] = []
    try:
        for n in range(rounds):
            for with_dev in sides:
                where = base / f"round{n}-{'dev' if with_dev else 'run'}"
                clone = _clone(where / "clone", with_dev)
                wall, used = _serve_until_link(clone, where / "home")
                seconds[with_dev].append(wall)
                cpu[with_dev].append(used)
                sizes[with_dev] = _size_mb(clone / ".venv")
                if not with_dev:
                    restarts.append(_serve_until_link(clone, where / "home")[0])
                shutil.rmtree(where, ignore_errors=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    first = _compare("first run: fresh clone to login link (serve.sh)", seconds)
    first.notes = f"{rounds} round(s) per side, alternating; pip's cache warm; p95 column = slowest round"
    first_cpu = _compare("first run: processor time of serve.sh and what it ran", cpu, "less", "more")
    first_cpu.notes = "user + system seconds of every process serve.sh started, until the link"
    size = Figure("12", ".venv after the first run", "MB", median=sizes[False], n=1,
                  reference="with the test tools (requirements-dev.txt)")  # fmt: skip
    if True in sizes:
        size.ref_median = sizes[True]
        size.result = f"{sizes[False] / sizes[True]:.0%} of the size ({sizes[True] - sizes[False]:,.0f} MB less)"
    else:
        size.notes = "the test-tools side runs at full scale only"
    restart = Figure(
        "12",
        "second start: serve.sh to login link (packages in place)",
        "s",
        median=median(restarts),
        p95=max(restarts),
        n=len(restarts),
        result="pip not run: requirements.txt unchanged since the install",
    )
    return [first, first_cpu, size, restart]


def _compare(name: str, values: dict[bool, list[float]], fewer: str = "sooner", more: str = "later") -> Figure:
    """What running needs (product) against the test tools too (reference), in seconds."""
    run_s = median(values[False])
    figure = Figure("12", name, "s", median=run_s, p95=max(values[False]), n=len(values[False]),
                    reference="same, test tools installed too (one file, as before)")  # fmt: skip
    if not values[True]:
        figure.result = "the test-tools side runs at full scale only"
        return figure
    dev_s = median(values[True])
    figure.ref_median, figure.ref_p95 = dev_s, max(values[True])
    saved = dev_s - run_s
    said = f"{saved:,.0f} s {fewer}" if saved >= 0 else f"{-saved:,.0f} s {more}"
    figure.result = f"{run_s / dev_s:.2f}x ({said})"
    return figure


if __name__ == "__main__":
    for f in run(sys.argv[1] if len(sys.argv) > 1 else "full"):
        print(f)
