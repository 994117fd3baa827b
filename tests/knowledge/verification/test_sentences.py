"""Sentences and clauses of a message, and the ones a quote sits in."""

from __future__ import annotations

from knowledge.verification.documents import Located
from knowledge.verification.sentences import sentences, sentences_of


def test_the_sentence_and_clause_of_a_quote_and_the_sentence_after():
    found, clauses, after = sentences_of(Located("deploy on Fridays", "Hi. I'd never deploy on Fridays, ok? Bye"))
    assert found == ["I'd never deploy on Fridays, ok?"] and clauses == ["I'd never deploy on Fridays,"]
    assert after == "Bye"


def test_sentences_split_on_chinese_punctuation_and_new_lines():
    assert sentences("我用Vim。你呢？\nOK then") == ["我用Vim。", "你呢？", "OK then"]
