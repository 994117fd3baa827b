"""System check of the external memory providers (docs/BEHAVIOUR.md, Memory providers).

- hermes.W004: config.yaml names a memory provider that cannot run here: `mem0` without the
  optional mem0ai library (requirements-mem0.txt) or without an embedding model. A warning, not an
  error: the dashboard runs and chats without the provider, and the settings page says why.
"""

from __future__ import annotations

from typing import Any

from django.core import checks

from foundation import config as hermes_config
from knowledge import mem0_store

PROVIDER_UNAVAILABLE = "hermes.W004"


def check_memory_provider(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    try:
        config = hermes_config.load(hermes_config.hermes_home())
    except hermes_config.ConfigError:  # hermes.E001 names the wrong key
        return []
    names = [n.strip() for n in config.memory.provider.split(",")]
    if "mem0" not in names:
        return []
    why = mem0_store.unavailable(config)
    if not why:
        return []
    if not mem0_store.installed():
        hint = (
            f"Install the optional extra into the dashboard's environment: pip install -r {mem0_store.REQUIREMENTS}; "
            "or choose another memory.provider on the settings page."
        )
    else:
        hint = "Set embeddings.model to a model your server embeds with (settings page, Search by meaning)."
    msg = f"memory.provider is mem0, but {why}: chats run without it."
    return [checks.Warning(msg, hint=hint, obj="memory.provider", id=PROVIDER_UNAVAILABLE)]


def register() -> None:
    checks.register(check_memory_provider)
