"""The model's title suggestion: one plain completion over the opening exchange, plain words back."""

from __future__ import annotations

import pytest

from agent import chat_service, titles
from agent.llm import LLMError
from knowledge.models import Message
from tests.fakellm import Reply

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_opening_exchange_goes_to_the_model_without_tools_and_markup_is_dropped(llm):
    session = chat_service.create_session()
    for role, content in [
        ("user", "how do I ship to staging?"),
        ("assistant", "Run the deploy script."),
        ("user", "later"),
    ]:
        Message.objects.create(session=session, role=role, content=content)
    llm.push(Reply(text="'**Shipping** to `staging`.'"))
    assert titles.suggest_title(session) == "Shipping to staging"
    sent = llm.requests[-1]
    assert "tools" not in sent and not sent.get("stream")
    assert sent["messages"][1]["content"].startswith("user: how do I ship to staging?\n\nassistant: Run the deploy")


def test_no_messages_or_an_empty_answer_is_said_plainly(llm):
    session = chat_service.create_session()
    with pytest.raises(titles.NothingToTitle, match="send a message first"):
        titles.suggest_title(session)
    Message.objects.create(session=session, role="user", content="hello")
    llm.push(Reply(text="  "))
    with pytest.raises(titles.NothingToTitle, match="type one instead"):
        titles.suggest_title(session)
    llm.default = lambda body: Reply(status=400, error_message="bad model")
    with pytest.raises(LLMError):
        titles.suggest_title(session)
