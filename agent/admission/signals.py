"""What the words around a quote suggest about a learned entry: signals for the verifier and the person.

Code cannot tell what a sentence means: whether "I'd never deploy on Fridays" supports "deploys on
Fridays", whether "great, another YAML file" is sarcasm, whether "my wife loves Vim" is about the
person. So the cue words of the words around each quote (negation, conditionals, questions, other
people, jokes) and how much of the entry the quoted sentences mention become *signals*: plain
sentences handed to the verifier with the write and shown to the person, never holds on their own
while the verifier runs (agent/admission/verifier.py).

With the verifier off or unreachable, `fallback_reason` is the lexical fallback: a cue signal holds
the write; coverage and names never do (they measured wording, and held most correct facts).
docs/EVIDENCE.md publishes the fallback's recall and its bad saves.

Numbers, times, sizes and product names are compared after normalisation (24h = 24-hour, 6pm =
6 PM, 16G = 16 GB, Postgres = PostgreSQL).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from knowledge.verification import lexicon
from knowledge.verification.documents import Located
from knowledge.verification.sentences import CLAUSE_END, pieces, sentences_of

MIN_COVERAGE = 0.6

_ENTRY_CLAUSE = re.compile(r"[,;，；]|\s(?:and|also|plus)\s|和|并且|而且|以及|还")
# Tokens that name one thing (a host, a path, a version, a number, a date), and single-letter names.
_IDENTIFIER = re.compile(r"\d|\w[./:@\\]\w")
_LETTER_NAME = re.compile(r"(?<![\w'])[A-HJ-Z](?![\w'])")


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
    clauses = [c for s in sentences for c in pieces(s, CLAUSE_END)] or list(sentences)
    for part in _ENTRY_CLAUSE.split(entry):
        terms = {t for t in lexicon.content_terms(part, framing=False) if not lexicon.NEGATION.fullmatch(t)}
        if not terms or not clauses:
            continue
        best = max(clauses, key=lambda c: len(_have(terms, c)))
        if _have(terms, best) and _negated(part) != _negated(best):
            return True
    return False


def _have(wanted: set[str], text: str) -> set[str]:
    """The wanted terms a text covers (a lone CJK character cut off by particles counts when the
    text contains it)."""
    found = wanted & lexicon.content_terms(text)
    low = lexicon.norm(text)
    return found | {t for t in wanted if len(t) == 1 and lexicon.is_cjk(t) and t in low}


@dataclass(frozen=True)
class Signal:
    kind: str  # one of CUES, or "coverage" / "names"
    sentence: str  # what the person reads, and the verifier is told


# The kinds the lexical fallback holds on; coverage and names are only shown.
CUES = ("joke", "question", "negation", "conditional", "other_person")


def _cue_signal(entry: str, located: Located) -> Signal | None:
    """What the words around the quote suggest that changes what it says, if anything."""
    sentences, clauses, after = sentences_of(located)
    said, near, entry_n = " ".join(sentences), " ".join(clauses), lexicon.norm(entry)
    q = repr(located.quote[:80])
    if lexicon.JOKE.search(lexicon.norm(said + " " + after)):
        return Signal("joke", f"The person may have been joking around {q}.")
    if any(_is_question(s) for s in sentences):
        return Signal("question", f"{q} is part of a question the person asked.")
    if _polarity_differs(entry, sentences):
        return Signal("negation", f"The sentence around {q} is negated and the entry is not (or the other way round).")
    if lexicon.CONDITIONAL.search(lexicon.norm(said)) and not lexicon.CONDITIONAL.search(entry_n):
        return Signal("conditional", f"{q} sits in a hypothetical or conditional sentence.")
    third = lexicon.THIRD_PARTY.search(lexicon.norm(near))
    if third and not lexicon.THIRD_PARTY.search(entry_n) and third.group(0).split()[-1] not in entry_n:
        return Signal("other_person", f"{q} may be about someone else ({third.group(0)!r}), not the person.")
    return None


# Spellings of one value or name, folded to one form before numbers and names are compared.
_UNIT_FORMS = (
    (re.compile(r"\b(\d+(?:\.\d+)?)\s*-?\s*(?:hours?|hrs?|h)\b"), r"\1h"),
    (re.compile(r"\b(\d{1,2})(?::00)?\s*([ap])\.?\s?m\b\.?"), r"\1\2m"),
    (re.compile(r"\b(\d+(?:\.\d+)?)\s*-?\s*(?:gb|gib|g)\b"), r"\1gb"),
    (re.compile(r"\b(\d+(?:\.\d+)?)\s*-?\s*(?:mb|mib|m)\b"), r"\1mb"),
    (re.compile(r"\b(\d+(?:\.\d+)?)\s*-?\s*(?:tb|tib|t)\b"), r"\1tb"),
    (re.compile(r"\b(\d+(?:\.\d+)?)\s*-?\s*(?:minutes?|mins?)\b"), r"\1min"),
    (re.compile(r"\b(\d+)\s*-?\s*(?:spaces?)\b"), r"\1space"),
    (re.compile(r"\bv(?=\d)"), ""),
)
_ALIASES = {"postgres": "postgresql", "k8s": "kubernetes", "js": "javascript", "ts": "typescript", "py": "python"}


def normalised(text: str) -> str:
    """`text` with units, times, versions and common product names in one spelling each."""
    low = lexicon.norm(text)
    for pattern, form in _UNIT_FORMS:
        low = pattern.sub(form, low)
    return re.sub(r"[\w.]+", lambda m: _ALIASES.get(m.group(0), m.group(0)), low)


def _identifiers(text: str) -> set[str]:
    low = normalised(text)
    named = {t for t in lexicon.tokens(low) if not lexicon.is_cjk(t) and _IDENTIFIER.search(t)}
    return named | {m.casefold() for m in _LETTER_NAME.findall(text)}


def _surface(entry: str, stems: set[str]) -> list[str]:
    """The entry's own words whose terms are in `stems`: what a person reads, not word stems."""
    words = re.findall(r"[^\W_]+(?:[-'][^\W_]+)*", entry)
    named = [w for w in words if w.casefold().split("'")[0] not in lexicon.FRAMING]
    return list(dict.fromkeys(w for w in named if lexicon.content_terms(normalised(w), framing=False) & stems))


