"""7. Prompt economy over a 30-turn session (memory and skills present, reviews every 10 turns):
what share of each main request's prompt is the memory/skills blocks, whether the system prompt
stays byte-identical turn to turn, and how many review calls (and prompt tokens) every 10 turns
cost — once with the main model, once with `review.model` set, the two sessions interleaved
turn by turn. Tokens are the scripted server's estimate (characters / 4), as it reports usage."""

from __future__ import annotations

import json
import time
from typing import Any

from bench.common import Figure, django_setup, median, p95, temp_home

SCALES = {"full": 30, "tiny": 10}
CONFIG = "memory:\n  nudge_interval: 10\n  flush_min_turns: 0\nskills:\n  creation_nudge_interval: 10\n"
REVIEW_MODEL = "bench-review-model"


def _seed_knowledge() -> None:
    from knowledge.memory.store import MemoryStore
    from knowledge.provenance import Provenance
    from knowledge.skills.store import SkillStore

    store = MemoryStore()
    for i in range(8):
        store.add(
            "memory", f"The project uses tool number {i} for its builds, configured in tools/{i}.yaml", Provenance()
        )
        store.add("user", f"Prefers answer style {i}: short, with a code example", Provenance())
    skills = SkillStore()
    for i in range(6):
        body = f"---\nname: skill-{i}\ndescription: How to do task {i} step by step\n---\n# Steps\n\n1. Do {i}.\n"
        skills.create(f"skill-{i}", body, prov=Provenance())


def _tokens(body: dict[str, Any]) -> int:
    return max(1, len(json.dumps(body.get("messages", []))) // 4)


def run(scale: str) -> list[Figure]:
    from tests.fakellm import Reply, ScriptedLLM

    server = ScriptedLLM()
    server.default = lambda body: Reply(text="Here is a useful answer about the build. " * 3)
    server.start()
    django_setup(
        temp_home(), CONFIG, {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "k", "HERMES_MODEL": "main"}
    )
    _seed_knowledge()
    from agent.chat.runner import AgentSession
    from agent.learning import review
    from foundation import config as hermes_config
    from knowledge.memory.store import MemoryStore
    from knowledge.skills.store import SkillStore
    from tests.learning import review_kind

    base = hermes_config.get()
    cheap = base.with_values({"review.model": REVIEW_MODEL})
    agents = {
        "main": AgentSession.open(source="cli", config=base),
        "cheap": AgentSession.open(source="cli", config=cheap),
    }
    block_chars = len(MemoryStore(base).render_prompt_blocks()) + len(SkillStore(base).render_index())
    turns = SCALES[scale]
    sent: dict[str, list[dict[str, Any]]] = {k: [] for k in agents}
    for i in range(turns):
        for key, agent in agents.items():
            before = len(server.chat_requests())
            for _ in agent.run_turn(f"How do I run build step {i}?"):
                pass
            while review.is_running(agent.session.pk):
                time.sleep(0.05)
            sent[key].extend(server.chat_requests()[before:])  # this agent's turn and its review
    server.stop()
    main = [b for k in agents for b in sent[k] if review_kind(b) is None]
    reviews = [b for k in agents for b in sent[k] if review_kind(b) is not None]
    share = [block_chars / len(json.dumps(b["messages"])) * 100 for b in main]
    identical = all(len({b["messages"][0]["content"] for b in sent[k] if review_kind(b) is None}) == 1 for k in agents)
    per10 = 10 / turns / len(agents)
    review_tokens = sum(_tokens(b) for b in reviews) * per10
    main_tokens = sum(_tokens(b) for b in main) * per10
    cheap_reviews = [b for b in sent["cheap"] if review_kind(b) is not None]
    cheap_ok = bool(cheap_reviews) and all(b["model"] == REVIEW_MODEL for b in cheap_reviews)
    return [
        Figure("7", "prompt share of memory/skills blocks", "%", median(share), p95(share), result=f"{block_chars} characters of blocks", n=len(share)),
        Figure("7", "system prompt byte-identical turn to turn", "", result="yes" if identical else "NO", goal="identical", met=identical, n=len(main)),
        Figure("7", "review calls per 10 turns", "calls", len(reviews) * per10, None, len(main) * per10, None, "main-model calls per 10 turns",
               result=f"{review_tokens:,.0f} review prompt tokens vs {main_tokens:,.0f} main per 10 turns", n=len(reviews)),
        Figure("7", "reviews go to review.model when set", "", result="yes" if cheap_ok else "NO", goal="yes", met=cheap_ok),
    ]  # fmt: skip
