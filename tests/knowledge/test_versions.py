"""A chat's versions: the path shown, the versions of a turn, choosing one, and what the model,
the review and the evidence check read (only the chosen version)."""

from __future__ import annotations

import pytest

from agent.chat import service as chat_service
from knowledge import versions
from knowledge.models import ChatSession, Message
from knowledge.verification import evidence

pytestmark = pytest.mark.django_db(transaction=True)


def _say(session: ChatSession, role: str, content: str, after: Message | None = None, first: bool = False) -> Message:
    m = Message(session=session, role=role, content=content, parent=after)
    m.starts_chat = first
    m.save()
    return m


@pytest.fixture
def chat(home) -> tuple[ChatSession, dict[str, Message]]:
    """q1 → a1 → q2 → a2, then q2 edited (q2b → a2b), and a1 regenerated (a1b)."""
    session = chat_service.create_session()
    m: dict[str, Message] = {}
    m["q1"] = _say(session, "user", "How do I restart nginx?")
    m["a1"] = _say(session, "assistant", "Use systemctl restart nginx.")
    m["q2"] = _say(session, "user", "And reload only?")
    m["a2"] = _say(session, "assistant", "systemctl reload nginx keeps connections.")
    m["q2b"] = _say(session, "user", "And on Alpine Linux?", after=m["a1"])
    m["a2b"] = _say(session, "assistant", "rc-service nginx restart on OpenRC.")
    m["a1b"] = _say(session, "assistant", "sudo nginx -s reload, or systemctl.", after=m["q1"])
    return session, m


def _contents(session: ChatSession) -> list[str]:
    return [msg["content"] for msg in session.api_messages()[1:]]


def test_the_newest_version_is_shown_and_sent_to_the_model(chat):
    session, m = chat
    assert _contents(session) == ["How do I restart nginx?", "sudo nginx -s reload, or systemctl."]
    tree = versions.Tree.load(session.pk)
    assert tree.siblings(m["a1"].pk) == [m["a1"].pk, m["a1b"].pk]
    assert tree.siblings(m["q2b"].pk) == [m["q2"].pk, m["q2b"].pk]
    marks = versions.positions(tree, versions.chosen_path(session))
    assert marks == {m["a1b"].pk: versions.Position(2, 2, m["a1"].pk, None)}


def test_choosing_a_version_shows_what_followed_it(chat):
    session, m = chat
    leaf = versions.choose(session, m["a1"].pk)  # back to the first answer: its newest follow-up
    assert leaf == m["a2b"].pk and session.leaf_id == m["a2b"].pk
    assert _contents(session) == [
        "How do I restart nginx?",
        "Use systemctl restart nginx.",
        "And on Alpine Linux?",
        "rc-service nginx restart on OpenRC.",
    ]
    assert versions.step(session, m["q2b"].pk, -1) == m["q2"].pk
    assert _contents(session)[2:] == ["And reload only?", "systemctl reload nginx keeps connections."]
    assert versions.off_path(session) == {m["q2b"].pk, m["a2b"].pk, m["a1b"].pk}
    stored = ChatSession.objects.get(pk=session.pk)
    assert stored.leaf_id == m["a2"].pk and stored.revision == 2
    with pytest.raises(versions.VersionError, match="no version 3"):
        versions.step(session, m["q2"].pk, 2)
    with pytest.raises(versions.VersionError, match="not part of this chat"):
        versions.choose(session, 10**9)


def test_choosing_the_newest_version_leaves_the_leaf_unset(chat):
    session, m = chat
    versions.choose(session, m["a1"].pk)
    versions.choose(session, m["a1b"].pk)
    assert ChatSession.objects.get(pk=session.pk).leaf_id is None  # the newest message: what a new one becomes


def test_a_message_appended_without_a_parent_follows_the_newest(home):
    session = chat_service.create_session()
    first = Message.objects.create(session=session, role="user", content="one")
    second = Message.objects.create(session=session, role="assistant", content="two")
    assert first.parent_id is None and second.parent_id == first.pk
    assert versions.chosen_path(session) == [first.pk, second.pk]


def test_a_queued_review_reads_the_version_its_turn_ended_with(chat):
    session, m = chat
    versions.choose(session, m["q2"].pk)
    # The run was queued when the edited version was shown; the person has moved on since.
    upto = session.api_messages(upto_id=m["a2b"].pk)
    assert [msg["content"] for msg in upto[1:]] == [
        "How do I restart nginx?",
        "Use systemctl restart nginx.",
        "And on Alpine Linux?",
        "rc-service nginx restart on OpenRC.",
    ]
    assert versions.leaf_of(session.pk) == m["a2"].pk
    assert session.api_messages(upto_id=0) == [{"role": "system", "content": session.system_prompt}]


def test_the_evidence_check_finds_quotes_only_in_the_version_shown(chat):
    session, m = chat
    shown = evidence.check(["How do I restart nginx?"], [], "memory", session.pk)
    assert shown.supported
    other = evidence.check(["And on Alpine Linux?"], [], "memory", session.pk)  # another version's words
    assert not other.supported


def test_a_summary_of_another_version_is_dropped_when_the_path_leaves_it(chat):
    session, m = chat
    ChatSession.objects.filter(pk=session.pk).update(
        context_summary="[summary]", context_head_to=m["q1"].pk, context_cut_to=m["a1"].pk
    )
    session.refresh_from_db()
    versions.choose(session, m["a2"].pk)  # still below a1: the summary describes it
    assert session.context_summary == "[summary]"
    versions.choose(session, m["a1b"].pk)  # a1 is not on this version
    session.refresh_from_db()
    assert (session.context_summary, session.context_cut_to) == ("", None)


def test_a_loop_in_bad_data_ends_the_walk(home):
    tree = versions.Tree.of([(1, 2, "user"), (2, 1, "assistant")])
    assert tree.path(2) == [1, 2]
