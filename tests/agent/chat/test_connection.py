"""The pages' way to the model server, against the scripted OpenAI-compatible server."""

from __future__ import annotations

import pytest

from agent.chat import connection
from foundation import config as hermes_config
from knowledge.capabilities import DbCapabilityStore
from tests.conftest import write_config


@pytest.mark.django_db
def test_a_check_lists_the_models_and_stores_what_the_model_can_do(llm):
    llm.models = ["scripted-model", "other-model"]
    found = connection.check(hermes_config.get(), hermes_config.get().api_key)
    assert found.ok and found.error == "" and found.models == ["scripted-model", "other-model"]
    by_key = {s.key: s.ok for s in found.steps}
    assert by_key["chat"] is True and by_key["system_role"] is True
    stored = DbCapabilityStore().load(llm.base_url, "scripted-model")
    assert stored is not None and stored.get("probed_at")  # the chat adapts from its first turn


@pytest.mark.django_db
def test_without_a_model_name_the_check_only_reaches_the_server(llm, monkeypatch):
    monkeypatch.delenv("HERMES_MODEL")
    hermes_config.reset()
    found = connection.check(hermes_config.get(), hermes_config.get().api_key)
    assert found.ok and found.models == ["scripted-model"] and found.steps == []
    assert llm.chat_requests() == []


def test_an_unreachable_server_is_an_error_in_words(home, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    write_config(home, "model:\n  max_retries: 0\n  timeout: 2\n")
    found = connection.check(hermes_config.get(), hermes_config.get().api_key, timeout=2)
    assert not found.ok and found.error and found.models == [] and found.steps == []


def test_the_model_list_is_sorted(llm):
    llm.models = ["zeta", "alpha"]
    assert connection.server_models(hermes_config.get()) == ["alpha", "zeta"]


def test_a_server_that_lists_nothing_raises_a_readable_error(llm):
    llm.models = None  # GET /v1/models answers 404
    with pytest.raises(connection.ModelsUnavailable) as raised:
        connection.server_models(hermes_config.get())
    assert str(raised.value)
