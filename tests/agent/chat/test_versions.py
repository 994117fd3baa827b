"""Turns that make a version in place: edit, regenerate, continue. One chat keeps every version;
the model gets only the version the turn continues; the page and the export show the chosen one."""

from __future__ import annotations

import pytest

from agent.chat import export, presenter
from agent.chat.runner import AgentSession, TurnShape, TurnStarted
from agent.chat.versions import TurnRequest, request_of
from agent.conversation import CONTINUE_PROMPT
from agent.learning.review import spawn_review
from agent.loop import TurnDone
from knowledge import versions
from knowledge.models import ChatSession, Message, ReviewRun
from tests.fakellm import Reply

pytestmark = pytest.mark.django_db(transaction=True)


def _sent(llm) -> list[tuple[str, str]]:
    """What the model got in its last request, after the system prompt."""
    return [(m["role"], m["content"]) for m in llm.chat_requests()[-1]["messages"][1:]]


def _two_turns(llm) -> AgentSession:
    llm.push(Reply(text="Paris."), Reply(text="About 2.1 million."))
    agent = AgentSession.open(source="web")
    list(agent.run_turn("Capital of France?"))
    list(agent.run_turn("Its population?"))
    return agent


def _ids(agent: AgentSession, role: str) -> list[int]:
    return list(Message.objects.filter(session=agent.session, role=role).order_by("id").values_list("id", flat=True))


def test_an_edit_is_a_new_version_of_the_question_in_the_same_chat(home, llm):
    agent = _two_turns(llm)
    first_question = _ids(agent, "user")[0]
    llm.push(Reply(text="Berlin."))
    events = list(agent.run_turn("Capital of Germany?", request=TurnRequest("edit", first_question)))
    assert isinstance(events[0], TurnStarted) and events[0].kind == "edit"
    assert _sent(llm) == [("user", "Capital of Germany?")]  # nothing of the earlier version
    assert ChatSession.objects.count() == 1
    edited = Message.objects.get(content="Capital of Germany?")
    assert edited.parent_id is None  # beside the first question
    items = presenter.conversation(ChatSession.objects.get(pk=agent.session.pk))
    assert [(i.kind, i.content) for i in items] == [("user", "Capital of Germany?"), ("assistant", "Berlin.")]
    assert items[0].versions == versions.Position(2, 2, first_question, None)
    # The next message continues the version shown.
    llm.push(Reply(text="About 3.7 million."))
    list(agent.run_turn("Its population?"))
    assert _sent(llm) == [("user", "Capital of Germany?"), ("assistant", "Berlin."), ("user", "Its population?")]


def test_a_regenerated_answer_is_a_version_beside_the_first(home, llm):
    agent = _two_turns(llm)
    second_answer = _ids(agent, "assistant")[1]
    llm.push(Reply(text="2,102,650 in 2023."))
    list(agent.run_turn("", request=TurnRequest("regenerate", second_answer)))
    assert _sent(llm) == [("user", "Capital of France?"), ("assistant", "Paris."), ("user", "Its population?")]
    assert len(_ids(agent, "user")) == 2  # the question is not stored again
    session = ChatSession.objects.get(pk=agent.session.pk)
    answers = [i for i in presenter.conversation(session) if i.kind == "assistant"]
    assert [a.content for a in answers] == ["Paris.", "2,102,650 in 2023."]
    assert answers[1].versions == versions.Position(2, 2, second_answer, None)
    assert "About 2.1 million." not in export.as_markdown(session)  # the export is the version shown
    # The earlier answer, chosen again, is what the model gets next.
    versions.choose(session, second_answer)
    fresh = AgentSession.open(session_id=session.pk)
    llm.push(Reply(text="Yes."))
    list(fresh.run_turn("Sure?"))
    assert _sent(llm)[-2:] == [("assistant", "About 2.1 million."), ("user", "Sure?")]


