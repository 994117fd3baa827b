"""`python manage.py check_model` — probe the configured model server once and store what it can do.

Plain chat, system role, stream_options, a tool call, streaming with tools (agent.llm.probe).
The result is stored per base URL + model (the chat adapts from its first request, the
settings page shows it) and printed with what each missing feature means for learning.
Exit status: 0 when the server can chat, 1 when it cannot, 2 when nothing is configured.
"""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand

from agent.llm import LLMError, client_from_config
from agent.llm.probe import probe
from agent.management.commands.chat import _ensure_database
from foundation import config as hermes_config
from foundation.config import ConfigError
from knowledge.capabilities import DbCapabilityStore, describe

MARKS = {True: "yes", False: "no", None: "unknown"}


class Command(BaseCommand):
    help = "Probe the configured model server once (chat, system role, stream_options, tools) and store the result."

    def handle(self, *args: Any, **opts: Any) -> None:
        _ensure_database()
        try:
            config = hermes_config.get()
            client = client_from_config(config, capabilities=DbCapabilityStore())
        except (ConfigError, LLMError) as exc:
            sys.stderr.write(f"error: {exc}\n")
            sys.exit(2)
        try:
            steps = probe(client)
        finally:
            client.close()
        out = sys.stdout
        out.write(f"Model {client.model} at {client.base_url or 'the default OpenAI endpoint'}:\n")
        for step in steps:
            detail = f" ({step.detail})" if step.detail else ""
            out.write(f"  {step.label}: {MARKS[step.ok]}{detail}\n")
        if steps[0].ok is not True:
            sys.stderr.write(f"error: the server cannot answer a plain chat request: {steps[0].detail}\n")
            sys.exit(1)
        for state in describe(client.caps.to_dict()):
            if state.state == "no":
                out.write(f"  Without {state.feature.label.lower()}: {state.feature.without}\n")
