"""A cached chat follows config.yaml: a setting saved since its last turn (on this worker or
another) governs its next turn; a config a caller built is kept."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent.chat.runner import AgentSession, InputTooLarge, TurnSaved
from agent.learning.review import wait_for_reviews
from foundation import config as hermes_config
from tests.conftest import write_config
from tests.learning import SAVE_USER_PREF, review_starts, script_review

pytestmark = pytest.mark.django_db(transaction=True)


def _saved_elsewhere(home: Path, text: str) -> None:
    """config.yaml replaced as another worker's save does it; this process is not told."""
    new = home / "other-worker.yaml"
    new.write_text(text + "chat:\n  auto_title: false\n", encoding="utf-8")
    os.replace(new, home / "config.yaml")


def test_the_next_turn_of_an_open_chat_follows_a_saved_interval(home, llm):
    write_config(home, "memory:\n  nudge_interval: 3\nskills:\n  creation_nudge_interval: 0\n")
    script_review(llm, [SAVE_USER_PREF])
    agent = AgentSession.open(source="web")
    first = [e for e in agent.run_turn("I use Debian base images") if isinstance(e, TurnSaved)]
    assert not first[-1].review_spawned and first[-1].turns_until_memory_review == 2
    _saved_elsewhere(home, "memory:\n  nudge_interval: 2\nagent:\n  max_message_chars: 50\n")
    # Turn 2: due at the new interval (2), not the old one (3).
    second = [e for e in agent.run_turn("Which tag is smallest?") if isinstance(e, TurnSaved)]
    assert second[-1].review_spawned
    assert wait_for_reviews(agent.session.pk, 30) and len(review_starts(llm)) == 1
    with pytest.raises(InputTooLarge, match="the limit is 50"):  # and the other keys saved with it
        list(agent.run_turn("x" * 51))


def test_a_config_built_by_the_caller_is_kept(home, llm, tmp_path):
    built = hermes_config.Config(home).with_values({"memory.nudge_interval": 5, "chat.auto_title": False})
    agent = AgentSession.open(source="cli", config=built)
    _saved_elsewhere(home, "memory:\n  nudge_interval: 1\n")
    list(agent.run_turn("hello"))
    assert agent.config is built and agent.counters.memory_interval == 5
