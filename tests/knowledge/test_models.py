"""The records: a chat's title as the sidebar shows it, messages in the API's shape, one review
per session at a time, and deleting a chat keeping what was learned from it."""

from __future__ import annotations

import pytest

from knowledge.history.workers import this_worker
from knowledge.models import ChatSession, KnowledgeChange, Message, ReviewRun

pytestmark = pytest.mark.django_db

CALL = [{"id": "c1", "type": "function", "function": {"name": "memory", "arguments": "{}"}}]


def test_display_title_prefers_the_title_then_the_name():
    assert ChatSession(title="Docker woes", name="work").display_title == "Docker woes"
    assert ChatSession(name="work").display_title == "work"
    assert ChatSession().display_title == "New chat"


def test_messages_take_the_chat_completions_shape():
    s = ChatSession.objects.create()
    user = Message.objects.create(session=s, role="user", content="hi", tool_call_id="ignored")
    calling = Message.objects.create(session=s, role="assistant", content="", tool_calls=CALL)
    talking = Message.objects.create(session=s, role="assistant", content="Saving.", tool_calls=CALL)
    result = Message.objects.create(session=s, role="tool", content='{"success": true}', tool_call_id="c1")
    assert user.to_api() == {"role": "user", "content": "hi"}
    assert calling.to_api() == {"role": "assistant", "content": None, "tool_calls": CALL}
    assert talking.to_api() == {"role": "assistant", "content": "Saving.", "tool_calls": CALL}
    assert result.to_api() == {"role": "tool", "content": '{"success": true}', "tool_call_id": "c1"}


def test_one_review_per_session_runs_at_a_time():
    s = ChatSession.objects.create()
    first = ReviewRun.objects.create(session=s, prompt_kind="memory")
    second = ReviewRun.objects.create(session=s, prompt_kind="skill")
    other = ReviewRun.objects.create(session=ChatSession.objects.create(), prompt_kind="memory")
    assert first.start(this_worker()) and first.status == "running" and first.started_at is not None
    assert not first.start(this_worker())  # already running: not started twice
    assert not second.start(this_worker())
    assert ReviewRun.objects.get(pk=second.pk).status == "queued"
    assert other.start(this_worker())  # another session's review is not held
    first.finish(summary="", changes=[], error="", duration_ms=3)
    assert first.status == "done" and second.start(this_worker())


def test_finish_and_fail_record_the_outcome():
    s = ChatSession.objects.create()
    run = ReviewRun.objects.create(session=s, prompt_kind="memory")
    run.finish(summary="", changes=[], error="model down", duration_ms=9)
    assert ReviewRun.objects.get(pk=run.pk).status == "failed"
    partial = ReviewRun.objects.create(session=s, prompt_kind="memory")
    partial.finish(
        summary="Memory updated", changes=[{"message": "Memory updated"}], error="later call failed", duration_ms=9
    )
    assert ReviewRun.objects.get(pk=partial.pk).status == "done"  # what it saved counts
    partial.fail("too late")  # a finished run is not failed afterwards
    assert ReviewRun.objects.get(pk=partial.pk).status == "done"
    stuck = ReviewRun.objects.create(session=s, prompt_kind="memory", status="running")
    stuck.fail("server restarted")
    stuck.refresh_from_db()
    assert (stuck.status, stuck.error) == ("failed", "server restarted") and stuck.finished_at is not None


def test_deleting_a_chat_removes_its_messages_and_keeps_what_was_learned():
    s = ChatSession.objects.create()
    Message.objects.create(session=s, role="user", content="hi")
    run = ReviewRun.objects.create(session=s, prompt_kind="memory")
    change = KnowledgeChange.objects.create(
        kind="memory", target="user", action="add", actor="review", session=s, review=run
    )
    s.delete()
    assert not Message.objects.exists()
    assert ReviewRun.objects.get(pk=run.pk).session_id is None
    assert KnowledgeChange.objects.get(pk=change.pk).review_id == run.pk


def test_an_answer_stopped_before_its_first_token_is_never_sent_to_the_model():
    session = ChatSession.objects.create(system_prompt="sys")
    Message.objects.create(session=session, role="user", content="think hard")
    Message.objects.create(session=session, role="assistant", content="", finish_reason="interrupted")
    Message.objects.create(session=session, role="user", content="now something short")
    assert [m["content"] for m in session.api_messages()] == ["sys", "think hard", "now something short"]
