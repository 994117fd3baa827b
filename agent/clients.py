"""Model clients shared per server: one `openai` client (and its connection pool) per base URL,
key, timeout and retry policy, for every session, review and summary of this process.

A new `openai` client per chat session built an SSL context each time (the certificate bundle
is loaded even for plain-http servers) and opened fresh connections: ~18% of the server's CPU
under 20 busy chats (bench/live.py). The shared client is thread-safe (its HTTP pool is); each
session still gets its own `ChatClient` (its model name), whose close() leaves the shared
client open for the others.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from agent.llm import ChatClient, client_from_config
from agent.llm.capabilities import CapabilityStore
from foundation.config import Config

Key = tuple[str, str, float, int]
MAX_SERVERS = 16  # distinct (server, key, timeout, retries) kept; more only after config changes


class ClientPool:
    def __init__(self, size: int = MAX_SERVERS) -> None:
        self.size = size
        self._owners: OrderedDict[Key, ChatClient] = OrderedDict()
        self._lock = threading.Lock()

    def chat_client(
        self,
        config: Config,
        model: str | None = None,
        *,
        timeout: float | None = None,
        capabilities: CapabilityStore | None = None,
    ) -> ChatClient:
        key: Key = (
            config.base_url,
            config.api_key,
            timeout if timeout is not None else config.model.timeout,
            config.model.max_retries,
        )
        name = model or config.model_name
        with self._lock:
            owner = self._owners.get(key)
            if owner is not None:
                self._owners.move_to_end(key)
        if owner is None:
            # Raises LLMError (no model configured) before anything is kept.
            owner = ChatClient(base_url=key[0], api_key=key[1], model=name, timeout=key[2], max_retries=key[3])
            with self._lock:
                owner = self._owners.setdefault(key, owner)
                while len(self._owners) > self.size:
                    # Not closed: sessions may still use it; the openai client closes itself once
                    # nothing refers to it any more.
                    self._owners.popitem(last=False)
        return ChatClient(
            base_url=key[0],
            api_key=key[1],
            model=name,
            timeout=key[2],
            max_retries=key[3],
            capabilities=capabilities,
            openai_client=owner.openai_client,
        )


shared = ClientPool()


def list_models(config: Config, placeholder: str, timeout: float) -> list[str]:
    """The model names the configured server lists (`/v1/models`), through a short-lived client
    (`placeholder` names the model where none is configured yet). Raises LLMError."""
    client = client_from_config(config, config.model_name or placeholder, timeout=timeout)
    try:
        return list(client.list_models())
    finally:
        client.close()
