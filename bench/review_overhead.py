"""Median chat-turn latency with and without a background review running (issue 5).

Both conditions run in one process, interleaved turn by turn, against the same scripted
OpenAI-compatible server on loopback, so machine noise hits both alike. The review is kept
busy the whole time: its model call is slow and it writes memory through the real store.

    .venv/bin/python bench/review_overhead.py [--turns 60]

Goal: ratio (with review / without) at most 1.10.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["HERMES_HOME"] = tempfile.mkdtemp(prefix="hermes-bench-")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hermes_site.settings")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=60)
    args = parser.parse_args()

    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)

    from agent.review import is_running
    from agent.runner import AgentSession
    from hermes_site import config as hermes_config
    from tests.fakellm import Reply, ScriptedLLM
    from tests.learning import is_review_followup, is_review_start

    server = ScriptedLLM()
    server.start()
    os.environ.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="k", HERMES_MODEL="bench")
    (Path(os.environ["HERMES_HOME"]) / "config.yaml").write_text(
        "memory:\n  nudge_interval: 0\n  memory_char_limit: 1000000\nskills:\n  creation_nudge_interval: 0\n"
    )
    hermes_config.reset()
    counter = {"n": 0}

    def review_call(body: dict) -> Reply:
        counter["n"] += 1
        return Reply(
            tool_calls=[
                {
                    "name": "memory",
                    "arguments": {"target": "memory", "action": "add", "content": f"note {counter['n']}"},
                }
            ],
            delay=0.3,
        )

    server.when(is_review_start, review_call)
    server.when(is_review_followup, Reply(text="Saved.", delay=0.3))
    server.default = lambda body: Reply(text="A short answer of a few words. " * 8)

    quiet = AgentSession.open(source="cli")
    busy = AgentSession.open(source="cli")
    snapshot = [{"role": "system", "content": "s"}, {"role": "user", "content": "I like tea"}]

    def keep_review_running() -> None:
        if not is_running(busy.session.pk):
            busy.spawn_review(True, False, snapshot)

    def timed(agent: AgentSession, text: str) -> float:
        t0 = time.perf_counter()
        for _ in agent.run_turn(text):
            pass
        return time.perf_counter() - t0

    for i in range(5):  # warm-up: imports, connections, caches
        timed(quiet, f"warm {i}")
        timed(busy, f"warm {i}")
    without: list[float] = []
    with_review: list[float] = []
    for i in range(args.turns):
        without.append(timed(quiet, f"question {i}"))
        keep_review_running()
        time.sleep(0.05)  # let the review get going before the measured turn
        with_review.append(timed(busy, f"question {i}"))
    server.stop()

    m0, m1 = statistics.median(without), statistics.median(with_review)
    print(f"turns per condition: {args.turns}; reviews that ran: {counter['n']}")
    print(f"median turn latency without review: {m0 * 1000:.1f} ms")
    print(f"median turn latency with a review running: {m1 * 1000:.1f} ms")
    print(f"ratio: {m1 / m0:.3f} (goal <= 1.10)")


if __name__ == "__main__":
    main()
