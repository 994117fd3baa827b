"""The turns that make or extend a version in place (knowledge/versions.py holds the shape):

- edit: a new question beside an earlier one of the person's (same parent), answered anew;
- regenerate: a new answer beside an earlier answer, to the same question;
- continue: a stopped answer goes on where it stopped, in the same message.

The browser asks for them on the chat socket: a "message" frame carrying "edit", "regenerate"
or "continue" with a message id (agent/chat/consumers.py). The model gets only the version the
turn continues; the chat keeps every version, one ‹ › away.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import F, Value
from django.db.models.functions import Concat
from django.utils import timezone

from agent.chat.records import StreamedAnswer
from agent.conversation import Conversation
from knowledge.models import ChatSession, Message
from knowledge.versions import Tree, VersionError

KINDS = ("edit", "regenerate", "continue")


@dataclass(frozen=True)
class TurnRequest:
    """What a turn does: "message" (a new question), or one of KINDS on message `message_id`."""

    kind: str = "message"
    message_id: int | None = None
    images: tuple[int, ...] = ()  # uploaded images to attach to a new message (agent/chat/attachments.py)

    @property
    def needs_text(self) -> bool:
        return self.kind in ("message", "edit")


def request_of(frame: dict[str, Any]) -> TurnRequest:
    """The turn a "message" frame asks for; VersionError naming a bad field."""
    asked = [kind for kind in KINDS if kind in frame]
    if not asked:
        return TurnRequest()
    if len(asked) > 1:
        raise VersionError(f"A message frame asks for one of {', '.join(KINDS)}, not {' and '.join(asked)}.")
    value = frame[asked[0]]
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise VersionError(f'"{asked[0]}" must be the id of a message of this chat (a number).')
    return TurnRequest(asked[0], value)


@dataclass(frozen=True)
class Target:
    """Where a turn starts: after message `after` (0: at the very start), answering `question`
    (an existing user message; None: the turn stores a new one), extending `answer` if given."""

    after: int | None = None
    question: Message | None = None
    answer: Message | None = None


def _question_of(tree: Tree, pk: int) -> int:
    node: int | None = pk
    while node is not None and tree.roles[node] != "user":
        node = tree.parents[node]
    if node is None:
        raise VersionError("That answer answers no question of yours, so it cannot be written again.")
    return node


def target(session: ChatSession, request: TurnRequest) -> Target:
    """Check the request against the chat; VersionError says in plain words what is wrong."""
    if request.kind == "message" or request.message_id is None:
        return Target()
    tree = Tree.load(session.pk)
    pk = request.message_id
    if pk not in tree.parents:
        raise VersionError("That message is not part of this chat (reload the page to see it as it is now).")
    role = tree.roles[pk]
    if request.kind == "edit":
        if role != "user":
            raise VersionError("Only your own messages can be edited and sent again.")
        return Target(after=tree.parents[pk] or 0)
    if request.kind == "regenerate":
        question = _question_of(tree, pk)
        return Target(after=question, question=Message.objects.get(pk=question))
    answer = Message.objects.get(pk=pk)
    if role != "assistant" or answer.finish_reason not in ("interrupted", "error") or not answer.content:
        raise VersionError("Only an answer that was stopped with some text written can be continued.")
    if tree.leaf(session.leaf_id) != pk:
        raise VersionError("Only the last answer of the version shown can be continued.")
    return Target(after=pk, question=Message.objects.get(pk=_question_of(tree, pk)), answer=answer)


def put_question(conversation: Conversation, target: Target, question: Message, model_text: str) -> None:
    """The end of the model's context for the turn: the new question, the question answered
    again (already last), or the stopped answer followed by the continue instruction."""
    if target.question is None:
        conversation.ask(question, model_text)
    elif target.answer is None:
        conversation.ask_again(question, model_text)  # a /skill invocation expanded, as on the first answer
    else:
        conversation.continue_answer()


def answer_of(target: Target, session: ChatSession, streamed: StreamedAnswer) -> StreamedAnswer | ContinuedAnswer:
    """Where the turn's answer is written: a new message (`streamed`), or the stopped one it continues."""
    return streamed if target.answer is None else ContinuedAnswer(session, target.answer, streamed)


class ContinuedAnswer:
    """A stopped answer going on in its own row, with the methods of a new one (agent/chat/records.py
    `StreamedAnswer`). The first model call's message is appended to the stopped answer; later
    calls of the turn (after tool calls) are new messages, streamed as any answer."""

    def __init__(self, session: ChatSession, answer: Message, after: StreamedAnswer) -> None:
        self.session, self.answer, self.after = session, answer, after
        self.extended = False
        self.text: list[str] = []  # the continuation streamed so far, until its call ends

    def add(self, chunk: str) -> bool:
        if self.extended:
            return self.after.add(chunk)
        self.text.append(chunk)  # written when the call ends: the stopped answer stays whole until then
        return False

    def finish(self, msg: dict[str, Any], **kw: Any) -> Message | None:
        """Append `msg` to the stopped answer (then, for later calls, as `StreamedAnswer.finish`).
        An error that added nothing leaves the stopped answer as it was."""
        if self.extended:
            return self.after.finish(msg, **kw)
        self.extended, self.text = True, []
        if kw.get("finish_reason") == "error" and not msg.get("content"):
            return None
        _extend(self.answer, msg, kw.get("finish_reason", ""), kw.get("tokens", 0), kw.get("session_updates"))
        self.session.revision += 1  # counted by the UPDATE too: this agent's chat stays current
        return self.answer

    def shown(self, final_text: str) -> str:
        """The answer the page shows when the turn ends: the whole of the continued answer."""
        return self.answer.content if self.extended else final_text


def _extend(
    answer: Message, msg: dict[str, Any], finish_reason: str, tokens: int = 0, updates: dict[str, Any] | None = None
) -> None:
    """Append a continuation (`msg`, the model's next message) to the stopped answer, in place;
    `updates`: more columns of the session to set with it (the call's token counts)."""
    text = str(msg.get("content") or "")
    with transaction.atomic():
        changes: dict[str, Any] = {"finish_reason": finish_reason, "token_count": F("token_count") + tokens}
        if text:
            changes["content"] = Concat(F("content"), Value(text))
        if msg.get("tool_calls"):
            changes["tool_calls"] = msg["tool_calls"]
        Message.objects.filter(pk=answer.pk).update(**changes)
        ChatSession.record_continued(answer.session_id, updates or {}, timezone.now())
    answer.content += text
    answer.finish_reason = finish_reason
