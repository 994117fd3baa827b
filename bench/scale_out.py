"""14. Past one process: does a second daphne worker add throughput on the scale-out profile?

The profile the README deploys for more than one worker: PostgreSQL (DATABASE_URL) and Redis
(REDIS_URL, the channel layer), both throwaway servers started here from Debian's packages with
scripts/services.sh and stopped afterwards (PostgreSQL with fsync off, as the tests start it: the
disk is shared, and the question is the processes' CPU, not its flushes). Two daphne workers on
one home and database (tests/daphne.py's `another_worker`), the scripted model server in its own
process at the 50 ms pace of benchmark 3 (bench/live.py's FAST).

Rounds alternate in one run: N sessions of T turns each, all on worker 1, then the same load
(fresh sessions) split half and half over workers 1 and 2. The goal: two workers >= 1.6x one,
where the machine has the cores. Every process's CPU is read from /proc on both sides (both
daphnes, PostgreSQL's postmaster and its backends, Redis, the model server, this load client), so
the figure says how many of the machine's cores each side kept busy, i.e. whether 1.6x was
reachable here at all.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from websockets.asyncio.client import ClientConnection

from bench.common import QUIET_CONFIG, ROOT, Figure, cpu_seconds, median, p95, temp_home
from bench.live import FAST, Model, Round, _connect, _new_sessions, _ws_turn
from tests.daphne import Daphne, Http, another_worker, model_env, start_daphne

BENCH = "14"
GOAL = 1.6
SCALES = {
    "full": {"sessions": 20, "turns": 10, "rounds": 2},
    "tiny": {"sessions": 4, "turns": 2, "rounds": 1},
}
_PG_BIN = "$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"


def _stat(pid: int) -> list[str]:
    """/proc/<pid>/stat after the command name: [0] state, [1] ppid, [11..14] utime stime cutime cstime."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


