"""One chat's conversation as the model reads it, derived from its stored rows.

The stored rows are the one source of truth. The model's view is made from them
(`ChatSession.context`): the frozen system prompt, the head a compression kept, its summary, then
the messages after it — each with the id of the row it comes from, so compressing, continuing or
answering again works on ids, never on positions in a list.

Two things of the running agent are not in the rows and are laid over what is derived: the text
the model got for a question typed as `/skill …` (the row keeps what the person typed), and the
instruction that continues a stopped answer (said to the model only, never stored). A turn in
progress appends to `messages` (the tool-calling loop holds the list) and stores each message as
it appends it; `rederive` makes the list again from the rows, in place.
"""

from __future__ import annotations

from typing import Any

from knowledge import versions
from knowledge.models import ChatSession, Message

# Sent after the stopped answer, for the model only: a continue instruction every OpenAI-compatible
# server accepts (an assistant-prefix option exists on some servers only); docs/DECISIONS.md.
CONTINUE_PROMPT = (
    "Your previous answer was cut off. Continue it from exactly where it stopped: do not repeat "
    "anything already written and do not comment on the interruption."
)


class Conversation:
    """The model's view of one chat's chosen version (or of the version a turn goes on from)."""

    def __init__(self, session: ChatSession) -> None:
        self.session = session
        # The last stored message of the version this conversation goes on from (None: none yet).
        self.leaf_id: int | None = versions.chosen_leaf(session)
        self._model_text: dict[int, str] = {}  # question id -> what the model read for it
        self._instruction: dict[str, Any] | None = None  # the continue instruction of the running turn
        self.messages: list[dict[str, Any]] = []
        self.rederive()

    def entries(self) -> list[tuple[int, dict[str, Any]]]:
        """The context after the system prompt as the model reads it, each message with the id of
        the stored row it comes from (a summary: the last row it replaced)."""
        return [
            (pk, {**msg, "content": self._model_text[pk]} if pk in self._model_text else msg)
            for pk, msg in self.session.context(self.leaf_id or 0)
        ]

    def rederive(self) -> None:
        """Make the model's view again from the stored rows, in place (a running loop holds it)."""
        view = [{"role": "system", "content": self.session.system_prompt}, *(m for _, m in self.entries())]
        if self._instruction is not None:
            view.append(self._instruction)
        self.messages[:] = view

    def go_to(self, leaf_id: int) -> None:
        """Another version goes on: the one ending at message `leaf_id` (0: the very start)."""
        self.leaf_id = leaf_id or None
        self.rederive()

    def stored(self, row_id: int) -> None:
        """A message of the running turn was stored: the next one follows it."""
        self.leaf_id = row_id

    def ask(self, question: Message, model_text: str) -> None:
        """The question stored just now goes to the model as `model_text` (a /skill invocation expanded)."""
        self._read_as(question, model_text)
        self.messages.append({"role": "user", "content": model_text})

    def ask_again(self, question: Message, model_text: str) -> None:
        """The question at the end of the view is answered again, read as `model_text` as the first time."""
        self._read_as(question, model_text)
        self.rederive()

    def _read_as(self, question: Message, model_text: str) -> None:
        if model_text != question.content:
            self._model_text[question.pk] = model_text

    def continue_answer(self) -> None:
        """The stopped answer at the end of the view goes on: the model is asked to continue it."""
        self._instruction = {"role": "user", "content": CONTINUE_PROMPT}
        self.messages.append(self._instruction)

    def turn_ended(self) -> None:
        """A continue instruction is the running turn's only: the continued answer is one row now."""
        if self._instruction is not None:
            self._instruction = None
            self.rederive()
