"""A short chat title suggested by the model: one plain completion, no tools.

On request (the rename form's "Suggest" button), and on its own after a browser chat's first
completed exchange (`chat.auto_title`, when a model is configured): a background job (agent/jobs.py) asks
the model and stores the answer as the chat's title, unless the person named the chat first,
and every open page shows it (agent/chat/live.py). A failure is logged and the chat keeps its first
message, in plain words, as its title.
"""

from __future__ import annotations

import itertools
import logging
import re

from django_tasks import task

from agent import jobs
from agent.chat import live
from agent.llm import LLMError, client_from_config
from foundation import config as hermes_config
from foundation.config import Config
from foundation.rendering import plain_text
from knowledge import versions
from knowledge.models import ChatSession, Message, without_nul

log = logging.getLogger(__name__)

TITLE_PROMPT = (
    "Write a short title (at most six words) for the conversation below, in the language it is written in. "
    "Answer with the title only: no quotes, no punctuation at the end."
)
EXCHANGE_MESSAGES = 4  # the opening exchange says what a chat is about
MESSAGE_CHARS = 2000
TITLE_TIMEOUT = 20.0
# A title is read in a narrow sidebar, a tab and a file name: longer ones are cut at a word.
TITLE_CHARS = 60
# What models put before or around a title although asked not to ("Title: …", "**…**", "« … »").
_LABEL_RE = re.compile(
    r"^\s*(?:#+\s*)?\**\s*(?:title|summary|chat title|topic|标题|タイトル)\s*\**\s*[:：\-–—]\s*", re.I
)
_WRAPPERS = " \t\"'`*_.。«»“”‘’「」『』"


class NothingToTitle(ValueError):
    pass


def suggest_title(session: ChatSession) -> str:
    """The model's title for the chat's opening exchange, as plain words. Raises LLMError on failure."""
    shown = (m for m in versions.path_messages(session) if m.role in ("user", "assistant") and m.content)
    opening = list(itertools.islice(shown, EXCHANGE_MESSAGES))
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
    title = clean_title(text)
    if not title:
        raise NothingToTitle("The model gave no title; type one instead.")
    return title


def clean_title(text: str) -> str:
    """The model's answer as a title: its first line, without a label ("SUMMARY:"), quotes or
    markup around it, at most TITLE_CHARS characters, cut at a word when it is longer."""
    first = next((ln for ln in (text or "").splitlines() if ln.strip(_WRAPPERS + "#")), "")
    title = _LABEL_RE.sub("", plain_text(first, 4 * TITLE_CHARS)).strip(_WRAPPERS)
    title = _LABEL_RE.sub("", title).strip(_WRAPPERS)  # "**Title:** 'x'" has two layers
    if len(title) <= TITLE_CHARS:
        return title
    cut = title[: TITLE_CHARS - 1]
    if " " in cut[TITLE_CHARS // 2 :]:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:-–—") + "…"


# Answers that did not end normally (the person stopped them, an error cut them off).
_UNFINISHED = ("interrupted", "error")


def after_turn(
    session: ChatSession, config: Config, user_message_id: int, answered: AnsweredBefore | None = None
) -> bool:
    """Called after each completed turn: the first completed exchange of a chat still titled by
    its first message starts the title job. True if it did. `answered`: what the chat's agent
    already found (a later turn of it asks the database nothing)."""
    if not config.chat.auto_title or not config.model_name or session.title_source != "message":
        return False
    if session.source != "web":
        return False  # the terminal shows no title, and `chat -m` would wait for the call before exiting
    if (answered or AnsweredBefore()).has_answer_before(session, user_message_id):
        return False  # not the first exchange: the title (from the model or not) stays
    jobs.start(title_task, session.pk, kind="title")
    return True


class AnsweredBefore:
    """Whether a chat has a finished answer before a question, remembered by the chat's agent: an
    answer before a question is before every later one too (ids only grow, and messages are
    never deleted one by one), so once one is found later questions need no query."""

    def __init__(self) -> None:
        self._from: int | None = None  # the first question found to have an answer before it

    def has_answer_before(self, session: ChatSession, question_id: int) -> bool:
        if self._from is not None and question_id >= self._from:
            return True
        earlier_answer = (
            Message.objects.filter(session=session, role="assistant", id__lt=question_id)
            .exclude(content="")
            .exclude(finish_reason__in=_UNFINISHED)
        )
        if not earlier_answer.exists():
            return False
        self._from = question_id if self._from is None else min(self._from, question_id)
        return True


@task(queue_name="learning")
def title_task(session_id: str) -> None:
    retitle(session_id)


def retitle(session_id: str) -> str | None:
    """Store the model's title as the chat's, and tell the open pages. None when the chat keeps
    its title: the person named it, or the model gave none (logged)."""
    session = ChatSession.objects.filter(pk=session_id, title_source="message").first()
    if session is None:
        return None  # renamed by the person (or deleted) before the job ran
    try:
        title = without_nul(suggest_title(session))
    except LLMError as exc:
        log.warning("chat %s keeps its first message as title; the model gave no title: %s", session_id, exc.message)
        return None
    except NothingToTitle as exc:
        log.warning("chat %s keeps its first message as title: %s", session_id, exc)
        return None
    # Only over the first message's title: a rename made while the model answered wins.
    if not ChatSession.objects.title_by_model(session_id, title):
        log.info("chat %s was renamed meanwhile; the model's title %r is not used", session_id, title)
        return None
    live.title_changed(session_id, title)
    return title