@dataclass
class Services:
    """PostgreSQL and Redis in a folder of their own (scripts/services.sh)."""

    folder: Path
    database_url: str = ""
    redis_url: str = ""

    def start(self) -> None:
        script = (
            'source scripts/services.sh; ensure_packages; PG_EXTRA_OPTS="-c fsync=off" '
            f'start_postgres "{self.folder}" "$(free_port)" >/dev/null; '
            f'start_redis "{self.folder}" "$(free_port)"; echo "$DATABASE_URL $REDIS_URL"'
        )
        out = subprocess.run(["bash", "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
        self.database_url, self.redis_url = out.stdout.split()[-2:]

    def stop(self) -> None:
        script = f'source scripts/services.sh; HERMES_PG_BIN={_PG_BIN} stop_services "{self.folder}"'
        subprocess.run(["bash", "-c", script], cwd=ROOT, capture_output=True, text=True)

    def postgres_cpu(self) -> float:
        """The postmaster's CPU, its live backends' and that of the backends it has reaped (cutime,
        cstime): the whole server's, whichever connections came and went during a round."""
        postmaster = int((self.folder / "pg" / "data" / "postmaster.pid").read_text().split()[0])
        fields = _stat(postmaster)
        total = sum(int(f) for f in fields[11:15])
        children = Path(f"/proc/{postmaster}/task/{postmaster}/children").read_text().split()
        for child in children:
            try:
                child_fields = _stat(int(child))
            except FileNotFoundError:  # exited since the list was read: its time is in cutime next read
                continue
            total += int(child_fields[11]) + int(child_fields[12])
        return total / os.sysconf("SC_CLK_TCK")

    def redis_cpu(self) -> float:
        pid_file = self.folder / "redis" / "redis.pid"
        for _ in range(50):  # the daemonized server writes its pid file a moment after start-up
            if pid_file.exists() and pid_file.read_text().strip():
                break
            time.sleep(0.1)
        return cpu_seconds(int(pid_file.read_text()))


def machine_cpu() -> float:
    """CPU seconds the whole machine spent busy (every core, every user): /proc/stat's first line,
    less idle and I/O wait (guest time is already inside user time)."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    return (sum(values) - values[3] - values[4]) / os.sysconf("SC_CLK_TCK")


@contextmanager
def services() -> Iterator[Services]:
    folder = Path(tempfile.mkdtemp(prefix="hermes-bench-cluster-"))
    folder.chmod(0o755)  # the postgres user runs the cluster inside it
    running = Services(folder)
    try:
        running.start()
        yield running
    finally:
        running.stop()
        shutil.rmtree(folder, ignore_errors=True)


Meters = dict[str, Callable[[], float]]


def meters(workers: list[Daphne], cluster: Services, model: Model) -> Meters:
    """Cumulative CPU seconds of every process the load runs through, read before and after a round."""
    return {
        "daphne 1": lambda: cpu_seconds(workers[0].process.pid),
        "daphne 2": lambda: cpu_seconds(workers[1].process.pid),
        "postgres": cluster.postgres_cpu,
        "redis": cluster.redis_cpu,
        "model server": model.server.cpu_seconds,
        "load client": time.process_time,
    }


@dataclass
class Measured:
    workers: int
    turns: Round
    cpu: dict[str, float] = field(default_factory=dict)
    machine: float = 0.0  # the whole machine's busy CPU seconds, other users' work included

    def rate(self) -> float:
        return len(self.turns.turn_ms) / self.turns.wall


async def timed_round(
    workers: list[Daphne], owner: Http, sids: list[str], turns: int, model: Model, cpu: Meters
) -> Measured:
    """Session i on workers[i % len(workers)], every session running its turns one after another."""
    out = Round()
    sockets = await asyncio.gather(*(_connect(workers[i % len(workers)], owner, s) for i, s in enumerate(sids)))
    before = {name: read() for name, read in cpu.items()}
    machine0, t0 = machine_cpu(), time.perf_counter()

    async def session(ws: ClientConnection, i: int) -> None:
        for n in range(turns):
            await _ws_turn(ws, f"session {i} turn {n}", model.text, out)

    await asyncio.gather(*(session(ws, i) for i, ws in enumerate(sockets)))
    out.wall = time.perf_counter() - t0
    used = {name: read() - before[name] for name, read in cpu.items()}
    machine = machine_cpu() - machine0
    await asyncio.gather(*(ws.close() for ws in sockets))
    return Measured(len(workers), out, used, machine)


async def warm_up(workers: list[Daphne], owner: Http, model: Model) -> None:
    """A turn on each worker first: the second one has not yet loaded the chat's code or connected
    to PostgreSQL and Redis."""
    for worker, sid in zip(workers, _new_sessions(owner, len(workers)), strict=True):
        ws = await _connect(worker, owner, sid)
        for n in range(2):
            await _ws_turn(ws, f"warm up {n}", model.text, Round())
        await ws.close()


async def rounds(workers: list[Daphne], owner: Http, model: Model, cfg: dict[str, int], cpu: Meters) -> list[Measured]:
    """One worker, two, two, one, ... (the order flips every pair), fresh sessions each round."""
    n, turns = cfg["sessions"], cfg["turns"]
    sids = _new_sessions(owner, n * 2 * cfg["rounds"])
    if len(set(sids)) != len(sids):
        raise RuntimeError("new chats were not distinct sessions")
    await warm_up(workers, owner, model)
    done: list[Measured] = []
    for r in range(cfg["rounds"]):
        for count in (1, 2) if r % 2 == 0 else (2, 1):
            batch, sids = sids[:n], sids[n:]
            done.append(await timed_round(workers[:count], owner, batch, turns, model, cpu))
    return done


def _per_turn(side: list[Measured]) -> dict[str, float]:
    turns = sum(len(m.turns.turn_ms) for m in side)
    return {name: sum(m.cpu[name] for m in side) / turns * 1000 for name in side[0].cpu}


def _busy(side: list[Measured], machine: bool = False) -> float:
    """Cores kept busy on average over the rounds' wall time: by the measured processes, or by
    everything on the machine (other people's work too)."""
    used = sum(m.machine if machine else sum(m.cpu.values()) for m in side)
    return used / sum(m.turns.wall for m in side)


def _cpu_note(side: list[Measured]) -> str:
    return ", ".join(f"{name} {ms:.1f}" for name, ms in _per_turn(side).items())


def figures(done: list[Measured], label: str) -> list[Figure]:
    one, two = [m for m in done if m.workers == 1], [m for m in done if m.workers == 2]
    rate1, rate2 = [m.rate() for m in one], [m.rate() for m in two]
    ratio = median(rate2) / median(rate1)
    cores = os.cpu_count() or 1
    busy1, busy2 = _busy(one), _busy(two)
    errors, dropped = sum(m.turns.errors for m in done), sum(m.turns.dropped for m in done)
    order = ", ".join(f"{'one' if m.workers == 1 else 'two'} {m.rate():.1f}" for m in done)
    turns1, turns2 = ([t for m in side for t in m.turns.turn_ms] for side in (one, two))
    cpu1, cpu2 = (sum(_per_turn(side).values()) for side in (one, two))
    need = busy1 * GOAL
    allow = f"1.6x the one-worker rate at its CPU per turn needs {need:.2f} of the {cores} cores"
    return [
        Figure(
            BENCH, f"{label}: turns/s, two workers against one", "turns/s", median(rate2), min(rate2),
            median(rate1), min(rate1), "one worker, same load", f"{ratio:.2f}x one worker, on {cores} cores",
            f">= {GOAL}x where the cores allow", ratio >= GOAL, n=len(turns2),
            notes=f"PostgreSQL + Redis, machine of {cores} cores; rounds in order (turns/s): {order}; "
            f"p95 column = worst round; {errors} errors, {dropped} dropped frames; {allow}",
        ),
        Figure(
            BENCH, f"{label}: turn time, two workers against one", "ms", median(turns2), p95(turns2),
            median(turns1), p95(turns1), "one worker, same load", f"{errors} errors, {dropped} dropped frames",
            "0 errors, 0 dropped", errors == 0 and dropped == 0, n=len(turns2),
        ),
        Figure(
            BENCH, f"{label}: CPU per turn, every process", "ms", cpu2, None, cpu1, None, "one worker",
            f"busy {busy2:.2f} cores (two workers), {busy1:.2f} (one) of {cores}", "", None, n=len(turns2),
            notes=f"CPU per turn in ms, one worker: {_cpu_note(one)}; two workers: {_cpu_note(two)}; the whole "
            f"machine was busy {_busy(one, True):.2f} cores (one worker) and {_busy(two, True):.2f} (two), "
            "everything on it included",
        ),
    ]  # fmt: skip


def run(scale: str) -> list[Figure]:
    cfg = SCALES[scale]
    label = f"{cfg['sessions']} sessions x {cfg['turns']} turns, 50 ms model"
    model = Model()
    model.pace = dict(FAST)
    home = temp_home()
    try:
        with services() as cluster:
            env = {
                **model_env(model.server.base_url),
                "DATABASE_URL": cluster.database_url,
                "REDIS_URL": cluster.redis_url,
                "HERMES_REDIS_PREFIX": secrets.token_hex(4),
            }
            with start_daphne(home / "home", QUIET_CONFIG, env) as first, another_worker(first, env) as second:
                owner = Http(first.port)
                owner.login(first.token)
                workers = [first, second]
                done = asyncio.run(rounds(workers, owner, model, cfg, meters(workers, cluster, model)))
                out = figures(done, label)
                logs = "".join(w.log() for w in workers)
                if "Traceback" in logs:
                    out[-1].notes += " | a daphne log has a traceback: " + logs[-600:].replace("\n", " ")
    finally:
        model.server.stop()
        shutil.rmtree(home, ignore_errors=True)
    return out
