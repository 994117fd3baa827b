"""The dashboard's ASGI application with the shipped memory provider, `session_recall`, registered
again as one that also writes down each call it gets (`provider-calls.jsonl` in the server's home):
how a test sees, from outside a daphne process, which chats the providers heard of.

Registered through the providers' own registry (agent/learning/providers.py, PROVIDERS), as any
provider is; daphne is started on `tests.agent.learning.recording_asgi:application`.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from hermes_site.asgi import application  # sets Django up: the providers' module reads the models

# isort: split
from agent.learning import providers

__all__ = ["CALLS_FILE", "application"]

CALLS_FILE = "provider-calls.jsonl"
_lock = threading.Lock()


class RecordingRecall(providers.SessionRecallProvider):
    def _note(self, call: str) -> None:
        line = json.dumps({"session": self.session_id, "call": call})
        with _lock, (Path(os.environ["HERMES_HOME"]) / CALLS_FILE).open("a", encoding="utf-8") as out:
            out.write(line + "\n")

    def prefetch(self, user_message: str) -> str:
        self._note("prefetch")
        return super().prefetch(user_message)

    def queue_prefetch(self, user_message: str) -> None:
        self._note("queue_prefetch")
        super().queue_prefetch(user_message)

    def sync_turn(self, user_message: str, final_response: str) -> None:
        self._note("sync_turn")
        super().sync_turn(user_message, final_response)

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        self._note("on_session_end")
        super().on_session_end(messages)


providers.PROVIDERS["session_recall"] = RecordingRecall
