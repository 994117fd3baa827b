"""Recall by meaning: past messages embedded in the background by the configured model (the
scripted server's real all-MiniLM-L6-v2), found by the search page's function and the agent's
tool beside their words."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from django.utils import timezone

from agent import recall
from knowledge.models import ChatSession, Message
from knowledge.search import meaning as search_meaning
from knowledge.search import search_messages, search_sessions
from knowledge.search.filters import Filters
from knowledge.vectors import MessageVector, RecallProgress, pack
from tests.conftest import write_config
from tests.fakellm import ScriptedLLM

pytestmark = pytest.mark.django_db

FLAKY = "We agreed to rerun the integration suite automatically because it keeps failing at random."
CAKE = "For the birthday I will bake a lemon drizzle cake with poppy seeds."
OTHER = [
    "Please book a table for four at the ramen place on Friday evening.",
    "My bicycle's rear brake squeaks when it rains.",
    "Tuesday's dentist appointment moved to Thursday afternoon.",
]


@pytest.fixture
def embedding(llm: ScriptedLLM, home: Path) -> ScriptedLLM:
    """The scripted server embeds, and config.yaml names its embedding model."""
    llm.serve_embeddings()
    write_config(home, "embeddings:\n  model: all-minilm\n")
    return llm


def _chat(*texts: str, private: bool = False, role: str = "user") -> ChatSession:
    session = ChatSession.objects.create(title="", private=private)
    for text in texts:
        Message.objects.create(session=session, role=role, content=text)
    return session


def _embed_all() -> recall.RoundResult:
    return recall.embed_backlog()


def test_a_paraphrase_finds_what_its_words_cannot(embedding):
    _chat(FLAKY)
    _chat(CAKE, *OTHER)
    result = _embed_all()
    assert result.embedded == 5 and not result.error
    page = search_messages("what did we decide about the unreliable CI tests")
    assert page.meaning
    assert [h.snippet for h in page.results][:1] == [FLAKY]
    assert page.results[0].by_meaning  # none of its words are in the query
    assert page.total >= 1


def test_without_an_embedding_model_search_is_by_words_only(llm, home):
    llm.serve_embeddings()
    _chat(FLAKY)
    assert _embed_all().embedded == 0
    assert MessageVector.objects.count() == 0
    page = search_messages("unreliable CI tests")
    assert not page.meaning and page.total == 0
    assert "no embedding model" in search_meaning.embedder().why_not
    assert search_messages("integration suite").total == 1  # words still find it


def test_a_server_without_embeddings_leaves_search_by_words(llm, home):
    write_config(home, "embeddings:\n  model: all-minilm\n")  # the server answers 404 to /embeddings
    _chat(FLAKY)
    assert _embed_all().error
    assert not search_meaning.embedder().on
    assert "no embeddings" in search_meaning.embedder().why_not
    assert not search_messages("unreliable CI tests").meaning


def test_a_hit_by_words_and_meaning_comes_first_and_is_not_marked(embedding):
    _chat("The flaky integration suite is retried twice by pytest-rerunfailures.")
    _chat("Our CI pipeline is flaky: the integration tests fail at random.")
    _chat(CAKE, *OTHER)
    _embed_all()
    page = search_messages("flaky integration")
    assert page.meaning
    both = [h for h in page.results if not h.by_meaning]
    assert len(both) == 2 and page.results[0] in both  # found by words: ranked first, not marked
    assert all("cake" not in h.snippet for h in page.results)  # unrelated text stays out


def test_an_excluded_word_excludes_hits_by_meaning_too(embedding):
    _chat("The integration suite fails at random, so pytest-rerunfailures reruns it.")
    _chat("Our pipeline keeps failing at random on the integration tests, so annoying.")
    _embed_all()
    by_meaning = search_messages("randomly breaking test runs")
    assert len(by_meaning.results) == 2 and all(h.by_meaning for h in by_meaning.results)
    left_out = search_messages("randomly breaking test runs -pytest-rerunfailures")
    assert [h.snippet for h in left_out.results] == [
        "Our pipeline keeps failing at random on the integration tests, so annoying."
    ]


def test_with_syntax_hits_by_words_keep_their_order_before_meaning(embedding):
    _chat("Friday: ramen for four, booked.")
    _chat("I reserved a restaurant table for the weekend dinner with friends.")
    _chat(CAKE)
    _embed_all()
    page = search_messages('"ramen" OR sushi')
    assert page.results[0].snippet.replace("\x02", "").replace("\x03", "").startswith("Friday")
    assert not page.results[0].by_meaning
    assert all(h.by_meaning for h in page.results[1:])


def test_private_chats_are_never_embedded_nor_found_by_meaning(embedding):
    secret = _chat(FLAKY, private=True)
    _chat(CAKE)
    _embed_all()
    assert not MessageVector.objects.filter(message__session=secret).exists()
    assert all(h.session_id != secret.id for h in search_messages("unreliable CI tests").results)


def test_a_chat_made_private_loses_its_vectors(embedding):
    chat = _chat(FLAKY)
    _embed_all()
    assert MessageVector.objects.filter(message__session=chat).exists()
    ChatSession.objects.filter(id=chat.id).update(private=True)
    assert search_messages("unreliable CI tests").results == []
    _embed_all()
    assert not MessageVector.objects.filter(message__session=chat).exists()


def test_the_work_resumes_from_its_mark_and_embeds_each_message_once(embedding):
    _chat(*[f"note {i}: {text}" for i, text in enumerate(OTHER * 30)])  # 90 messages
    first = recall.embed_backlog(max_batches=1)
    assert first.embedded == recall.BATCH
    requests = len(embedding.embedding_requests)
    rest = _embed_all()
    assert rest.embedded == 90 - recall.BATCH
    assert MessageVector.objects.count() == 90
    assert len(embedding.embedding_requests) == requests + 2  # 58 more texts: two requests
    assert _embed_all().embedded == 0  # nothing new: no request
    assert len(embedding.embedding_requests) == requests + 2


def test_tool_output_and_empty_messages_are_not_embedded(embedding):
    session = _chat(FLAKY)
    Message.objects.create(session=session, role="tool", content="ran 42 tests, 2 reruns")
    Message.objects.create(session=session, role="assistant", content="", tool_calls=[{"id": "x"}])
    _embed_all()
    assert MessageVector.objects.count() == 1


def test_it_waits_while_a_chat_is_writing_an_answer(embedding):
    _chat(FLAKY)
    busy = _chat(CAKE)
    now = timezone.now()
    ChatSession.objects.filter(id=busy.id).update(turn_lease_until=now + timedelta(seconds=12), turn_worker="x:1")
    waited = recall.embed_backlog(now=now)
    assert waited.waited and waited.embedded == 0
    later = recall.embed_backlog(now=now + timedelta(seconds=30))  # the turn's lease ran out
    assert later.embedded == 2


def test_a_new_model_embeds_everything_again(embedding, home):
    _chat(FLAKY, CAKE)
    _embed_all()
    write_config(home, "embeddings:\n  model: another-model\n")
    assert _embed_all().embedded == 2
    assert set(MessageVector.objects.values_list("model", flat=True)) == {f"another-model @ {embedding.base_url}"}
    assert list(RecallProgress.objects.values_list("model", flat=True)) == [f"another-model @ {embedding.base_url}"]


def test_the_agents_tool_finds_a_session_by_meaning(embedding):
    flaky = _chat("Can we stop the nightly build from failing at random?", FLAKY)
    _chat(CAKE, *OTHER)
    _embed_all()
    hits = search_sessions("what did we decide about the unreliable CI tests")
    assert hits and hits[0].session_id == flaky.id
    assert hits[0].matched == "meaning"


def test_a_message_embedded_after_a_search_is_found_by_the_next(embedding):
    _chat(CAKE, *OTHER)
    _embed_all()
    assert search_messages("unreliable CI tests").results == []  # nothing near yet
    _chat(FLAKY)
    _embed_all()
    assert [h.snippet for h in search_messages("unreliable CI tests").results] == [FLAKY]


# -- the approximate index, over many vectors written straight into the table -----------------------

SPACE_DIMS = 32


def _stored(space: str, vectors: np.ndarray, *, private: bool = False, role: str = "user") -> list[int]:
    """A chat whose messages have `vectors` in `space`; the background work's count set as it would be."""
    session = ChatSession.objects.create(title="", private=private)
    made = Message.objects.bulk_create(
        Message(session=session, role=role, content=f"m{i}") for i in range(len(vectors))
    )
    MessageVector.objects.bulk_create(
        MessageVector(message=m, model=space, vector=pack(v)) for m, v in zip(made, vectors, strict=True)
    )
    RecallProgress.objects.update_or_create(
        model=space, defaults={"embedded": MessageVector.objects.filter(model=space).count()}
    )
    return [m.pk for m in made]


