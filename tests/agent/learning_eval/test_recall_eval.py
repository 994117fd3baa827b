"""Recall by meaning on the paraphrase set (agent/learning_eval/recall.json): with the scripted
server's real embedding model (all-MiniLM-L6-v2) the searched-for message is among the first 10
hits in at least 90 % of the English cases; without embeddings search is by words only, and
says so.

all-MiniLM-L6-v2 was trained on English: it finds 30 of the 32 English cases and 8 of the 14
German ones (docs/BEHAVIOUR.md, Sessions and search). The German floor below is that measurement, so a change
that makes German recall worse fails; a multilingual embedding model is what German needs."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.learning_eval import recall_eval
from knowledge.search import meaning
from tests.conftest import write_config
from tests.fakellm import ScriptedLLM

DATA = recall_eval.load()


def test_the_set_is_large_enough_in_two_languages():
    assert len(DATA.cases) >= 40
    by_lang = {lang: sum(c.lang == lang for c in DATA.cases) for lang in {c.lang for c in DATA.cases}}
    assert set(by_lang) >= {"en", "de"} and min(by_lang.values()) >= 10
    assert 300 <= DATA.messages <= 600  # a few hundred messages
    assert len({c.target for c in DATA.cases}) == len(DATA.cases)


@pytest.mark.parametrize("case", DATA.cases, ids=lambda c: c.query)
def test_no_query_shares_a_content_word_with_its_message(case):
    assert recall_eval.shared_words(case.query, case.target) == set()


def test_the_word_check_sees_shared_words_and_their_forms():
    assert recall_eval.shared_words("deploy the app", "The deployment of the App failed") == {"deploy", "app"}
    assert recall_eval.shared_words("what did we decide", "We did it") == set()  # only stop words in common


@pytest.mark.slow
@pytest.mark.django_db
def test_with_embeddings_nine_in_ten_are_found_in_the_top_ten(llm: ScriptedLLM, home: Path):
    llm.serve_embeddings()
    write_config(home, "embeddings:\n  model: all-minilm\n")
    report = recall_eval.run(DATA)
    print("\n".join(report.lines()))
    assert report.meaning
    assert report.share("en") >= 0.9, report.lines()
    assert report.share("de") >= 0.5, report.lines()
    assert report.share() >= 0.8, report.lines()


@pytest.mark.django_db
def test_without_embeddings_search_is_by_words_only_and_says_so(llm: ScriptedLLM, home: Path):
    llm.serve_embeddings()  # the server could embed, but no embedding model is configured
    report = recall_eval.run(recall_eval.Data(DATA.cases[:8], DATA.haystack[:30], DATA.replies))
    assert not report.meaning
    assert report.found()[0] == 0  # no shared word, nothing found
    assert meaning.embedder().why_not == "no embedding model is set (embeddings.model in config.yaml)"
    assert llm.embedding_requests == []
