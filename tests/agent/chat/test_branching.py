"""Forks for edit-and-resend and regenerate: the new branch holds exactly the earlier messages."""

from __future__ import annotations

import pytest

from agent.chat import branching
from agent.chat import service as chat_service
from knowledge.models import ChatSession, Message
from knowledge.search import search_sessions

pytestmark = pytest.mark.django_db(transaction=True)


def _chat(*pairs: tuple[str, str]) -> tuple[ChatSession, list[Message]]:
    session = chat_service.create_session()
    made = [Message.objects.create(session=session, role=role, content=content) for role, content in pairs]
    return session, made


def test_fork_keeps_the_messages_before_the_edited_one_and_leaves_the_original_alone(home):
    call = [{"id": "c1", "type": "function", "function": {"name": "memory", "arguments": "{}"}}]
    session, made = _chat(("user", "first"), ("assistant", "reply one"), ("user", "second"), ("assistant", "two"))
    Message.objects.filter(pk=made[1].pk).update(tool_calls=call)
    fork = branching.fork_before(session, made[2].pk)
    assert fork.parent_id == session.pk and fork.system_prompt == session.system_prompt
    assert [(m.role, m.content) for m in fork.messages.order_by("id")] == [
        ("user", "first"),
        ("assistant", "reply one"),
    ]
    assert fork.messages.order_by("id")[1].tool_calls == call
    assert (fork.message_count, fork.user_turn_count, fork.tool_call_count) == (2, 1, 1)
    assert session.messages.count() == 4  # the earlier branch is untouched
    assert branching.branches(session)["children"] == [fork]
    assert branching.branches(fork)["parent"] == session


def test_forked_messages_are_searchable(home):
    session, made = _chat(("user", "quokkas are friendly"), ("assistant", "yes"), ("user", "more"))
    fork = branching.fork_before(session, made[2].pk)
    assert {hit.session_id for hit in search_sessions("quokkas")} == {session.pk, fork.pk}


def test_only_a_user_message_of_this_chat_can_be_forked_from(home):
    session, made = _chat(("user", "q"), ("assistant", "a"))
    other, _ = _chat(("user", "elsewhere"))
    with pytest.raises(branching.ForkError, match="Only your own messages"):
        branching.fork_before(session, made[1].pk)
    with pytest.raises(branching.ForkError):
        branching.fork_before(other, made[0].pk)
    empty, _ = _chat()
    with pytest.raises(branching.ForkError, match="no message"):
        branching.last_user_message(empty)


def test_the_fork_point_is_checked_without_forking(home):
    session, made = _chat(("user", "q"), ("assistant", "a"))
    assert branching.fork_point(session, made[0].pk) == made[0]
    with pytest.raises(branching.ForkError, match="Only your own messages"):
        branching.fork_point(session, made[1].pk)
    assert ChatSession.objects.count() == 1
