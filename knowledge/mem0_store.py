"""mem0's store of memories, run locally (docs/BEHAVIOUR.md, Memory providers; docs/DECISIONS.md,
record 25).

The open-source `mem0ai` library is an optional extra (requirements-mem0.txt): the dashboard runs
without it, and `unavailable` says why mem0 cannot run. When it can, one `Memory` per process is
opened on first use and kept:

- its model and its embedder are the configured OpenAI-compatible server (the chat model's base
  URL, key and model; the embedding model of `embeddings.*`): nothing leaves for mem0's cloud;
- its vectors are in qdrant's local mode (a folder, no server) and its history in SQLite, both in
  HERMES_HOME/mem0, as is the folder mem0 keeps for itself (MEM0_DIR);
- its telemetry is off: MEM0_TELEMETRY=False while the library is first imported (it reads the
  variable then), the process's environment given back as it was right after.

Qdrant's local mode lets one process at a time open the folder; another process of the same home
gets `Mem0Unavailable` saying so. Every call holds one lock, as the local store is not meant for
threads writing and reading at once.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from foundation.config import Config

PACKAGE = "mem0ai"
REQUIREMENTS = "requirements-mem0.txt"
USER_ID = "hermes"  # mem0 scopes memories by a user id: this dashboard has one person
COLLECTION = "hermes"
SOURCE = "mem0"


class Mem0Unavailable(RuntimeError):
    """mem0 cannot run here; the text says why, for the settings page."""


@dataclass(frozen=True)
class Remembered:
    """One of mem0's memories as the memory page lists it."""

    id: str
    text: str
    created_at: datetime | None
    session_id: str  # the chat the turn was in
    source: str = SOURCE


def installed() -> bool:
    return importlib.util.find_spec("mem0") is not None


def missing_library_text() -> str:
    return f"the {PACKAGE} library is not installed (pip install -r {REQUIREMENTS})"


def unavailable(config: Config) -> str:
    """Why mem0 cannot run with `config`, in a person's words; "" when it can."""
    if not installed():
        return missing_library_text()
    if not config.embedding_model:
        return "mem0 needs an embedding model: set embeddings.model (Search by meaning)"
    return ""


def store_dir(config: Config) -> Path:
    return config.home / "mem0"


_lock = threading.RLock()
_open: tuple[tuple[str, ...], Any] | None = None


def _key(config: Config) -> tuple[str, ...]:
    return (
        str(config.home),
        config.base_url,
        config.api_key,
        config.model_name,
        config.embedding_model,
        config.embedding_base_url,
        config.embedding_api_key,
    )


_import_lock = threading.Lock()  # one thread at a time sets the variables and gives them back


def import_library(config: Config) -> Any:
    """mem0's `Memory`, imported with telemetry off and its own folder inside the home. The slow
    part of a first call (seconds): a provider does it ahead, without opening the store, so a
    process that never chats (a queue worker ending a session) never holds the store's folder."""
    why = unavailable(config)
    if why:
        raise Mem0Unavailable(why)
    names = ("MEM0_TELEMETRY", "MEM0_DIR")
    with _import_lock:
        saved = {name: os.environ.get(name) for name in names}
        os.environ["MEM0_TELEMETRY"] = "False"
        os.environ["MEM0_DIR"] = str(store_dir(config))
        try:
            from mem0 import Memory  # noqa: PLC0415  (optional: imported only when mem0 is configured)
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
    return Memory


def import_shared_dependencies() -> None:
    """Import `httpx` (a dependency of mem0) in the calling thread, before mem0 is imported on
    another one. The openai client looks `httpx` up in sys.modules whenever one is made: seen
    half-imported by a chat's thread while a provider's thread imports mem0, it broke that chat."""
    if installed():
        import httpx  # noqa: F401, PLC0415


def _dimensions(config: Config) -> int:
    """The length of the embedding model's vectors, asked once: the vector store is made for it."""
    from mem0.configs.embeddings.base import BaseEmbedderConfig  # noqa: PLC0415
    from mem0.embeddings.openai import OpenAIEmbedding  # noqa: PLC0415

    probe = OpenAIEmbedding(BaseEmbedderConfig(**_embedder_settings(config)))
    probe.client = probe.client.with_options(timeout=config.model.timeout, max_retries=config.model.max_retries)
    return len(probe.embed("How long are this model's vectors?"))


def _embedder_settings(config: Config) -> dict[str, Any]:
    # A local server often needs no key; the client refuses an empty one.
    return {
        "model": config.embedding_model,
        "openai_base_url": config.embedding_base_url or None,
        "api_key": config.embedding_api_key or "not-needed",
    }


