"""Review on demand: "Review this chat now" (the chat page's endpoint) and `/refine [focus]`, running
the same background review the counters start, with the focus in its prompt."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from agent.chat import service as chat_service
from agent.chat.slash import refine_focus
from agent.learning import notify
from agent.learning.review import FOCUS_LINE, wait_for_reviews
from knowledge.models import ChatSession, Message, ReviewRun
from tests.conftest import write_config
from tests.fakellm import Reply, ScriptedLLM
from tests.learning import review_kind, review_starts, script_review

pytestmark = pytest.mark.django_db(transaction=True)

SAVE_COMPOSE = {
    "name": "memory",
    "arguments": {
        "target": "memory",
        "action": "add",
        "content": "Builds the stack with docker compose",
        "evidence": ["I build the stack with docker compose"],
    },
}


def _chat(*texts: str) -> ChatSession:
    session = chat_service.create_session()
    for text in texts:
        Message.objects.create(session=session, role="user", content=text)
        Message.objects.create(session=session, role="assistant", content=f"answer to {text}")
    ChatSession.objects.filter(pk=session.pk).update(message_count=2 * len(texts))
    session.refresh_from_db()
    return session


@pytest.fixture
def notices() -> Iterator[list[notify.ReviewNotice]]:
    heard: list[notify.ReviewNotice] = []
    unsubscribe = notify.subscribe(heard.append)
    yield heard
    unsubscribe()


def _notice_of(heard: list[notify.ReviewNotice], session_id: str) -> notify.ReviewNotice:
    """The one notice of the session's review. The run is marked done before its notice is
    published (and, on the scale-out profile, before the channel layer delivers it): waited for."""
    deadline = time.monotonic() + 15
    while not (found := [n for n in heard if n.session_id == session_id]) and time.monotonic() < deadline:
        time.sleep(0.05)
    (notice,) = found
    return notice


@pytest.mark.parametrize(
    ("text", "focus"),
    [
        ("/refine", ""),
        ("/refine   ", ""),
        ("/refine docker", "docker"),
        ("  /refine docker\n  base images ", "docker base images"),
        ("/refined", None),
        ("/refine-it now", None),
        ("please /refine", None),
    ],
)
def test_refine_lines(text: str, focus: str | None) -> None:
    assert refine_focus(text) == focus


def test_review_now_runs_the_review_with_the_focus_and_its_notice_follows(
    auth_client, llm: ScriptedLLM, home, notices
) -> None:
    write_config(home, "learning:\n  evidence: off\n")
    script_review(llm, [SAVE_COMPOSE])
    session = _chat("I build the stack with docker compose")
    resp = auth_client.post(f"/c/{session.pk}/review/", {"focus": "  docker\n compose "})
    assert resp.status_code == 200, resp.content
    assert (
        resp.json()["message"]
        == "💾 Reviewing this chat now, focusing on: docker compose. What it saves shows here when it is done."
    )
    assert wait_for_reviews(session.pk, 30)
    (review,) = review_starts(llm)
    assert review_kind(review) == "combined"
    asked = review["messages"][-1]["content"]
    assert FOCUS_LINE.format(focus="docker compose") in asked
    # The conversation it reviews is the chat's, as for a review the counters start.
    assert [m["content"] for m in review["messages"] if m["role"] == "user"][
        0
    ] == "I build the stack with docker compose"
    run = ReviewRun.objects.get(session=session)
    assert (run.trigger, run.focus, run.status) == ("request", "docker compose", "done")
    notice = _notice_of(notices, session.pk)
    assert notice.requested and notice.line == "💾 1 saved"
    assert "Builds the stack with docker compose" in (home / "memories" / "MEMORY.md").read_text()


def test_review_now_without_a_focus_and_with_nothing_saved_still_answers(
    auth_client, llm: ScriptedLLM, home, notices
) -> None:
    llm.when(lambda body: review_kind(body) is not None, Reply(text="Nothing to save."))
    session = _chat("hello")
    assert auth_client.post(f"/c/{session.pk}/review/", {}).status_code == 200
    assert wait_for_reviews(session.pk, 30)
    (review,) = [b for b in llm.requests if review_kind(b) is not None]
    assert "Focus on: " not in review["messages"][-1]["content"].split("\n\n", 1)[1]
    notice = _notice_of(notices, session.pk)
    assert notice.requested and notice.line == "" and notice.status == "done"


def test_a_private_chat_refuses_review_on_demand(auth_client, llm: ScriptedLLM, home) -> None:
    session = _chat("my secret plans")
    ChatSession.objects.filter(pk=session.pk).update(private=True)
    resp = auth_client.post(f"/c/{session.pk}/review/", {"focus": "plans"})
    assert resp.status_code == 409
    assert resp.json()["error"] == "This chat is private: nothing is learned from it, so it cannot be reviewed."
    assert not ReviewRun.objects.filter(session=session).exists()
    assert llm.requests == []


def test_an_empty_chat_and_a_too_long_focus_are_refused_in_words(auth_client, llm: ScriptedLLM, home) -> None:
    empty = chat_service.create_session()
    resp = auth_client.post(f"/c/{empty.pk}/review/", {})
    assert resp.status_code == 409 and "nothing to review yet" in resp.json()["error"]
    long = auth_client.post(f"/c/{_chat('hi').pk}/review/", {"focus": "x" * 501})
    assert long.status_code == 400 and "Keep the focus under 500 characters" in long.json()["error"]
    assert auth_client.get(f"/c/{empty.pk}/review/").status_code == 405
    assert not ReviewRun.objects.exists()


def test_the_chat_page_offers_it_in_the_chat_menu(auth_client, llm: ScriptedLLM, home) -> None:
    session = _chat("hello")
    page = auth_client.get(f"/c/{session.pk}/").content.decode()
    assert f'data-url="/c/{session.pk}/review/"' in page and "Review this chat now" in page
