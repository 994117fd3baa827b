"""Signals: what the words around a quote suggest about an entry, in sentences a person reads.

They are handed to the verifier and shown in the inbox; only the cue kinds hold a write, and only in
the lexical fallback (the verifier off or unreachable)."""

from __future__ import annotations

import pytest

from agent.admission.signals import acknowledgement, fallback_reason, normalised, proves_it_ran, read
from knowledge.verification.documents import Located


def _one(entry: str, quote: str, message: str | None = None) -> str:
    """Every signal's sentence, or "" when the words around the quote suggest nothing."""
    located = [Located(quote, message or quote)]
    return " ".join([acknowledgement(located), *(s.sentence for s in read(entry, located))]).strip()


def _fallback(entry: str, quote: str, message: str | None = None) -> str:
    return fallback_reason(read(entry, [Located(quote, message or quote)]))


@pytest.mark.parametrize(
    ("entry", "quote", "message"),
    [
        ("Deploys with docker compose", "I always deploy with docker compose", None),
        ("Never deploys on a Friday", "I never deploy on a Friday", "I never deploy on a Friday, ever."),
        ("Wants short answers", "keep your answers short", "Can you keep your answers short from now on?"),
        ("Prefers spaces over tabs", "spaces over tabs for me", "I hate tabs; spaces over tabs for me."),
        ("Works in Lisbon, in the WET time zone", "I work from Lisbon, so WET time zone", None),
        ("Runs Postgres 16 on db2", "our db2 box runs Postgres 16", "Our db2 box runs Postgres 16."),
        ("用户对花生过敏", "我对花生过敏", "我对花生过敏，所以别推荐花生酱。"),
        ("用中文回答，代码注释用英文", "以后请用中文回答我，代码注释可以用英文", None),
        # Word for word, a negation early in the sentence and a later part joined by "and".
        (
            "Never pushes to main and opens a pull request for every change",
            "I never push to main and open a pull request for every change",
            "I never push to main and open a pull request for every change.",
        ),
    ],
)
def test_quotes_that_say_what_the_entry_says_support_it(entry, quote, message):
    assert _one(entry, quote, message) == ""


@pytest.mark.parametrize(
    ("entry", "quote", "message", "why"),
    [
        ("Has a cat named Pixel", "my flight to Oslo got cancelled", None, "do not use some of the entry's words"),
        ("Drinks oat milk", "I walk to work every day", "I walk to work every day.", "'oat', 'milk'"),
        ("Runs Postgres 16", "we run Postgres in production", None, "names 16"),
        ("Likes YAML configs", "sounds good, thanks", None, "only acknowledges"),
        ("偏好深色主题", "好的谢谢", None, "only acknowledges"),
    ],
)
def test_a_quote_that_says_something_else_is_signalled_but_not_held_by_words(entry, quote, message, why):
    # Coverage measures wording: a correct paraphrase uses other words, so it is a signal for the
    # verifier, never a hold of its own (it held most correct facts when it was one).
    assert why in _one(entry, quote, message)
    assert _fallback(entry, quote, message) == ""


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ("Uses a 24-hour clock", "I always read times on a 24h clock"),
        ("Stops work at 6 PM", "I stop working at 6pm sharp"),
        ("Laptop has 16 GB of RAM", "my laptop only has 16G of RAM"),
        ("Runs PostgreSQL 16", "we run Postgres 16 everywhere"),
        ("Indents with 2 spaces", "I indent with 2-space tabs... I mean 2 spaces"),
    ],
)
def test_numbers_times_sizes_and_names_are_compared_after_normalisation(entry, said):
    assert "names" not in _one(entry, said), _one(entry, said)
    assert normalised("24-hour") == normalised("24h") and normalised("6 PM") == normalised("6pm")


@pytest.mark.parametrize(
    ("entry", "quote", "message", "why"),
    [
        ("Uses light mode", "use light mode", "I would never use light mode at night.", "negated"),
        ("Avoids Windows", "I develop on Windows daily", "I develop on Windows daily.", "negated"),
        ("Uses Emacs at work", "I do not use Vim and Emacs at work", "I do not use Vim and Emacs at work.", "negated"),
        ("Owns a Tesla", "I'd buy a Tesla", "If I won the lottery I'd buy a Tesla.", "hypothetical"),
        ("Is switching to Arch", "switch to Arch Linux", "Maybe I'll switch to Arch Linux one day.", "hypothetical"),
        ("Learns Haskell", "I pick up Haskell", "Would it be worth it if I pick up Haskell?", "question"),
        ("Likes Kotlin", "learn Kotlin next", "Should I learn Kotlin next?", "question"),
        ("Likes Perl", "my brother loves Perl scripts", "My brother loves Perl scripts.", "someone else"),
        ("Plays golf on weekends", "he plays golf on weekends", "Tom? he plays golf on weekends.", "someone else"),
        ("Is a wizard", "I'm a certified wizard at work", "I'm a certified wizard at work lol", "joking"),
        ("用户用Mac", "我会用Homebrew装Mac软件", "要是我有台Mac，我会用Homebrew装Mac软件。", "hypothetical"),
        ("用户不吃辣", "我老婆不吃辣", "我老婆不吃辣，帮她找个菜谱。", "someone else"),
        ("用户学Rust", "我该不该学Rust", "我该不该学Rust？", "question"),
        ("用户是猫的员工", "我家猫是我的老板", "我家猫是我的老板，哈哈开玩笑的。", "joking"),
    ],
)
def test_the_words_around_the_quote_are_signals_and_hold_only_in_the_fallback(entry, quote, message, why):
    assert why in _one(entry, quote, message)
    assert why in _fallback(entry, quote, message)


def test_a_request_phrased_as_a_question_is_not_a_question():
    assert (
        _one(
            "Wants commit messages in English",
            "write commit messages in English",
            "Could you write commit messages in English?",
        )
        == ""
    )


def test_inbox_sentences_name_the_entry_s_own_words_not_stems():
    said = "I'm working on a Django project with Postgres 16 and I deploy with Kamal"
    sentence = _one("User's stack: Django + PostgreSQL 16, deploys via Kamal on Hetzner", said)
    assert "'Hetzner'" in sentence and "PostgreSQL" not in sentence and "User" not in sentence
    assert "hetzn" not in sentence.replace("Hetzner", "")


def test_proof_that_a_procedure_ran():
    assert proves_it_ran([Located("cache cleared", "$ make clean\ncache cleared, 0 files left", "tool")])
    assert proves_it_ran([Located("that worked, thanks", "Rebuilding the index: that worked, thanks!")])
    assert proves_it_ran([Located("搞定了", "重启以后搞定了")])
    assert not proves_it_ran([Located("make clean", "make: *** [clean] Error 2 make clean", "tool")])
    assert not proves_it_ran([Located("it never worked", "I tried the rebuild but it never worked.")])
    assert not proves_it_ran([Located("my build keeps failing", "my build keeps failing, what do I do?")])


def test_that_worked_inside_a_pasted_document_is_not_the_persons_proof():
    from knowledge.verification import evidence

    pasted = "Tidy this page:\n```\nRun make deploy-fast.\nThat worked, thanks!\n```"
    verdict = evidence.check(["That worked, thanks!"], [{"role": "user", "content": pasted}], "skill", None)
    assert [loc.role for loc in verdict.located] == ["document"]
    assert not proves_it_ran(verdict.located)
    said = evidence.check(
        ["That worked, thanks!"], [{"role": "user", "content": "That worked, thanks!"}], "skill", None
    )
    assert proves_it_ran(said.located)
