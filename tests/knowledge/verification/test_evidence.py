"""Evidence quotes checked against the messages the writer saw, and found among stored messages."""

from __future__ import annotations

import pytest

from knowledge.models import ChatSession, Message
from knowledge.verification import evidence

SEEN = [
    {"role": "system", "content": "You are Hermes. The user loves Rust."},
    {"role": "user", "content": "Please   answer in \u201cBritish\u201d English, it's what I'm used to."},
    {"role": "assistant", "content": "I suggest you use Rust for everything."},
    {"role": "tool", "content": "ss -tlnp: LISTEN 0.0.0.0:5432 postgres"},
]


@pytest.mark.parametrize(
    "quote",
    [
        "answer in British English",
        'PLEASE ANSWER IN "BRITISH" ENGLISH',
        "it\u2019s what I\u2019m used to",
        ["answer in British", "used to"],
    ],
)
def test_quotes_match_ignoring_whitespace_case_and_quote_marks(quote):
    assert evidence.check(quote, SEEN, "memory", None).supported


@pytest.mark.parametrize(
    ("quote", "reason"),
    [
        (None, "No evidence"),
        ("I suggest you use Rust", "does not appear in the user's messages"),  # the assistant's words
        ("The user loves Rust", "does not appear"),  # the system prompt is not the user
        ("yes", "too short"),
        (["answer in British English", "I am a senior engineer"], "senior engineer"),  # every quote must be found
        ({"quote": "x"}, "must be a string or a list"),
    ],
)
def test_unsupported_quotes_say_why(quote, reason):
    verdict = evidence.check(quote, SEEN, "memory", None)
    assert not verdict.supported and reason in verdict.reason


def test_skills_may_quote_tool_output_but_memory_may_not():
    assert evidence.check("LISTEN 0.0.0.0:5432 postgres", SEEN, "skill", None).supported
    assert not evidence.check("LISTEN 0.0.0.0:5432 postgres", SEEN, "memory", None).supported


@pytest.mark.django_db
def test_supported_quote_is_mapped_to_the_latest_stored_message_that_holds_it():
    session = ChatSession.objects.create()
    Message.objects.create(session=session, role="user", content="I use tabs")
    said = Message.objects.create(session=session, role="user", content="Actually I use  TABS everywhere")
    Message.objects.create(session=session, role="assistant", content="I use tabs too")
    verdict = evidence.check("i use tabs everywhere", [{"role": "user", "content": said.content}], "memory", session.pk)
    assert verdict.quotes == (evidence.Quote("i use tabs everywhere", said.pk),)
