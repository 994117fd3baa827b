"""The words the support check reads."""

from __future__ import annotations

import pytest

from knowledge.verification import lexicon


def test_content_terms_are_stemmed_without_framing_and_cjk_by_bigram():
    assert lexicon.content_terms("User prefers deploying containers", framing=False) == {"deploy", "contain"}
    assert lexicon.content_terms("Replies must be concise") >= {"answer", "short"}
    assert {"花生", "过敏"} <= lexicon.content_terms("用户对花生过敏")


@pytest.mark.parametrize("text", ["ok thanks", "Sounds good to me!", "好的", "谢谢你", "got it, thank you so much"])
def test_acknowledgements(text):
    assert lexicon.is_acknowledgement(text)


@pytest.mark.parametrize("text", ["I like tea", "ok, I use tabs", "好的，我用四个空格"])
def test_statements_are_not_acknowledgements(text):
    assert not lexicon.is_acknowledgement(text)


def test_substance_counts_words_that_say_something():
    assert lexicon.substance("I like tea") == 3
    assert lexicon.substance("in the cloud") == 1
    assert lexicon.substance("我对花生过敏") >= 3


def test_cue_patterns_in_both_languages():
    assert lexicon.NEGATION.search(lexicon.norm("I don’t deploy")) and lexicon.NEGATION.search("我不喝咖啡")
    assert not lexicon.NEGATION.search("I know nothings")  # whole words only
    assert lexicon.CONDITIONAL.search("if i had a mac") and lexicon.CONDITIONAL.search("假如我有钱")
    assert lexicon.THIRD_PARTY.search("my manager loves jira") and lexicon.THIRD_PARTY.search("我同事喜欢vim")
    assert not lexicon.THIRD_PARTY.search("其他的都行")
    assert lexicon.JOKE.search("haha no") and lexicon.JOKE.search("开玩笑的")