def test_continue_extends_the_stopped_answer_in_place(home, llm):
    agent = AgentSession.open(source="web")
    llm.push(Reply(text="Three steps: first"))
    list(agent.run_turn("How to deploy?"))
    answer = Message.objects.get(session=agent.session, role="assistant")
    Message.objects.filter(pk=answer.pk).update(finish_reason="interrupted")  # as Stop leaves it
    agent = AgentSession.open(session_id=agent.session.pk)
    llm.push(Reply(text=", build; then test; then ship."))
    events = list(agent.run_turn("", request=TurnRequest("continue", answer.pk)))
    assert _sent(llm) == [
        ("user", "How to deploy?"),
        ("assistant", "Three steps: first"),
        ("user", CONTINUE_PROMPT),
    ]
    answer.refresh_from_db()
    assert answer.content == "Three steps: first, build; then test; then ship." and answer.finish_reason == "stop"
    assert Message.objects.filter(session=agent.session).count() == 2
    assert isinstance(events[0], TurnStarted) and events[0].answer_id == answer.pk
    done = next(e for e in events if isinstance(e, TurnDone))
    assert done.final_text == answer.content  # the page renders the whole answer
    assert [m["content"] for m in agent.messages[1:]] == ["How to deploy?", answer.content]  # no instruction
    assert agent.is_current(TurnShape.read(agent.session.pk))


def test_only_a_stopped_last_answer_can_be_continued_and_only_questions_edited(home, llm):
    agent = _two_turns(llm)
    answer = _ids(agent, "assistant")[1]
    with pytest.raises(versions.VersionError, match="stopped"):
        list(agent.run_turn("", request=TurnRequest("continue", answer)))
    with pytest.raises(versions.VersionError, match="Only your own messages"):
        list(agent.run_turn("x", request=TurnRequest("edit", answer)))
    with pytest.raises(versions.VersionError, match="not part of this chat"):
        list(agent.run_turn("", request=TurnRequest("regenerate", 10**9)))
    assert Message.objects.filter(session=agent.session).count() == 4  # nothing stored


@pytest.mark.parametrize(
    ("frame", "error"),
    [
        ({"edit": "3"}, "must be the id"),
        ({"continue": True}, "must be the id"),
        ({"edit": 1, "regenerate": 2}, "not edit and regenerate"),
    ],
)
def test_a_bad_version_field_is_refused_in_plain_words(frame, error):
    with pytest.raises(versions.VersionError, match=error):
        request_of({"type": "message", **frame})
    assert request_of({"type": "message", "text": "hi"}) == TurnRequest()
    assert request_of({"continue": 7}) == TurnRequest("continue", 7)


def test_the_review_reads_only_the_version_shown(home, llm):
    agent = _two_turns(llm)
    second_answer = _ids(agent, "assistant")[1]
    llm.push(Reply(text="2,102,650 in 2023."))
    list(agent.run_turn("", request=TurnRequest("regenerate", second_answer)))
    future = spawn_review(
        session_id=agent.session.pk,
        snapshot=agent.messages,
        review_memory=True,
        review_skills=False,
        config=agent.config,
        registry=agent.registry,
        client_factory=agent.client_factory,
    )
    future.result(timeout=30)
    run = ReviewRun.objects.get(session=agent.session)
    newest = Message.objects.filter(session=agent.session).order_by("-id").first()
    assert run.upto_message_id == newest.pk
    review_request = llm.chat_requests()[-1]
    said = " ".join(str(m.get("content")) for m in review_request["messages"])
    assert "2,102,650 in 2023." in said and "About 2.1 million." not in said
    # A queued review rebuilds the same conversation from the run.
    rebuilt = run.session.api_messages(upto_id=run.upto_message_id)
    assert [m["content"] for m in rebuilt[1:]] == [
        "Capital of France?",
        "Paris.",
        "Its population?",
        "2,102,650 in 2023.",
    ]
