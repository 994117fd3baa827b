"""`/refine [focus]` in the terminal chat: the background review now, with the focus in its prompt,
and its 💾 line printed as any review's."""

from __future__ import annotations

import pytest

from agent.learning.review import FOCUS_LINE
from tests import dbs
from tests.cli import new_home
from tests.fakellm import Reply
from tests.learning import review_kind, review_starts, script_review

pytestmark = pytest.mark.slow

SAVE_DEBIAN = {
    "name": "memory",
    "arguments": {
        "target": "user",
        "action": "add",
        "content": "Builds docker images on Debian",
        "evidence": ["I build my docker images on Debian"],
    },
}


def test_refine_reviews_the_chat_now_with_the_focus(tmp_path, server):
    home = new_home(tmp_path, server.base_url)
    (home.path / "config.yaml").write_text("learning:\n  evidence: off\n")
    script_review(server, [SAVE_DEBIAN])
    r = home.manage("chat", "--session", "r", "-m", "I build my docker images on Debian", "-m", "/refine docker")
    assert r.returncode == 0, r.stderr
    assert "💾 Reviewing this chat now, focusing on: docker." in r.stderr
    (review,) = review_starts(server)
    assert review_kind(review) == "combined"
    assert FOCUS_LINE.format(focus="docker") in review["messages"][-1]["content"]
    assert "💾 1 saved" in r.stdout.splitlines()
    # The command is not a message: the model never gets "/refine" as a turn, and it is not stored.
    assert not any("/refine" in str(body["messages"]) for body in server.requests)
    assert dbs.query(home.path, "select content from knowledge_message where role='user'") == [
        ("I build my docker images on Debian",)
    ]
    assert dbs.query(home.path, "select trigger, focus from knowledge_reviewrun") == [("request", "docker")]
    assert "Builds docker images on Debian" in (home.path / "memories" / "USER.md").read_text()


def test_refine_says_when_there_is_nothing_to_review_or_nothing_was_saved(tmp_path, server):
    home = new_home(tmp_path, server.base_url)
    r = home.manage("chat", "--session", "e", "-m", "/refine")
    assert r.returncode == 0, r.stderr
    assert "error: This chat has nothing to review yet: send a message first." in r.stderr
    server.when(lambda body: review_kind(body) is not None, Reply(text="Nothing to save."))
    r = home.manage("chat", "--session", "e", "-m", "hello", "-m", "/refine")
    assert r.returncode == 0, r.stderr
    assert "💾 Review done: nothing new to save." in r.stdout.splitlines()