def _topics(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((12, SPACE_DIMS))
    v = centres[rng.integers(0, 12, n)] + 0.5 * rng.standard_normal((n, SPACE_DIMS))
    return v / np.linalg.norm(v, axis=1, keepdims=True), centres


def _near(centre: np.ndarray, seed: int) -> np.ndarray:
    v = centre + 0.5 * np.random.default_rng(seed).standard_normal(SPACE_DIMS)
    return (v / np.linalg.norm(v)).astype(np.float32)


@pytest.fixture
def small_index(monkeypatch):
    """An index from a few hundred vectors on (as from fifty thousand in use)."""
    monkeypatch.setattr(search_meaning, "EXACT_BELOW", 300)
    monkeypatch.setattr(search_meaning, "FILE_AFTER", 50)


def test_the_index_finds_what_the_exact_scan_finds(small_index):
    vectors, centres = _topics(1200, seed=1)
    _stored("topics", vectors)
    search_meaning.nearest("topics", _near(centres[0], 0), Filters(), 20)  # loads, and starts the index
    assert search_meaning.settle("topics")
    for i in range(12):
        q = _near(centres[i], 10 + i)
        by_index = search_meaning.nearest("topics", q, Filters(), 20)
        assert by_index == search_meaning.nearest("topics", q, Filters(), 20, exact=True)
        assert len(by_index) == 20


def test_filters_and_private_chats_still_hold_with_the_index(small_index):
    vectors, centres = _topics(1200, seed=2)
    secret = set(_stored("filtered", vectors[:400], private=True))
    answers = set(_stored("filtered", vectors[400:800], role="assistant"))
    _stored("filtered", vectors[800:])
    search_meaning.nearest("filtered", _near(centres[0], 0), Filters(), 20)
    assert search_meaning.settle("filtered")
    for i in range(12):
        q = _near(centres[i], 20 + i)
        found = search_meaning.nearest("filtered", q, Filters(roles=["assistant"], without_private=True), 20)
        assert found and {n.message_id for n in found} <= answers
        assert found == search_meaning.nearest(
            "filtered", q, Filters(roles=["assistant"], without_private=True), 20, exact=True
        )
        everyone = search_meaning.nearest("filtered", q, Filters(without_private=True), 40)
        assert not {n.message_id for n in everyone} & secret
        assert all(n.similarity >= search_meaning.MIN_SIMILARITY for n in everyone)


def test_vectors_embedded_after_the_index_are_found_and_filed(small_index):
    vectors, centres = _topics(1200, seed=3)
    _stored("growing", vectors)
    search_meaning.nearest("growing", _near(centres[0], 0), Filters(), 20)
    assert search_meaning.settle("growing")
    fresh = np.random.default_rng(4).standard_normal(SPACE_DIMS)  # a topic the index never saw
    new = _stored("growing", np.stack([_near(fresh, 100 + k) for k in range(60)]))
    q = _near(fresh, 999)
    assert {n.message_id for n in search_meaning.nearest("growing", q, Filters(), 20)} <= set(new)  # not filed yet
    assert search_meaning.settle("growing")  # 60 appended: filed in a newer index
    found = search_meaning.nearest("growing", q, Filters(), 20)
    assert len(found) == 20 and {n.message_id for n in found} <= set(new)


def test_a_grown_copy_is_indexed_again_and_finds_the_same(small_index):
    vectors, centres = _topics(1600, seed=5)
    _stored("retrained", vectors[:300])
    search_meaning.nearest("retrained", _near(centres[0], 0), Filters(), 20)
    assert search_meaning.settle("retrained")
    _stored("retrained", vectors[300:])  # more than four times as many: trained again
    search_meaning.nearest("retrained", _near(centres[0], 0), Filters(), 20)
    assert search_meaning.settle("retrained")
    index = search_meaning._space("retrained").index
    assert index is not None and index.trained == 1600
    for i in range(12):
        q = _near(centres[i], 40 + i)
        assert search_meaning.nearest("retrained", q, Filters(), 20) == search_meaning.nearest(
            "retrained", q, Filters(), 20, exact=True
        )


@pytest.mark.parametrize("indexed", [False, True])
def test_a_page_fills_when_the_filters_remove_the_nearest(monkeypatch, indexed):
    if indexed:
        monkeypatch.setattr(search_meaning, "EXACT_BELOW", 300)
    rng = np.random.default_rng(7)
    topic = rng.standard_normal(SPACE_DIMS)
    near = np.stack([_near(topic, k) for k in range(700)])  # what the person said: filtered out
    farther = topic + 2.0 * rng.standard_normal((30, SPACE_DIMS))  # the agent's answers, less near
    space = f"crowded-{indexed}"
    _stored(space, near)
    answers = set(_stored(space, farther / np.linalg.norm(farther, axis=1, keepdims=True), role="assistant"))
    q = _near(topic, 999)
    search_meaning.nearest(space, q, Filters(), 20)
    assert search_meaning.settle(space) is indexed
    found = search_meaning.nearest(space, q, Filters(roles=["assistant"]), 20)
    assert len(found) == 20 and {n.message_id for n in found} <= answers
