"""The background embedding's place in the product: the connection check finds out whether the
embedding model serves, the periodic round starts the work on a thread of its own, and the
capability learned is remembered."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.db import connections

from agent import jobs, reclaim
from agent.chat import connection
from foundation import config as hermes_config
from knowledge.capabilities import known
from knowledge.history import presence
from knowledge.models import ChatSession, Message
from knowledge.vectors import MessageVector
from tests.conftest import write_config
from tests.fakellm import ScriptedLLM

pytestmark = pytest.mark.django_db(transaction=True)


def _steps(found: connection.ConnectionCheck) -> dict[str, bool | None]:
    return {s.key: s.ok for s in found.steps}


def test_the_connection_check_finds_out_whether_the_embedding_model_serves(llm: ScriptedLLM, home: Path):
    config = hermes_config.get()
    assert "embeddings" not in _steps(connection.check(config, config.api_key))  # none set: not asked
    write_config(home, "embeddings:\n  model: all-minilm\n")
    config = hermes_config.get()
    found = connection.check(config, config.api_key)
    assert _steps(found)["embeddings"] is False
    assert (known(llm.base_url, "all-minilm") or {}).get("embeddings") is False
    llm.serve_embeddings()
    found = connection.check(config, config.api_key)  # asked again: the server may have gained them
    (step,) = [s for s in found.steps if s.key == "embeddings"]
    assert step.ok is True and step.label == "Embeddings (all-minilm)" and "384 dimensions" in step.detail
    assert (known(llm.base_url, "all-minilm") or {}).get("embeddings") is True


def test_the_periodic_round_embeds_in_the_background(llm: ScriptedLLM, home: Path):
    llm.serve_embeddings()
    write_config(home, "embeddings:\n  model: all-minilm\n")
    session = ChatSession.objects.create(title="")
    Message.objects.create(session=session, role="user", content="The heating makes a clicking noise at night.")
    reclaim.one_round(presence.SERVER, lambda: [])
    # The one recall thread is done once it runs this; its connection is closed for the teardown.
    jobs._pool("recall").submit(connections.close_all).result(timeout=120)
    assert MessageVector.objects.count() == 1
