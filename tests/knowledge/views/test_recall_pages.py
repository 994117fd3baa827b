"""What the search and settings pages say about search by meaning: hits found only by meaning are
marked, the background work's progress is shown, and without embeddings both pages say search is
by words only."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from agent import recall
from knowledge.models import ChatSession, Message
from tests.conftest import write_config
from tests.fakellm import ScriptedLLM

pytestmark = pytest.mark.django_db

RETRIES = "We agreed to rerun the integration suite automatically because it keeps failing at random."


def _chat(*texts: str) -> None:
    session = ChatSession.objects.create(title="Wombat pipeline")
    for text in texts:
        Message.objects.create(session=session, role="user", content=text)


@pytest.fixture
def embedding(llm: ScriptedLLM, home: Path) -> ScriptedLLM:
    llm.serve_embeddings()
    write_config(home, "embeddings:\n  model: all-minilm\n")
    return llm


def test_a_hit_found_only_by_meaning_is_marked(auth_client, embedding):
    _chat(RETRIES, "For the birthday I will bake a lemon drizzle cake.")
    recall.embed_backlog()
    page = auth_client.get(reverse("search"), {"q": "unreliable CI tests"}).content.decode()
    assert "integration suite" in page
    assert page.count('class="badge by-meaning"') == 1
    assert "lemon drizzle" not in page
    assert "Search is by words only" not in page


def test_without_an_embedding_model_the_search_page_says_words_only(auth_client, llm):
    _chat(RETRIES)
    page = auth_client.get(reverse("search"), {"q": "integration suite"}).content.decode()
    assert "integration suite" in page.replace("\x02", "")
    assert "Search is by words only: no embedding model is set (embeddings.model in config.yaml)." in page
    assert "by-meaning" not in page


def test_the_settings_page_shows_how_far_embedding_came(auth_client, embedding):
    _chat(RETRIES, "Second message about wombats.", "Third message about wombats.")
    recall.embed_backlog(max_batches=0)
    page = auth_client.get(reverse("settings")).content.decode()
    assert "0 of 3 messages embedded" in page
    recall.embed_backlog()
    page = auth_client.get(reverse("settings")).content.decode()
    assert "3 of 3 messages embedded: every past message can be found by meaning." in page
    assert 'name="embeddings.model"' in page


def test_the_settings_page_says_words_only_without_embeddings(auth_client, llm, home):
    page = auth_client.get(reverse("settings")).content.decode()
    assert "Search is by words only: no embedding model is set" in page
    write_config(home, "embeddings:\n  model: all-minilm\n")  # the server answers 404 to /embeddings
    _chat(RETRIES)
    assert recall.embed_backlog().error
    page = auth_client.get(reverse("settings")).content.decode()
    assert "Search is by words only: the server has no embeddings for the model all-minilm." in page
