"""Views of verified learning: 👍/👎, merging duplicate entries, the prompt page."""

from __future__ import annotations

import pytest

from foundation import config as hermes_config
from knowledge.memory.store import MemoryStore
from knowledge.models import AnswerFeedback, ChatSession, KnowledgeChange, Message
from knowledge.prompt import build_system_prompt
from knowledge.provenance import Provenance

pytestmark = pytest.mark.django_db

USER = Provenance(actor="user")


def _chat() -> tuple[ChatSession, Message]:
    session = ChatSession.objects.create()
    Message.objects.create(session=session, role="user", content="hi")
    return session, Message.objects.create(session=session, role="assistant", content="hello")


def test_feedback_on_an_answer_and_on_the_latest(auth_client, home):
    session, answer = _chat()
    url = f"/c/{session.pk}/feedback/"
    resp = auth_client.post(url, {"message_id": answer.pk, "verdict": "bad", "note": "wrong"})
    assert resp.json() == {"ok": True, "message_id": answer.pk, "verdict": "bad"}
    assert auth_client.post(url, {"latest": "1", "verdict": "good"}).json()["message_id"] == answer.pk
    assert AnswerFeedback.objects.get().verdict == "good"


@pytest.mark.parametrize(
    ("data", "status", "error"),
    [
        ({"message_id": "999999", "verdict": "good"}, 404, "not found"),
        ({"verdict": "good"}, 404, "not found"),
        ({"latest": "1", "verdict": "meh"}, 400, "verdict must be"),
    ],
)
def test_bad_feedback_is_a_clear_error_and_saves_nothing(auth_client, home, data, status, error):
    session, _ = _chat()
    resp = auth_client.post(f"/c/{session.pk}/feedback/", data)
    assert resp.status_code == status and error in resp.json()["error"]
    assert not AnswerFeedback.objects.exists()


def test_memory_page_lists_duplicates_and_merge_keeps_one(auth_client, home):
    store = MemoryStore()
    store.add("memory", "Deploys with docker compose", USER)
    store.add("user", "deploys with Docker Compose!", USER)
    store.add("user", "Uses vim", USER)
    html = auth_client.get("/memory/").content.decode()
    assert "Possible duplicates" in html
    resp = auth_client.post(
        "/memory/merge/",
        {
            "keep_target": "memory",
            "keep": "Deploys with docker compose",
            "drop_target": "user",
            "drop": "deploys with Docker Compose!",
            "content": "Deploys with docker compose (never docker run)",
        },
    )
    assert resp.status_code == 302
    assert store.entries("memory") == ["Deploys with docker compose (never docker run)"]
    assert store.entries("user") == ["Uses vim"]
    assert "Possible duplicates" not in auth_client.get("/memory/").content.decode()
    assert KnowledgeChange.objects.filter(actor="user", action="remove").exists()


def test_merge_without_entries_changes_nothing(auth_client, home):
    MemoryStore().add("user", "Uses vim", USER)
    resp = auth_client.post("/memory/merge/", {"keep_target": "user", "drop_target": "nope"}, follow=True)
    assert "Nothing merged" in resp.content.decode()
    assert MemoryStore().entries("user") == ["Uses vim"]


def test_prompt_page_shows_blocks_with_budgets(auth_client, home):
    MemoryStore().add("user", "Prefers short answers", USER)
    session = ChatSession.objects.create(system_prompt=build_system_prompt(hermes_config.get()))
    html = auth_client.get(f"/c/{session.pk}/prompt/").content.decode()
    assert 'data-block="User profile"' in html and f"{len('Prefers short answers')}/1375 chars" in html
    assert 'data-block="Memory"' not in html  # an empty file is left out of the prompt


def test_prompt_page_shows_the_chats_own_instructions(auth_client, home):
    session = ChatSession.objects.create(system_prompt="You are Hermes.", instructions="Answer in French.")
    html = auth_client.get(f"/c/{session.pk}/prompt/").content.decode()
    assert 'id="prompt-instructions"' in html and "Answer in French." in html
    plain = ChatSession.objects.create(system_prompt="You are Hermes.")
    assert 'id="prompt-instructions"' not in auth_client.get(f"/c/{plain.pk}/prompt/").content.decode()


def test_bad_feedback_names_the_field_in_a_persons_words(auth_client, home):
    session, answer = _chat()
    resp = auth_client.post(f"/c/{session.pk}/feedback/", {"message_id": "abc", "verdict": "meh"})
    assert resp.status_code == 400
    assert resp.json()["fields"] == {
        "message_id": ["Which answer was not said (message_id is not an answer's number)."],
        "verdict": ["The verdict must be 'good' (👍) or 'bad' (👎), not meh."],
    }
    assert resp.json()["error"].startswith("Which answer was not said")
    too_long = {"message_id": answer.pk, "verdict": "bad", "note": "x" * 2001}
    error = auth_client.post(f"/c/{session.pk}/feedback/", too_long).json()["error"]
    assert error == "A note is at most 2,000 characters; shorten it to save the verdict."
    assert not AnswerFeedback.objects.exists()
