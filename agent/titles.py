"""A short chat title suggested by the model (issue 13, defect 4): one plain completion, no tools."""

from __future__ import annotations

from agent.llm import client_from_config
from hermes_site import config as hermes_config
from hermes_site.rendering import plain_text
from knowledge.models import ChatSession, Message

TITLE_PROMPT = (
    "Write a short title (at most six words) for the conversation below, in the language it is written in. "
    "Answer with the title only: no quotes, no punctuation at the end."
)
EXCHANGE_MESSAGES = 4  # the opening exchange says what a chat is about
MESSAGE_CHARS = 2000
TITLE_TIMEOUT = 20.0
TITLE_CHARS = 80


class NothingToTitle(ValueError):
    pass


def suggest_title(session: ChatSession) -> str:
    """The model's title for the chat's opening exchange, as plain words. Raises LLMError on failure."""
    opening = (
        Message.objects.filter(session=session, role__in=("user", "assistant"))
        .exclude(content="")
        .order_by("id")[:EXCHANGE_MESSAGES]
    )
    conversation = "\n\n".join(f"{m.role}: {m.content[:MESSAGE_CHARS]}" for m in opening)
    if not conversation:
        raise NothingToTitle("Nothing to title yet: send a message first.")
    config = hermes_config.get()
    client = client_from_config(config, session.model or None, timeout=TITLE_TIMEOUT)
    try:
        text = client.complete(
            [{"role": "system", "content": TITLE_PROMPT}, {"role": "user", "content": conversation}], max_tokens=30
        )
    finally:
        client.close()
    title = plain_text(text, TITLE_CHARS).strip(" \"'.")
    if not title:
        raise NothingToTitle("The model gave no title; type one instead.")
    return title