def _settings(config: Config, dims: int) -> dict[str, Any]:
    folder = store_dir(config)
    return {
        "llm": {
            "provider": "openai",
            "config": {
                "model": config.model_name,
                "openai_base_url": config.base_url or None,
                "api_key": config.api_key or "not-needed",
            },
        },
        "embedder": {"provider": "openai", "config": _embedder_settings(config)},
        "vector_store": {
            "provider": "qdrant",
            "config": {
                "collection_name": COLLECTION,
                "embedding_model_dims": dims,
                "path": str(folder / "qdrant"),
                "on_disk": True,
            },
        },
        "history_db_path": str(folder / "history.db"),
    }


def _memory(config: Config) -> Any:
    """The process's open Memory for `config` (opened now if it is not, or if the settings it was
    opened with changed)."""
    global _open
    why = unavailable(config)
    if why:
        raise Mem0Unavailable(why)
    key = _key(config)
    if _open is not None and _open[0] == key:
        return _open[1]
    close()
    memory_class = import_library(config)
    store_dir(config).mkdir(parents=True, exist_ok=True)
    try:
        memory = memory_class.from_config(_settings(config, _dimensions(config)))
    except RuntimeError as exc:
        if "already accessed by another instance" in str(exc):
            raise Mem0Unavailable(
                f"another process of this home has mem0's store ({store_dir(config) / 'qdrant'}) open; "
                "qdrant's local mode allows one process at a time"
            ) from exc
        raise
    # mem0 makes its clients with openai's default timeout (ten minutes), during which its store
    # stays locked: the configured model.timeout (and max_retries) apply to its calls as to the chat's.
    for part in (memory.llm, memory.embedding_model):
        part.client = part.client.with_options(timeout=config.model.timeout, max_retries=config.model.max_retries)
    _open = (key, memory)
    return memory


@contextmanager
def opened(config: Config) -> Iterator[Any]:
    with _lock:
        yield _memory(config)


def add_turn(config: Config, user_message: str, answer: str, session_id: str) -> list[str]:
    """Give mem0 one turn; the memories it made of it (its model decides which)."""
    turn = [{"role": "user", "content": user_message}, {"role": "assistant", "content": answer}]
    with opened(config) as memory:
        result = memory.add(turn, user_id=USER_ID, metadata={"session_id": session_id})
    return [str(item.get("memory", "")) for item in result.get("results", [])]


def search(config: Config, query: str, limit: int = 5) -> list[str]:
    """The texts of the memories nearest to `query`, best first."""
    if not query.strip():
        return []
    with opened(config) as memory:
        result = memory.search(query, filters={"user_id": USER_ID}, top_k=limit)
    return [str(item.get("memory", "")) for item in result.get("results", []) if item.get("memory")]


def all_memories(config: Config, limit: int = 500) -> list[Remembered]:
    """Every memory mem0 keeps for this dashboard's person, newest first."""
    with opened(config) as memory:
        result = memory.get_all(filters={"user_id": USER_ID}, top_k=limit)
    items = [
        Remembered(
            id=str(item.get("id", "")),
            text=str(item.get("memory", "")),
            created_at=_when(item.get("created_at")),
            session_id=str((item.get("metadata") or {}).get("session_id", "")),
        )
        for item in result.get("results", [])
    ]
    return sorted(items, key=lambda m: m.created_at or _EPOCH, reverse=True)


_EPOCH = datetime.fromtimestamp(0, UTC)


def _when(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value)) if value else None
    except ValueError:
        return None


@dataclass(frozen=True)
class Listing:
    """What the memory page shows of mem0: its memories, or why they cannot be listed now."""

    memories: list[Remembered]
    error: str = ""


def listing(config: Config) -> Listing:
    """mem0's memories for the memory page, waited for `memory.provider_timeout` seconds at most
    (mem0 may be busy with a turn, or its server slow): the page never hangs on it."""
    why = unavailable(config)
    if why:
        return Listing([], why)
    import_shared_dependencies()
    result: Future[list[Remembered]] = Future()

    def run() -> None:
        try:
            result.set_result(all_memories(config))
        except Exception as exc:  # noqa: BLE001  (shown on the page, in the reader's words)
            result.set_exception(exc)

    threading.Thread(target=run, name="mem0-listing", daemon=True).start()
    budget = config.memory.provider_timeout
    try:
        return Listing(result.result(timeout=budget))
    except FutureTimeout:
        return Listing([], f"mem0 did not answer within {budget:g} s (it may be busy with a turn); reload to try again")
    except Exception as exc:  # noqa: BLE001
        return Listing([], f"{type(exc).__name__}: {exc}")


def close() -> None:
    """Close the process's Memory (its qdrant folder can then be opened by another process)."""
    global _open
    with _lock:
        if _open is not None:
            memory, _open = _open[1], None
            memory.close()  # its history database; the vector store's client is closed apart
            memory.vector_store.client.close()  # releases the folder's lock (the entity store shares it)
