"""The closed learning loop through the real terminal chat (subprocess) and scripted model."""

from __future__ import annotations

import pytest

from tests.cli import new_home
from tests.fakellm import Reply
from tests.learning import (
    SAVE_USER_PREF,
    is_flush,
    review_kind,
    review_starts,
    script_review,
    user_texts,
)

pytestmark = pytest.mark.slow

# These tests are about the loop's rhythm, with turns like "turn 3" that state nothing: the
# evidence rule (tested in tests/agent/admission/test_provenance.py) is off so writes without quotes land, as in Hermes Agent.
SEED_RULES = "learning:\n  evidence: off\n"


def _turns(n, start=1):
    out = []
    for i in range(start, start + n):
        out += ["-m", f"turn {i}"]
    return out


def _main_requests(server):
    return [b for b in server.chat_requests() if review_kind(b) is None and not is_flush(b)]


def test_review_fires_on_tenth_turn_with_combined_prompt(tmp_path, server):
    home = new_home(tmp_path, server.base_url)
    (home.path / "config.yaml").write_text(SEED_RULES)
    script_review(server, [SAVE_USER_PREF])
    r = home.manage("chat", "--session", "t", *_turns(9))
    assert r.returncode == 0, r.stderr
    assert review_starts(server) == []
    assert "💾" not in r.stdout
    r = home.manage("chat", "--session", "t", *_turns(1, start=10))  # a new process: counters persisted
    assert r.returncode == 0, r.stderr
    reviews = review_starts(server)
    assert len(reviews) == 1
    assert review_kind(reviews[0]) == "combined"  # ten one-call turns are also ten iterations
    # The review's request holds the whole conversation.
    assert [t for t in user_texts(reviews[0]) if t.startswith("turn")] == [f"turn {i}" for i in range(1, 11)]
    assert "Prefers Debian base images" in (home.path / "memories" / "USER.md").read_text()
    assert "💾 1 saved" in r.stdout.splitlines()


def test_memory_prompt_when_skill_review_is_off(tmp_path, server):
    home = new_home(tmp_path, server.base_url)
    (home.path / "config.yaml").write_text(SEED_RULES + "skills:\n  creation_nudge_interval: 0\n")
    script_review(server, [SAVE_USER_PREF])
    r = home.manage("chat", *_turns(10))
    assert r.returncode == 0, r.stderr
    reviews = review_starts(server)
    assert [review_kind(b) for b in reviews] == ["memory"]
    # The review may only use the knowledge tools, and a memory-only review cannot write skills.
    assert sorted(t["function"]["name"] for t in reviews[0]["tools"]) == ["memory", "skill_view", "skills_list"]


def test_real_memory_call_on_turn_5_moves_review_to_turn_15(tmp_path, server):
    home = new_home(tmp_path, server.base_url)
    (home.path / "config.yaml").write_text(SEED_RULES + "skills:\n  creation_nudge_interval: 0\n")
    script_review(server, [SAVE_USER_PREF])
    server.when(
        lambda b: review_kind(b) is None and b["messages"][-1].get("content") == "turn 5",
        Reply(
            tool_calls=[
                {
                    "name": "memory",
                    "arguments": {"target": "memory", "action": "add", "content": "Project uses ports 3000-3010"},
                }
            ]
        ),
        times=1,
    )
    r = home.manage("chat", "--session", "m", *_turns(14))
    assert r.returncode == 0, r.stderr
    assert review_starts(server) == []  # not on turn 10
    r = home.manage("chat", "--session", "m", *_turns(1, start=15))
    reviews = review_starts(server)
    assert len(reviews) == 1 and user_texts(reviews[0])[-2] == "turn 15"
    assert "💾 1 saved" in r.stdout.splitlines()


