"""4. Review isolation: a chat turn's latency with background reviews running, against the same
turn with none, interleaved turn by turn against one scripted server. The reviews
are kept busy the whole time: their model calls are slow and they write memory through the
real store. Measured with one session reviewing, and with 10 sessions reviewing at once.

    .venv/bin/python -m bench --only review_overhead

Goal: ratio (median with reviews / median without) at most 1.10.
"""

from __future__ import annotations

import math
import os
import random
import time
from typing import Any

from bench.common import Figure, Samples, django_setup, figure_from, temp_home

SCALES = {"full": 100, "tiny": 2}
CONFIG = "memory:\n  nudge_interval: 0\n  memory_char_limit: 1000000\nskills:\n  creation_nudge_interval: 0\n"


def _model() -> Any:
    """The scripted server in its own process (bench/model_server.py): in this one, its threads
    parsing the reviews' requests took the GIL from the measured turn, which a real model
    server never does."""
    from bench.model_server import ModelProcess
    from tests.learning import REVIEW_PROMPTS

    server = ModelProcess()
    prefixes = list(REVIEW_PROMPTS)
    add = {"target": "memory", "action": "add", "content": "note {n}"}
    server.script(
        {
            "default": {"text": "A short answer of a few words. " * 8},
            "rules": [
                {
                    "prefixes": prefixes,
                    "last_role": "user",
                    "reply": {"tool_calls": [{"name": "memory", "arguments": add}], "delay": 0.3},
                },
                {"prefixes": prefixes, "last_role": "tool", "reply": {"text": "Saved.", "delay": 0.3}},
            ],
        }
    )
    return server


def _turn(agent: Any, i: int, keep_busy: list[Any], snapshot: list[dict[str, Any]]) -> float:
    """One measured turn of `agent`, with a review kept running in each session of `keep_busy`."""
    from agent.learning.review import is_running

    for b in keep_busy:
        if not is_running(b.session.pk):
            b.spawn_review(True, False, snapshot)
    # The message comes at a random moment of the reviews' life (starting, waiting for the model,
    # saving, finishing), as a person's would: 0-300 ms after the reviews were (re)started, the
    # same pauses on both sides (seeded by the sample number). Measuring right after the spawn
    # only met the reviews' start-up; a fixed pause only their wait for the model.
    time.sleep(random.Random(i).uniform(0.0, 0.3))
    t = time.perf_counter()
    for _ in agent.run_turn(f"question {i}"):
        pass
    return (time.perf_counter() - t) * 1000


def _measure(quiet: Any, busy: list[Any], snapshot: list[dict[str, Any]], n: int, block: int = 2) -> Samples:
    """Blocks of `block` turns, with reviews kept running and with none, alternating (the order
    flipping every pair). Before a block without, the reviews still running are waited out: turn by
    turn alternation left the previous sample's reviews running under the reference turn. Each
    block starts with an unmeasured turn, so no measured turn comes straight after the wait."""
    from agent.learning.review import wait_for_reviews

    for i in range(3):
        _turn(quiet, -1 - i, [], snapshot)
    out = Samples()
    for b in range(math.ceil(n / block)):
        for with_reviews in (True, False) if b % 2 == 0 else (False, True):
            if with_reviews:
                _turn(busy[0], -1, busy, snapshot)  # unmeasured: every measured turn follows a turn
                out.product += [_turn(busy[0], b * block + k, busy, snapshot) for k in range(block)]
            else:
                for session in busy:
                    wait_for_reviews(session.session.pk, 120)
                _turn(quiet, -1, [], snapshot)  # unmeasured: not straight after the idle wait
                out.reference += [_turn(quiet, b * block + k, [], snapshot) for k in range(block)]
    return out


def run(scale: str) -> list[Figure]:
    django_setup(temp_home(), CONFIG, {"OPENAI_API_KEY": "k", "HERMES_MODEL": "b"})
    server = _model()  # its helpers need Django
    os.environ["OPENAI_BASE_URL"] = server.base_url
    from agent.chat.runner import AgentSession

    snapshot = [{"role": "system", "content": "s"}, {"role": "user", "content": "I like tea"}]
    figures = []
    for reviewers in (1, 10):
        busy = [AgentSession.open(source="cli") for _ in range(reviewers)]
        # A fresh chat for the reference too: both measured chats grow alike (one kept from the
        # first measurement had twice the history, and slower turns, in the second).
        quiet = AgentSession.open(source="cli")
        s = _measure(quiet, busy, snapshot, SCALES[scale])
        f = figure_from("4", f"chat turn, {reviewers} session(s) reviewing", "ms", s, reference="no review running")
        ratio = (f.median or 0) / (f.ref_median or 1)
        f.result, f.goal, f.met = f"ratio {ratio:.2f}", "<= 1.10", ratio <= 1.10
        figures.append(f)
    figures[
        -1
    ].notes = (
        f"{sum(server.counts())} review model calls ran during the measurements; each measurement on two fresh chats"
    )
    server.stop()
    return figures
