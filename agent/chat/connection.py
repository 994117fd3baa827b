"""The pages' way to the model server: the first-run connection check and the list of models.

Pages never build a model client themselves; they ask here and get plain values back, with the
server's failure already put in words.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agent import clients
from agent.llm import LLMError, client_from_config
from agent.llm.probe import ProbeStep, probe
from hermes_site.config import Config
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


def check(config: Config, timeout: float = CHECK_TIMEOUT) -> ConnectionCheck:
    """Reach the server (it works before a model name is chosen), then, with a model configured,
    find once what it can do; the findings are stored, so the chat adapts from its first turn."""
    try:
        models = clients.list_models(config, "connection-check", timeout)
    except LLMError as exc:
        return ConnectionCheck(error=exc.message)
    return ConnectionCheck(models=models, steps=_probe(config, timeout) if config.model_name else [])


def _probe(config: Config, timeout: float) -> list[ProbeStep]:
    client = client_from_config(config, timeout=timeout, capabilities=DbCapabilityStore())
    try:
        return probe(client)
    finally:
        client.close()


def server_models(config: Config, timeout: float = CHECK_TIMEOUT) -> list[str]:
    """The names the server lists (`/v1/models`), sorted. Raises ModelsUnavailable."""
    try:
        return sorted(clients.list_models(config, "model-list", timeout))
    except LLMError as exc:
        raise ModelsUnavailable(exc.message) from exc
