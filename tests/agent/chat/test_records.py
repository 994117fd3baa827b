"""Stored turn messages (agent/chat/records.py): the row, the session's counters, the first title."""

from __future__ import annotations

import pytest

from agent.chat.records import StreamedAnswer, open_session, store_message, usage_updates
from agent.llm.types import Usage
from agent.loop import ModelCalled
from foundation import config as hermes_config
from knowledge.models import ChatSession, Message
from knowledge.search import search_messages

pytestmark = pytest.mark.django_db


def test_a_message_and_its_session_counters_are_stored_together() -> None:
    session = ChatSession.objects.create(source="web")
    call = [{"id": "c1", "type": "function", "function": {"name": "memory", "arguments": "{}"}}]
    m = store_message(session, {"role": "assistant", "content": "", "tool_calls": call}, finish_reason="tool_calls")
    stored = ChatSession.objects.get(pk=session.pk)
    assert (stored.message_count, stored.tool_call_count) == (1, 1)
    assert Message.objects.get(pk=m.pk).tool_calls == call


def test_the_first_user_message_titles_an_untitled_chat_in_plain_words() -> None:
    session = ChatSession.objects.create(source="web")
    store_message(session, {"role": "user", "content": "how big are **debian** images?"}, first_user=True)
    assert ChatSession.objects.filter(pk=session.pk).values_list("title", "title_source").get() == (
        "how big are debian images?",
        "message",
    )
    named = ChatSession.objects.create(source="web", title="Mine", title_source="person")
    store_message(named, {"role": "user", "content": "another"}, first_user=True)
    assert ChatSession.objects.get(pk=named.pk).title == "Mine"


def test_a_model_call_adds_its_tokens_to_the_session() -> None:
    session = ChatSession.objects.create(source="web")
    call = ModelCalled(iteration=1, usage=Usage(120, 7, reported=True), message={}, finish_reason="stop")
    ChatSession.objects.filter(pk=session.pk).update(**usage_updates(session, call))
    stored = ChatSession.objects.get(pk=session.pk)
    assert (stored.prompt_tokens, stored.completion_tokens, stored.last_prompt_tokens) == (120, 7, 120)


class Ticks:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_streaming_answer_is_checkpointed_into_one_row_that_becomes_the_finished_message() -> None:
    session = ChatSession.objects.create(source="web")
    clock = Ticks()
    answer = StreamedAnswer(session, clock=clock)
    assert not answer.add("Exit code ")  # the first chunk starts the clock
    clock.now = 0.5
    assert not answer.add("137 means ")
    assert not Message.objects.exists()  # an answer shorter than a second is written once, at its end
    clock.now = 1.1
    assert answer.add("the kernel killed it")  # the row is made: a new message of the session
    (draft,) = Message.objects.all()
    assert (draft.content, draft.finish_reason) == ("Exit code 137 means the kernel killed it", "interrupted")
    clock.now = 2.5
    assert not answer.add(" (OOM).")  # the same row, rewritten
    assert Message.objects.get().content.endswith("(OOM).")
    final = {"role": "assistant", "content": "Exit code 137 means the kernel killed it (OOM)."}
    done = answer.finish(final, finish_reason="stop", tokens=12)
    assert done is not None and done.pk == draft.pk
    (stored,) = Message.objects.all()
    assert (stored.content, stored.finish_reason, stored.token_count) == (final["content"], "stop", 12)
    assert ChatSession.objects.get(pk=session.pk).message_count == 1
    # The search index follows the row: the final words found once, none of the drafts twice.
    assert [r.message_id for r in search_messages("OOM").results] == [stored.pk]
    assert [r.message_id for r in search_messages("kernel killed").results] == [stored.pk]
    # Ready for the next model call of the turn: nothing checkpointed, nothing to finish.
    assert answer.finish(final) is None


def test_an_answer_ended_before_its_first_checkpoint_leaves_nothing_to_finish() -> None:
    session = ChatSession.objects.create(source="web")
    answer = StreamedAnswer(session, clock=Ticks())
    answer.add("short")
    assert answer.finish({"role": "assistant", "content": "short"}) is None
    assert not Message.objects.exists()


@pytest.mark.django_db
def test_a_session_is_found_by_id_or_name_and_made_once_with_its_prompt() -> None:
    config = hermes_config.get()
    made = open_session(config, session_id=None, name="notes", source="cli")
    assert (made.title, made.title_source, made.source) == ("notes", "person", "cli") and made.system_prompt
    assert open_session(config, session_id=None, name="notes", source="cli").pk == made.pk
    assert open_session(config, session_id=made.pk, name=None, source="web").pk == made.pk
    with pytest.raises(ChatSession.DoesNotExist):
        open_session(config, session_id="missing", name=None, source="web")
