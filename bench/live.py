"""2 and 3. The chat through a real daphne and real websockets, against the scripted model.

2. First token: a message sent on the socket until its first delta frame, against the raw
   `openai` client's own first content chunk for the same reply, interleaved.
3. Concurrency: N sessions at once, each running its turns one after another, against the same
   load driven by the raw async `openai` client (what the model server itself allows), rounds
   interleaved. Ideal = N / (one turn alone). Also server CPU per turn (/proc/<pid>/stat of
   daphne), errors, dropped frames (a turn whose deltas do not add up to the reply), and daphne's
   resident memory under the 20-session load (figure 8). And the server CPU budget: one session's
   turns of 20 chunks beside turns of 120, interleaved, split into a turn's fixed cost and each
   chunk's, each against its goal.

Three processes share the machine: daphne, the scripted model server (its own process,
bench/model_server.py, as a real one would be) and this one, the load client. The CPU per turn
of each, on both sides, is in the notes: with the ideal rate it says how many of the machine's
cores a goal would need, i.e. whether it is reachable here at all.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from dataclasses import dataclass, field
from typing import Any

import openai
from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as ws_connect
from websockets.typing import Origin

from bench.common import QUIET_CONFIG, Figure, Samples, chunked_text, cpu_seconds, median, p95, rss_mb, temp_home
from bench.model_server import ModelProcess
from tests.daphne import Daphne, Http, model_env, start_daphne

REAL = {"delay": 0.3, "chunk_delay": 0.1, "chunks": 20}  # a real model's pace: ~2.3 s a turn alone
FAST = {"delay": 0.05, "chunk_delay": 0.0, "chunks": 20}
SCALES: dict[str, dict[str, Any]] = {
    "full": {
        "first_token": 40,
        "budget_turns": 40,
        "paced_turns": 6,
        "scenarios": [
            ("20 sessions, real pace", 20, 3, REAL, 2),
            ("50 sessions, real pace", 50, 3, REAL, 2),
            ("20 sessions x 10 turns, 50 ms model", 20, 10, FAST, 2),
            ("100 sessions, real pace", 100, 2, REAL, 2),
        ],
    },  # fmt: skip
    # The budget's turns are as many as at full scale: a turn's CPU varies with the machine's
    # other work, and 40 a side keep the tiny run's figure within ~0.3 ms of the full run's.
    "tiny": {
        "first_token": 2,
        "budget_turns": 40,
        "paced_turns": 2,
        "scenarios": [("3 sessions, fast", 3, 2, FAST, 1)],
    },
}


class Model:
    """The scripted model server, in a process of its own (bench/model_server.py), at a pace."""

    def __init__(self) -> None:
        self.server = ModelProcess()
        self._pace: dict[str, Any] = {}
        self.pace = dict(FAST)

    @property
    def pace(self) -> dict[str, Any]:
        return self._pace

    @pace.setter
    def pace(self, pace: dict[str, Any]) -> None:
        self._pace = dict(pace)
        reply = {"text": self.text, "delay": pace["delay"], "chunk_delay": pace["chunk_delay"]}
        self.server.script({"default": reply})

    @property
    def text(self) -> str:
        return chunked_text(int(self._pace["chunks"]))


@dataclass
class Round:
    turn_ms: list[float] = field(default_factory=list)
    first_ms: list[float] = field(default_factory=list)
    errors: int = 0
    dropped: int = 0
    wall: float = 0.0
    cpu: float = 0.0  # daphne's
    model_cpu: float = 0.0  # the scripted model server's
    client_cpu: float = 0.0  # this process's: the load client
    rss_peak: float = 0.0

    def start(self, model: Model) -> tuple[float, float, float]:
        return time.perf_counter(), model.server.cpu_seconds(), time.process_time()

    def stop(self, model: Model, started: tuple[float, float, float]) -> None:
        t0, model0, client0 = started
        self.wall = time.perf_counter() - t0
        self.model_cpu = model.server.cpu_seconds() - model0
        self.client_cpu = time.process_time() - client0


async def _connect(server: Daphne, owner: Http, sid: str) -> ClientConnection:
    return await ws_connect(
        f"ws://127.0.0.1:{server.port}/ws/chat/{sid}/",
        origin=Origin(server.origin),
        additional_headers={"Cookie": f"sessionid={owner.cookies['sessionid']}"},
        open_timeout=60,
        max_size=None,
    )


async def _ws_turn(ws: ClientConnection, text: str, expect: str, out: Round) -> None:
    """One turn, send to "ready"; a rate-limit refusal is waited out and the message resent
    (the timer restarts: the refusal is the per-socket limit, not the server's speed)."""
    while True:
        t = time.perf_counter()
        await ws.send(json.dumps({"type": "message", "text": text}))
        got: list[str] = []
        done = refused = False
        while True:
            frame = json.loads(await asyncio.wait_for(ws.recv(), 120))
            kind = frame["type"]
            if kind == "delta":
                if not got:
                    out.first_ms.append((time.perf_counter() - t) * 1000)
                got.append(frame["text"])
            elif kind == "done":
                done = True
            elif kind == "error" and "retry_after" in frame:
                await asyncio.sleep(frame["retry_after"])
                refused = True
                break
            elif kind == "error":
                out.errors += 1
            elif kind == "ready":
                break
        if not refused:
            break
    out.turn_ms.append((time.perf_counter() - t) * 1000)
    if not done or "".join(got) != expect:
        out.dropped += 1


async def _raw_turn(client: openai.AsyncOpenAI, out: Round) -> None:
    t = time.perf_counter()
    # Usage asked for as the product asks (agent/llm/client.py): the scripted server then sends
    # the same paced chunks to both sides (its usage chunk too, a chunk's delay after the last).
    stream = await client.chat.completions.create(
        model="bench",
        messages=[{"role": "user", "content": "hi"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content and len(out.first_ms) < len(out.turn_ms) + 1:
            out.first_ms.append((time.perf_counter() - t) * 1000)
    out.turn_ms.append((time.perf_counter() - t) * 1000)


async def _sampler(pid: int, out: Round, stop: asyncio.Event) -> None:
    while not stop.is_set():
        out.rss_peak = max(out.rss_peak, rss_mb(pid))
        try:
            await asyncio.wait_for(stop.wait(), 0.5)
        except TimeoutError:
            pass


async def product_round(server: Daphne, owner: Http, sids: list[str], turns: int, model: Model) -> Round:
    out = Round()
    sockets = await asyncio.gather(*(_connect(server, owner, sid) for sid in sids))
    stop = asyncio.Event()
    sampler = asyncio.create_task(_sampler(server.process.pid, out, stop))
    cpu0, started = cpu_seconds(server.process.pid), out.start(model)

    async def session(ws: ClientConnection, i: int) -> None:
        for n in range(turns):
            await _ws_turn(ws, f"session {i} turn {n}", model.text, out)

    await asyncio.gather(*(session(ws, i) for i, ws in enumerate(sockets)))
    out.stop(model, started)
    out.cpu = cpu_seconds(server.process.pid) - cpu0
    stop.set()
    await sampler
    await asyncio.gather(*(ws.close() for ws in sockets))
    return out


async def reference_round(client: openai.AsyncOpenAI, model: Model, n: int, turns: int) -> Round:
    out = Round()
    started = out.start(model)

    async def session() -> None:
        for _ in range(turns):
            await _raw_turn(client, out)

    await asyncio.gather(*(session() for _ in range(n)))
    out.stop(model, started)
    return out


def _new_sessions(owner: Http, n: int) -> list[str]:
    sids = []
    for _ in range(n):
        resp = owner.csrf_post("/c/new/")
        if resp.status != 302:
            raise RuntimeError(f"could not create a session: {resp.status} {resp.body[:200]}")
        sids.append(resp.location.strip("/").split("/")[-1])
    return sids


async def first_token(server: Daphne, owner: Http, model: Model, client: openai.AsyncOpenAI, n: int) -> Figure:
    model.pace = dict(FAST, delay=0.0)
    (sid,) = _new_sessions(owner, 1)
    ws = await _connect(server, owner, sid)
    prod, ref = Round(), Round()
    for i in range(n + 3):
        if i % 15 == 14:  # a fresh socket (and rate-limit bucket) before the burst allowance runs out
            await ws.close()
            ws = await _connect(server, owner, sid)
        order = [True, False] if i % 2 == 0 else [False, True]
        for product in order:
            if product:
                await _ws_turn(ws, f"first token {i}", model.text, prod)
            else:
                await _raw_turn(client, ref)
    await ws.close()
    s = Samples(prod.first_ms[3:], ref.first_ms[3:])
    added, added95 = median(s.product) - median(s.reference), p95(s.product) - p95(s.reference)
    return Figure(
        "2", "websocket first token (send -> first delta frame)", "ms", median(s.product), p95(s.product),
        median(s.reference), p95(s.reference), "raw client's first chunk",
        f"+{added:.1f} ms median, +{added95:.1f} ms p95", "< 15 ms, p95 < 30 ms", added < 15 and added95 < 30, n=n,
    )  # fmt: skip


# The server CPU budget: a turn's fixed cost and each streamed chunk's, each with its own goal,
# so the next feature that adds cost to the turn path shows "no" the day it lands.
TURN_BUDGET_MS = 6.0
CHUNK_BUDGET_MS = 0.1
FEW, MANY = 20, 120  # chunks per answer on the two sides


# A model's pace for the per-chunk figure at pace: a chunk every 20 ms (50 tokens a second, a
# fast local model). Chunks that arrive together are read and sent together, so the budget's
# chunks, sent at once, cost a fraction of what paced ones do.
PACED = 0.02


async def paced_chunk(server: Daphne, owner: Http, model: Model, client: openai.AsyncOpenAI, turns: int) -> Figure:
    """Daphne's CPU per chunk when chunks come PACED apart, beside the raw client's (this
    process's CPU) for the same paced streams: FEW- and MANY-chunk turns alternated, per chunk
    = the difference / (MANY - FEW)."""
    (sid,) = _new_sessions(owner, 1)
    ws = await _connect(server, owner, sid)
    cpu = {("product", FEW): 0.0, ("product", MANY): 0.0, ("raw", FEW): 0.0, ("raw", MANY): 0.0}
    for i in range(2 * turns + 2):
        chunks = FEW if i % 2 == 0 else MANY
        model.pace = dict(FAST, delay=0.0, chunk_delay=PACED, chunks=chunks)
        before = cpu_seconds(server.process.pid)
        await _ws_turn(ws, f"paced {i}", model.text, Round())
        product = cpu_seconds(server.process.pid) - before
        before = time.process_time()
        await _raw_turn(client, Round())
        raw = time.process_time() - before
        if i >= 2:  # after warming up both sides
            cpu["product", chunks] += product
            cpu["raw", chunks] += raw
    await ws.close()
    per_chunk = {side: (cpu[side, MANY] - cpu[side, FEW]) / turns / (MANY - FEW) * 1000 for side in ("product", "raw")}
    return Figure(
        "3", f"server CPU per streamed chunk at a model's pace (a chunk every {PACED * 1000:.0f} ms)", "ms",
        per_chunk["product"], None, per_chunk["raw"], None, "raw openai client (async), same paced streams",
        f"+{per_chunk['product'] - per_chunk['raw']:.2f} ms a chunk; a {FEW}-chunk turn "
        f"{cpu['product', FEW] / turns * 1000:.1f} ms (raw client {cpu['raw', FEW] / turns * 1000:.1f} ms)",
        "", None, n=4 * turns,
    )  # fmt: skip


async def cpu_budget(server: Daphne, owner: Http, model: Model, turns: int) -> list[Figure]:
    """Daphne's CPU for `turns` turns of FEW chunks beside `turns` of MANY, one session, the
    model answering at once, interleaved: per chunk = the difference / (MANY - FEW); per turn =
    the FEW side less its chunks."""
    (sid,) = _new_sessions(owner, 1)
    ws = await _connect(server, owner, sid)
    cpu = {FEW: 0.0, MANY: 0.0}
    counted = {FEW: 0, MANY: 0}
    for i in range(2 * turns + 4):
        if i % 14 == 13:  # a fresh socket (and rate-limit bucket) before the burst allowance runs out
            await ws.close()
            ws = await _connect(server, owner, sid)
        chunks = FEW if i % 2 == 0 else MANY
        model.pace = dict(FAST, delay=0.0, chunks=chunks)
        before = cpu_seconds(server.process.pid)
        await _ws_turn(ws, f"budget {i}", model.text, Round())
        if i >= 4:  # after warming up both sides
            cpu[chunks] += cpu_seconds(server.process.pid) - before
            counted[chunks] += 1
    await ws.close()
    few, many = (cpu[k] / max(1, counted[k]) * 1000 for k in (FEW, MANY))
    per_chunk = max(0.0, (many - few) / (MANY - FEW))
    per_turn = few - FEW * per_chunk
    n = counted[FEW] + counted[MANY]
    return [
        Figure(
            "3", "server CPU budget: per turn (without its chunks)", "ms", per_turn, None, None, None, "",
            f"{few:.1f} ms a turn of {FEW} chunks, {many:.1f} ms of {MANY}", f"<= {TURN_BUDGET_MS:g} ms",
            per_turn <= TURN_BUDGET_MS, n=n,
        ),
        Figure(
            "3", "server CPU budget: per streamed chunk", "ms", per_chunk, None, None, None, "",
            f"({many:.1f} - {few:.1f}) / {MANY - FEW} chunks", f"<= {CHUNK_BUDGET_MS:g} ms",
            per_chunk <= CHUNK_BUDGET_MS, n=n,
        ),
    ]  # fmt: skip


def _cpu_budget(prods: list[Round], refs: list[Round], turns: int, ideal: float) -> str:
    """CPU per turn of every process on the machine's cores, each side: what the ideal rate would
    need of the 2 cores tells whether the goal is reachable here at all."""

    def per_turn(rounds: list[Round], attr: str) -> float:
        return sum(getattr(r, attr) for r in rounds) / (turns * len(rounds)) * 1000

    daphne, model, client = (per_turn(prods, a) for a in ("cpu", "model_cpu", "client_cpu"))
    ref_model, ref_client = per_turn(refs, "model_cpu"), per_turn(refs, "client_cpu")
    need, ref_need = ideal * (daphne + model + client) / 1000, ideal * (ref_model + ref_client) / 1000
    return (
        f"CPU per turn: daphne {daphne:.1f} ms + scripted model server {model:.1f} ms + load client {client:.1f} ms; "
        f"reference: model server {ref_model:.1f} ms + raw client {ref_client:.1f} ms. At the ideal "
        f"{ideal:.0f} turns/s that is {need:.2f} cores (reference {ref_need:.2f}) of the machine's {os.cpu_count()}"
    )


async def scenario(server: Daphne, owner: Http, model: Model, client: openai.AsyncOpenAI, spec: tuple, sids: list[str], warm: int) -> list[Figure]:  # fmt: skip
    """`warm`: how many of `sids` (the first) earlier scenarios ran turns in."""
    label, n, turns, pace, rounds = spec
    model.pace = dict(pace)
    alone = Round()
    for _ in range(3):
        await _raw_turn(client, alone)
    ideal = n / (median(alone.turn_ms) / 1000)
    prods: list[Round] = []
    refs: list[Round] = []
    for r in range(rounds):
        for product in [True, False] if r % 2 == 0 else [False, True]:
            if product:
                prods.append(await product_round(server, owner, sids[:n], turns, model))
            else:
                refs.append(await reference_round(client, model, n, turns))
    done = n * turns * len(prods)
    rate = [n * turns / p.wall for p in prods]
    ref_rate = [n * turns / r.wall for r in refs]
    cpu_ms = sum(p.cpu for p in prods) / done * 1000
    turn_ms = [t for p in prods for t in p.turn_ms]
    errors, dropped = sum(p.errors for p in prods), sum(p.dropped for p in prods)
    goal_share = 0.9 if pace is REAL else 0.5
    share = median(rate) / ideal
    figures = [
        Figure(
            "3", f"{label}: turns/s", "turns/s", median(rate), min(rate), median(ref_rate), min(ref_rate),
            "raw async client, same load", f"{share:.0%} of ideal {ideal:.1f}/s (raw client {median(ref_rate) / ideal:.0%})",
            f">= {goal_share:.0%} of ideal", share >= goal_share,
            notes=f"{len(prods)} round(s) of {n}x{turns} turns ({', '.join(f'{r / ideal:.0%}' for r in rate)} of ideal "
            f"in turn; in the first, {max(0, n - warm)} chats had their first turn in this process); "
            f"p95 column = worst round; {errors} errors, "
            f"{dropped} dropped; one turn alone {median(alone.turn_ms):.0f} ms", n=done,
        ),
        Figure(
            "3", f"{label}: turn time", "ms", median(turn_ms), p95(turn_ms),
            median([t for r in refs for t in r.turn_ms]), p95([t for r in refs for t in r.turn_ms]),
            "raw async client, same load", f"{errors} errors, {dropped} dropped frames", "0 errors, 0 dropped",
            errors == 0 and dropped == 0, n=len(turn_ms),
        ),
        Figure(
            "3", f"{label}: server CPU per turn", "ms", cpu_ms, None, None, None, "", f"daphne {sum(p.cpu for p in prods) / sum(p.wall for p in prods):.0%} of one core",
            "<= 10 ms" if pace is FAST else "", cpu_ms <= 10 if pace is FAST else None, n=done,
            notes=_cpu_budget(prods, refs, n * turns, ideal),
        ),
    ]  # fmt: skip
    if n == 20 and pace is REAL:
        peak = max(p.rss_peak for p in prods)
        figures.append(Figure("8", "resident memory under 20 sessions", "MB", peak, None, result=f"peak {peak:.0f} MB"))
    return figures


def run(scale: str) -> list[Figure]:
    cfg = SCALES[scale]
    model = Model()
    home = temp_home()
    figures: list[Figure] = []
    try:
        with start_daphne(home / "home", QUIET_CONFIG, model_env(model.server.base_url)) as server:
            owner = Http(server.port)
            owner.login(server.token)
            n_max = max(spec[1] for spec in cfg["scenarios"])
            sids = _new_sessions(owner, n_max)

            async def main() -> None:
                client = openai.AsyncOpenAI(base_url=model.server.base_url, api_key="k", max_retries=0, timeout=120)
                figures.append(await first_token(server, owner, model, client, cfg["first_token"]))
                figures.extend(await cpu_budget(server, owner, model, cfg["budget_turns"]))
                figures.append(await paced_chunk(server, owner, model, client, cfg["paced_turns"]))
                warm = 0  # every scenario's chats are the first n of the same ones
                for spec in cfg["scenarios"]:
                    figures.extend(await scenario(server, owner, model, client, spec, sids, warm))
                    warm = max(warm, spec[1])
                await client.close()

            asyncio.run(main())
            if "Traceback" in server.log():
                figures[-1].notes += " | daphne log has a traceback: " + server.log()[-600:].replace("\n", " ")
    finally:
        model.server.stop()
    return figures
