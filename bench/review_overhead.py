"""4. Review isolation: a chat turn's latency with background reviews running, against the same
turn with none, interleaved turn by turn against one scripted server (issue 5). The reviews
are kept busy the whole time: their model calls are slow and they write memory through the
real store. Measured with one session reviewing, and with 10 sessions reviewing at once.

    .venv/bin/python -m bench --only review_overhead

Goal: ratio (median with reviews / median without) at most 1.10.
"""

from __future__ import annotations

import functools
import os
import time
from typing import Any

from bench.common import Figure, django_setup, figure_from, interleaved, temp_home

SCALES = {"full": 40, "tiny": 2}
CONFIG = "memory:\n  nudge_interval: 0\n  memory_char_limit: 1000000\nskills:\n  creation_nudge_interval: 0\n"


def _model() -> Any:
    from tests.fakellm import Reply, ScriptedLLM
    from tests.learning import is_review_followup, is_review_start

    server = ScriptedLLM()
    counter = {"n": 0}

    def review_call(body: dict[str, Any]) -> Reply:
        counter["n"] += 1
        server.requests.clear()
        add = {"target": "memory", "action": "add", "content": f"note {counter['n']}"}
        return Reply(tool_calls=[{"name": "memory", "arguments": add}], delay=0.3)

    server.when(is_review_start, review_call)
    server.when(is_review_followup, Reply(text="Saved.", delay=0.3))
    server.default = lambda body: Reply(text="A short answer of a few words. " * 8)
    server.start()
    return server, counter


def _turn(agent: Any, i: int, keep_busy: list[Any], snapshot: list[dict[str, Any]]) -> float:
    """One measured turn of `agent`, with a review kept running in each session of `keep_busy`."""
    from agent.review import is_running

    for b in keep_busy:
        if not is_running(b.session.pk):
            b.spawn_review(True, False, snapshot)
    if keep_busy:
        time.sleep(0.05)  # let the reviews get going before the measured turn
    t = time.perf_counter()
    for _ in agent.run_turn(f"question {i}"):
        pass
    return (time.perf_counter() - t) * 1000


def _turn_with(busy: list[Any], snapshot: list[dict[str, Any]], i: int) -> float:
    return _turn(busy[0], i, busy, snapshot)


def run(scale: str) -> list[Figure]:
    django_setup(temp_home(), CONFIG, {"OPENAI_API_KEY": "k", "HERMES_MODEL": "b"})
    server, counter = _model()  # its helpers need Django
    os.environ["OPENAI_BASE_URL"] = server.base_url
    from agent.runner import AgentSession

    snapshot = [{"role": "system", "content": "s"}, {"role": "user", "content": "I like tea"}]
    quiet = AgentSession.open(source="cli")
    figures = []
    for reviewers in (1, 10):
        busy = [AgentSession.open(source="cli") for _ in range(reviewers)]
        with_reviews = functools.partial(_turn_with, busy, snapshot)
        s = interleaved(with_reviews, lambda i: _turn(quiet, i, [], snapshot), SCALES[scale])
        f = figure_from("4", f"chat turn, {reviewers} session(s) reviewing", "ms", s, reference="no review running")
        ratio = (f.median or 0) / (f.ref_median or 1)
        f.result, f.goal, f.met = f"ratio {ratio:.2f}", "<= 1.10", ratio <= 1.10
        figures.append(f)
    figures[-1].notes = f"{counter['n']} review model calls ran during the measurements"
    server.stop()
    return figures
