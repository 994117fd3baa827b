"""Support, not presence: does what a writer quoted say what it saves?

A quote that occurs in the person's message proves only that the words were said. This module
reads the sentence around each quote and the entry being saved, deterministically:

- documents are not statements: fenced code, quoted lines (">"), indented blocks, pasted blocks of
  many lines or that start with a Markdown heading are what the person pasted, not what they said
  (`statement_text` blanks them out);
- a quote needs substance (MIN_SUBSTANCE content words, or CJK bigrams); acknowledgements never count;
- the entry's content terms must be covered by the quoted sentences (MIN_COVERAGE), every number or
  name-like token of the entry must be among them, and with several quotes each must share terms
  with the entry;
- cue words around the quote hold the write with the reason: negation (unless the entry is negated
  too), conditionals and wishes, questions (not requests to the assistant), other people, jokes.

Thresholds are stated in docs/EVIDENCE.md.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from knowledge.verification import lexicon
from knowledge.verification.documents import Located
from knowledge.verification.evidence import fold
from knowledge.verification.similarity import identifiers, said_words

MIN_SUBSTANCE = 3
MIN_COVERAGE = 0.6

_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；…])|\n+")
_CLAUSE_END = re.compile(
    r"(?<=[,;:，；：、])\s*|\s+(?=(?:but|although|though|whereas|while|except)\b)|(?=但是|可是|不过|但)"
)
_ENTRY_CLAUSE = re.compile(r"[,;，；]|\s(?:and|also|plus)\s|和|并且|而且|以及|还")
# Tokens that name one thing (a host, a path, a version, a number, a date), and single-letter names.
_IDENTIFIER = re.compile(r"\d|\w[./:@\\]\w")
_LETTER_NAME = re.compile(r"(?<![\w'])[A-HJ-Z](?![\w'])")


def _pieces(text: str, pattern: re.Pattern[str]) -> list[str]:
    return [p for p in pattern.split(text) if p and p.strip()]


def _covering(parts: Sequence[str], quote: str) -> list[str]:
    """The parts (sentences, clauses) that the quote overlaps, or all of them if it cannot be placed."""
    folded_parts = [fold(p) for p in parts]
    joined = " ".join(folded_parts)
    at = joined.find(fold(quote))
    if at < 0:
        return list(parts)
    end, offset, found = at + len(fold(quote)), 0, []
    for part, folded in zip(parts, folded_parts, strict=True):
        if offset <= end and at <= offset + len(folded):
            found.append(part)
        offset += len(folded) + 1
    return found


def sentences(text: str) -> list[str]:
    return _pieces(text, _SENTENCE_END)


def sentences_of(located: Located) -> tuple[list[str], list[str], str]:
    """(the sentences holding the quote, the clauses holding it, the sentence after)."""
    sentences = _pieces(located.text, _SENTENCE_END)
    held = _covering(sentences, located.quote)
    after = ""
    if held and held[-1] in sentences:
        nxt = sentences.index(held[-1]) + 1
        after = sentences[nxt] if nxt < len(sentences) else ""
    clauses: list[str] = []
    for sentence in held:
        clauses += _covering(_pieces(sentence, _CLAUSE_END), located.quote)
    return held, clauses or held, after


def _is_question(sentence: str) -> bool:
    s = lexicon.norm(sentence).strip()
    if lexicon.REQUEST.search(s):
        return False
    return s.endswith(("?", "？")) or bool(lexicon.QUESTION_START.match(s)) or bool(lexicon.QUESTION_CJK.search(s))


def _negated(text: str) -> bool:
    return bool(lexicon.NEGATION.search(lexicon.norm(text)))


def _polarity_differs(entry: str, sentences: Sequence[str]) -> bool:
    """Whether a part of the entry and the clause that says the same thing disagree on negation
    ("deploys on Fridays" from "I'd never deploy on Fridays"). An entry that restates a sentence
    word for word (its content words, negations included) says what it says: the parts of the
    entry are split more finely than clauses, and a negation early in a sentence would otherwise
    seem to reverse a later part of the same words."""
    said = set(lexicon.content_terms(entry, framing=False))
    if said and any(set(lexicon.content_terms(s, framing=False)) == said for s in sentences):
        return False
    clauses = [c for s in sentences for c in _pieces(s, _CLAUSE_END)] or list(sentences)
    for part in _ENTRY_CLAUSE.split(entry):
        terms = {t for t in lexicon.content_terms(part, framing=False) if not lexicon.NEGATION.fullmatch(t)}
        if not terms or not clauses:
            continue
        best = max(clauses, key=lambda c: len(_have(terms, c)))
        if _have(terms, best) and _negated(part) != _negated(best):
            return True
    return False


def _cue_reason(entry: str, located: Located) -> str:
    """Why the words around the quote do not let it stand for the entry, or ""."""
    sentences, clauses, after = sentences_of(located)
    said, near, entry_n = " ".join(sentences), " ".join(clauses), lexicon.norm(entry)
    q = repr(located.quote[:80])
    if lexicon.JOKE.search(lexicon.norm(said + " " + after)):
        return f"The person was joking around {q}; a joke is not a fact about them."
    if any(_is_question(s) for s in sentences):
        return f"{q} is part of a question the person asked, not something they said about themselves."
    if _polarity_differs(entry, sentences):
        return f"The sentence around {q} is negated (or the entry is and the sentence is not): it says the opposite."
    if lexicon.CONDITIONAL.search(lexicon.norm(said)) and not lexicon.CONDITIONAL.search(entry_n):
        return f"{q} sits in a hypothetical or conditional sentence: it is not a fact about the person."
    third = lexicon.THIRD_PARTY.search(lexicon.norm(near))
    if third and not lexicon.THIRD_PARTY.search(entry_n) and third.group(0).split()[-1] not in entry_n:
        return f"{q} is about someone else ({third.group(0)!r}), not the person."
    return ""


def _identifiers(text: str) -> set[str]:
    named = {t for t in lexicon.tokens(text) if not lexicon.is_cjk(t) and _IDENTIFIER.search(t)}
    return named | {m.casefold() for m in _LETTER_NAME.findall(text)}


def quote_reason(quote: str) -> str:
    """Why a quote is too thin to show anything, or ""."""
    if lexicon.is_acknowledgement(quote):
        return f"{quote[:80]!r} is an acknowledgement; it shows nothing about the person."
    if lexicon.substance(quote) < MIN_SUBSTANCE:
        return (
            f"The quote {quote[:80]!r} is too short to show anything "
            f"(fewer than {MIN_SUBSTANCE} words that say something)."
        )
    return ""


def _have(wanted: set[str], text: str) -> set[str]:
    """The wanted terms a text covers (a lone CJK character cut off by particles counts when the
    text contains it)."""
    found = wanted & lexicon.content_terms(text)
    low = lexicon.norm(text)
    return found | {t for t in wanted if len(t) == 1 and lexicon.is_cjk(t) and t in low}


def _stitched(entry: str, units: Sequence[str]) -> str:
    """Each part of the entry must be said by one quoted sentence, names and all: two true sentences
    about different things do not add up to a claim neither makes."""
    for clause in _ENTRY_CLAUSE.split(entry):
        wanted = lexicon.content_terms(clause, framing=False)
        if not wanted:
            continue
        names = identifiers(clause) | _identifiers(clause)
        best = max(units, key=lambda u: len(_have(wanted, u)))
        if len(_have(wanted, best)) / len(wanted) < MIN_COVERAGE or not names <= said_words(best):
            return (
                f"No quoted sentence says {clause.strip()!r}: the quotes are stitched from sentences about "
                "other things."
            )
    return ""


def coverage_reason(entry: str, located: Sequence[Located]) -> str:
    """Why the quoted sentences do not cover the entry's content, or ""."""
    wanted = lexicon.content_terms(entry, framing=False)
    if not wanted:
        return "The entry says nothing the quotes could support."
    for loc in located:
        if len(located) > 1 and not (lexicon.content_terms(loc.quote) & wanted):
            return f"The quote {loc.quote[:80]!r} shares nothing with the entry: quotes may not be stitched together."
    said = set(lexicon.tokens(" ".join(loc.text for loc in located)))
    missing_ids = sorted(i for i in _identifiers(entry) if i not in said)
    if missing_ids:
        return f"The entry names {', '.join(missing_ids)}, which the quoted sentences do not."
    units = [" ".join(sentences_of(loc)[0]) for loc in located]
    have = set().union(*(_have(wanted, u) for u in units))
    if len(have) / len(wanted) < MIN_COVERAGE:
        absent = ", ".join(sorted(wanted - have)[:6])
        return f"The quoted sentences do not say what the entry says (not covered: {absent})."
    return _stitched(entry, units)


def check(entry: str, located: Sequence[Located]) -> str:
    """Why the quotes do not support `entry`, or "" when they do. The reasons a person most needs
    come first: an acknowledgement, then what the words around the quote say, then coverage."""
    for loc in located:
        if lexicon.is_acknowledgement(loc.quote):
            return quote_reason(loc.quote)
    for loc in located:
        reason = _cue_reason(entry, loc)
        if reason:
            return reason
    reason = coverage_reason(entry, located)
    if reason:
        return reason
    return next((r for r in map(quote_reason, (loc.quote for loc in located)) if r), "")


def proves_it_ran(located: Sequence[Located]) -> bool:
    """Whether the quotes show a procedure ran and worked: tool output without an error, or the
    person saying it worked (not "it never worked")."""
    for loc in located:
        sentences, clauses, _ = sentences_of(loc)
        near = lexicon.norm(" ".join(clauses))
        if loc.role == "tool" and not lexicon.FAILURE.search(lexicon.norm(loc.text)):
            return True
        if loc.role == "user" and lexicon.SUCCESS.search(near) and not lexicon.NEGATION.search(near):
            return True
    return False
