"""mem0's local store with the real mem0ai library against the scripted model server: a turn
becomes the memories its model extracts, they are searched by meaning, listed for the memory
page within the budget, and a store another process holds open is said plainly."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from foundation import config as hermes_config
from knowledge import mem0_store
from tests.conftest import write_config
from tests.fakellm import Reply, ScriptedLLM

# Not pytest.importorskip: importing mem0 here would import it with its telemetry on.
if not mem0_store.installed():
    pytest.skip(f"{mem0_store.PACKAGE} is not installed ({mem0_store.REQUIREMENTS})", allow_module_level=True)

FACT = "The user waters the office ficus every Thursday"


def _is_extraction(body: dict[str, Any]) -> bool:
    return "Memory Extractor" in str(body.get("messages", [{}])[0].get("content"))


@pytest.fixture
def store(home: Path, llm: ScriptedLLM) -> Iterator[hermes_config.Config]:
    llm.serve_embeddings()
    llm.when(_is_extraction, Reply(text=json.dumps({"memory": [{"id": "0", "text": FACT}]})))
    shutil.rmtree(home / "mem0", ignore_errors=True)
    write_config(home, "memory:\n  provider: mem0\n  provider_timeout: 300\nembeddings:\n  model: all-minilm\n")
    yield hermes_config.get()
    mem0_store.close()
    shutil.rmtree(home / "mem0", ignore_errors=True)


def test_a_turn_becomes_memories_found_by_meaning_and_listed(store):
    made = mem0_store.add_turn(store, "I water the office ficus on Thursdays.", "Noted.", "chat-1")
    assert made == [FACT]
    assert mem0_store.search(store, "when does the plant at work get watered?") == [FACT]
    assert mem0_store.search(store, "   ") == []
    (listed,) = mem0_store.listing(store).memories
    assert (listed.text, listed.session_id, listed.source) == (FACT, "chat-1", "mem0")
    assert listed.created_at is not None


def test_the_listing_waits_the_budget_at_most_while_mem0_is_busy(store, home):
    write_config(home, "memory:\n  provider: mem0\n  provider_timeout: 0.2\nembeddings:\n  model: all-minilm\n")
    with mem0_store._lock:  # a turn being given to mem0 holds the store
        shown = mem0_store.listing(hermes_config.get())
    assert shown.memories == [] and "did not answer within 0.2 s" in shown.error


def test_a_store_another_process_holds_is_said_plainly(store):
    from qdrant_client import QdrantClient

    (mem0_store.store_dir(store) / "qdrant").mkdir(parents=True)
    holder = QdrantClient(path=str(mem0_store.store_dir(store) / "qdrant"))
    try:
        with pytest.raises(mem0_store.Mem0Unavailable, match="another process of this home has mem0's store"):
            mem0_store.search(store, "anything")
    finally:
        holder.close()
    assert mem0_store.search(store, "anything") == []  # once it is let go, mem0 opens it


def test_a_model_that_does_not_answer_fails_the_call_after_the_configured_timeout(store, home, llm):
    write_config(
        home,
        "model:\n  timeout: 1\n  max_retries: 0\nmemory:\n  provider: mem0\n  provider_timeout: 300\n"
        "embeddings:\n  model: all-minilm\n",
    )
    llm.rules.clear()
    llm.when(_is_extraction, Reply(text='{"memory": []}', delay=30))
    with pytest.raises(Exception, match="timed out"):
        mem0_store.add_turn(hermes_config.get(), "I water the ficus on Thursdays.", "Noted.", "chat-1")