def test_twelve_tool_iterations_in_one_turn_trigger_skill_review(tmp_path, server):
    home = new_home(tmp_path, server.base_url)
    (home.path / "config.yaml").write_text(SEED_RULES + "memory:\n  nudge_interval: 0\n")
    calls = {"n": 0}

    def main(body):
        if review_kind(body) is None and not is_flush(body):
            calls["n"] += 1
            if calls["n"] <= 11:
                return Reply(tool_calls=[{"name": "skills_list", "arguments": {}}])
        return Reply(text="finished the task")

    server.default = main
    skill = (
        "---\nname: docker-compose-debug\ndescription: Debug docker compose port clashes\n---\n"
        "# Steps\n1. Check ports 3000-3010\n"
    )
    script_review(
        server,
        [{"name": "skill_manage", "arguments": {"action": "create", "name": "docker-compose-debug", "content": skill}}],
    )
    r = home.manage("chat", "-m", "fix my compose setup")
    assert r.returncode == 0, r.stderr
    reviews = review_starts(server)
    assert [review_kind(b) for b in reviews] == ["skill"]
    # The review ran after the turn's final answer.
    assert reviews[0]["messages"][-2]["content"] == "finished the task"
    assert (home.path / "skills" / "docker-compose-debug" / "SKILL.md").exists()
    assert "💾 1 saved" in r.stdout.splitlines()


def test_both_flags_give_one_combined_review(tmp_path, server):
    home = new_home(tmp_path, server.base_url)
    (home.path / "config.yaml").write_text(SEED_RULES + "memory:\n  nudge_interval: 1\n")
    n = {"i": 0}

    def main(body):
        if review_kind(body) is None and not is_flush(body) and n["i"] < 11:
            n["i"] += 1
            return Reply(tool_calls=[{"name": "skills_list", "arguments": {}}])
        return Reply(text="done")

    server.default = main
    script_review(server, [SAVE_USER_PREF])
    r = home.manage("chat", "-m", "long task")
    assert r.returncode == 0, r.stderr
    assert [review_kind(b) for b in review_starts(server)] == ["combined"]


def test_intervals_zero_switch_reviews_off_but_tools_work(tmp_path, server):
    home = new_home(tmp_path, server.base_url)
    (home.path / "config.yaml").write_text(
        SEED_RULES + "memory:\n  nudge_interval: 0\nskills:\n  creation_nudge_interval: 0\n"
    )
    script_review(server, [SAVE_USER_PREF])
    server.when(
        lambda b: review_kind(b) is None and b["messages"][-1].get("content") == "turn 3",
        Reply(
            tool_calls=[{"name": "memory", "arguments": {"target": "user", "action": "add", "content": "Name is Ada"}}]
        ),
        times=1,
    )
    r = home.manage("chat", *_turns(12))
    assert r.returncode == 0, r.stderr
    assert review_starts(server) == []
    assert "Name is Ada" in (home.path / "memories" / "USER.md").read_text()


def test_flush_at_session_end_after_six_turns_leaves_no_trace(tmp_path, server):
    home = new_home(tmp_path, server.base_url)
    (home.path / "config.yaml").write_text(
        SEED_RULES + "memory:\n  nudge_interval: 0\nskills:\n  creation_nudge_interval: 0\n"
    )
    server.when(
        lambda b: is_flush(b),
        Reply(
            text="saving",
            tool_calls=[
                {"name": "memory", "arguments": {"target": "user", "action": "add", "content": "Works late at night"}}
            ],
        ),
    )
    r = home.manage("chat", "--session", "f", *_turns(6))
    assert r.returncode == 0, r.stderr
    flushes = [b for b in server.chat_requests() if is_flush(b)]
    assert len(flushes) == 1
    assert [t["function"]["name"] for t in flushes[0]["tools"]] == ["memory"]
    assert "Works late at night" in (home.path / "memories" / "USER.md").read_text()
    r = home.manage("chat", "--session", "f", "-m", "turn 7")
    resumed = _main_requests(server)[-1]
    contents = [m.get("content") or "" for m in resumed["messages"]]
    assert not any("session is being compressed" in c or c == "saving" for c in contents)
    assert user_texts(resumed) == [f"turn {i}" for i in range(1, 8)]


def test_no_flush_with_fewer_than_six_turns(tmp_path, server):
    home = new_home(tmp_path, server.base_url)
    r = home.manage("chat", *_turns(5))
    assert r.returncode == 0, r.stderr
    assert not any(is_flush(b) for b in server.chat_requests())
