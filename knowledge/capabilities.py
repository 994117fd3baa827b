"""The stored capabilities of model servers: what each server + model can do.

The model client (agent.llm) learns a capability when a server refuses a feature, and the
connection check probes all of them; both save here through `DbCapabilityStore`, which has
the shape of agent.llm's `CapabilityStore` protocol (this app does not import agent). The
settings page and the chat page read `describe()` / `limits()` to tell the person what their
server cannot do and what that means for learning.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from django.db import DatabaseError, models

log = logging.getLogger(__name__)


class ModelCapabilities(models.Model):
    """What one model server + model can do, as learned from its refusals or a probe.

    Written by the model client when a server refuses a feature, and by the connection check;
    read by every new client so a refusal is learned once, not every turn or every process.
    """

    base_url = models.CharField(max_length=500)
    model = models.CharField(max_length=200)
    data = models.JSONField(default=dict)  # agent.llm.Capabilities.to_dict()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["base_url", "model"], name="unique_capabilities_per_server")]
        ordering = ["-updated_at"]

    def __str__(self) -> str:
        return f"{self.model} at {self.base_url or 'OpenAI'}"


@dataclass(frozen=True)
class Feature:
    key: str
    label: str
    without: str  # what lacking it means, in the person's words


FEATURES = [
    Feature("tools", "Tool calls", "The agent cannot save memories or skills itself and reviews are off; "
            "save by hand in the browser, or choose a model that can call tools."),
    Feature("stream_tools", "Streaming while tools are offered", "Replies arrive whole instead of word by word."),
    Feature("system_role", "System role", "The system prompt (memory, skills) is sent inside the first user message."),
    Feature("stream_options", "Usage report while streaming (stream_options)",
            "Token counts are estimated from the text; compression still works."),
    Feature("reasoning_echo", "Thinking sent back (reasoning_content)",
            "The model's thinking is kept but not sent back."),
    Feature("provider_echo", "Signatures sent back (extra_content, reasoning_details)",
            "Signatures and signed thinking another server put on earlier replies are kept, not sent here."),
    Feature("images", "Images in messages", "Attached images are not sent; the model sees [image: name] instead."),
    Feature("response_format", "Structured output (response_format with a JSON schema)",
            "The verifier's answers are read as plain JSON and held when unclear."),
    Feature("embeddings", "Embeddings (/v1/embeddings)",
            "Similar entries and past chats are found by their words only."),
]  # fmt: skip

TOOLS_NOTICE = "This model cannot call tools: the agent cannot save memories itself; reviews are off."


class DbCapabilityStore:
    """agent.llm's CapabilityStore, kept in the database so every process shares what was learned."""

    def load(self, base_url: str, model: str) -> dict[str, Any] | None:
        row = ModelCapabilities.objects.filter(base_url=base_url, model=model).first()
        return dict(row.data) if row is not None else None

    def save(self, base_url: str, model: str, data: dict[str, Any]) -> None:
        try:
            ModelCapabilities.objects.update_or_create(base_url=base_url, model=model, defaults={"data": data})
        except DatabaseError:
            # Not fatal: the client keeps the finding for this process and re-learns it next time.
            log.warning("could not store the capabilities of %s (%s)", model, base_url, exc_info=True)


@dataclass(frozen=True)
class FeatureState:
    feature: Feature
    state: str  # "yes" | "no" | "unknown"


def describe(data: dict[str, Any] | None) -> list[FeatureState]:
    out = []
    for f in FEATURES:
        value = (data or {}).get(f.key)
        out.append(FeatureState(f, "unknown" if value is None else "yes" if value else "no"))
    return out


def known(base_url: str, model: str) -> dict[str, Any] | None:
    return DbCapabilityStore().load(base_url, model)


def limits(base_url: str, model: str) -> str:
    """The one-line notice for the chat page, or "" when learning is not limited by the server."""
    data = known(base_url, model) or {}
    return TOOLS_NOTICE if data.get("tools") is False else ""
