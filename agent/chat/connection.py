"""The pages' way to the model server: the first-run connection check and the list of models.

Pages never build a model client themselves; they ask here and get plain values back, with the
server's failure already put in words.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agent import clients, recall
from agent.llm import ChatClient, LLMError
from agent.llm.probe import ProbeStep, probe
from foundation.config import Config
from knowledge.capabilities import DbCapabilityStore

CHECK_TIMEOUT = 10.0


class ModelsUnavailable(Exception):
    """The server did not list its models; the message says why."""


@dataclass(frozen=True)
class ConnectionCheck:
    error: str = ""  # non-empty: the server could not be reached (nothing else was tried)
    models: list[str] = field(default_factory=list)  # every name the server lists
    steps: list[ProbeStep] = field(default_factory=list)  # what the configured model can do

    @property
    def ok(self) -> bool:
        return not self.error


def check(config: Config, api_key: str, timeout: float = CHECK_TIMEOUT) -> ConnectionCheck:
    """Reach the server with `config`'s address and `api_key` (values a form has not saved yet,
    or the ones in use), which works before a model name is chosen; then, with a model named,
    find once what it can do. The findings are stored, so the chat adapts from its first turn."""
    listing = _client(config, api_key, config.model_name or "connection-check", timeout)
    try:
        models = list(listing.list_models())
    except LLMError as exc:
        return ConnectionCheck(error=exc.message)
    finally:
        listing.close()
    if not config.model_name:
        return ConnectionCheck(models=models)
    client = _client(config, api_key, config.model_name, timeout, DbCapabilityStore())
    try:
        steps = probe(client)
    finally:
        client.close()
    if (embeddings := recall.check(config, api_key, timeout)) is not None:
        steps.append(embeddings)  # the embedding model, when one is set (search by meaning)
    return ConnectionCheck(models=models, steps=steps)


def _client(
    config: Config, api_key: str, model: str, timeout: float, capabilities: DbCapabilityStore | None = None
) -> ChatClient:
    # A client of its own: the shared ones (agent/clients.py) serve the saved settings only.
    return ChatClient(base_url=config.base_url, api_key=api_key, model=model, timeout=timeout,
                      max_retries=config.model.max_retries, capabilities=capabilities)  # fmt: skip


def server_models(config: Config, timeout: float = CHECK_TIMEOUT) -> list[str]:
    """The names the server lists (`/v1/models`), sorted. Raises ModelsUnavailable."""
    try:
        return sorted(clients.list_models(config, "model-list", timeout))
    except LLMError as exc:
        raise ModelsUnavailable(exc.message) from exc