def _coverage_signals(entry: str, located: Sequence[Located]) -> list[Signal]:
    out = []
    said = set(lexicon.tokens(normalised(" ".join(loc.text for loc in located))))
    missing_ids = sorted(i for i in _identifiers(entry) if i not in said)
    if missing_ids:
        out.append(Signal("names", f"The entry names {', '.join(missing_ids)}, which the quoted sentences do not."))
    wanted = lexicon.content_terms(normalised(entry), framing=False)
    units = [normalised(" ".join(sentences_of(loc)[0])) for loc in located]
    have = set().union(*(_have(wanted, u) for u in units)) if units else set()
    if wanted and len(have) / len(wanted) < MIN_COVERAGE:
        words = ", ".join(repr(w) for w in _surface(entry, wanted - have)[:6])
        out.append(Signal("coverage", f"The quoted sentences do not use some of the entry's words ({words})."))
    return out


def read(entry: str, located: Sequence[Located]) -> list[Signal]:
    """Every signal the quotes' surroundings give about `entry`, cues first."""
    cues = [sig for sig in (_cue_signal(entry, loc) for loc in located) if sig is not None]
    return cues + _coverage_signals(entry, located)


def fallback_reason(found: Sequence[Signal]) -> str:
    """Why the lexical fallback holds a write (a cue signal), or "" to save it."""
    return next((sig.sentence for sig in found if sig.kind in CUES), "")


def acknowledgement(located: Sequence[Located]) -> str:
    """Why a quote that only acknowledges (ok, thanks, sounds good) shows nothing, or ""."""
    for loc in located:
        if lexicon.is_acknowledgement(loc.quote):
            return f"The quote {loc.quote[:80]!r} only acknowledges something; it shows nothing about the person."
    return ""


def shares_nothing(text: str, located: Sequence[Located]) -> bool:
    """Whether no quote shares a word with `text` (a skill's quotes about something else)."""
    wanted = lexicon.content_terms(text)
    return not any(lexicon.content_terms(loc.quote) & wanted for loc in located)


def proves_it_ran(located: Sequence[Located]) -> bool:
    """Whether the quotes show a procedure ran and worked: tool output without an error, or the
    person saying it worked in their own words (never inside something they pasted)."""
    for loc in located:
        _sentences, clauses, _ = sentences_of(loc)
        near = lexicon.norm(" ".join(clauses))
        if loc.role == "tool" and not lexicon.FAILURE.search(lexicon.norm(loc.text)):
            return True
        if loc.role == "user" and lexicon.SUCCESS.search(near) and not lexicon.NEGATION.search(near):
            return True
    return False
