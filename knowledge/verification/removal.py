"""Did the person ask for this removal? The check behind a review's destructive actions.

A background review that deletes, disables or removes something destroys what the person had, so
it may do so on its own only when the person asked for it in the conversation: a quoted sentence
of theirs (found in what they typed, as for any write: knowledge/verification/evidence.py) that

- asks for a removal (delete, remove, forget, disable, get rid of, "don't need … anymore", …);
- is not negated ("don't delete it"), a question ("should I delete it?"; "can you delete it?" is a
  request), a hypothetical ("if it breaks, delete it"), a joke, or about someone else;
- names what is removed: at least REMOVAL_MIN_TERMS of its content terms (all of them when it has
  fewer), or MIN_COVERAGE of them.

Anything else is held for the person's approval (docs/EVIDENCE.md, Removals).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from knowledge.verification import lexicon
from knowledge.verification.documents import Located
from knowledge.verification.sentences import sentences_of

# The share of the subject's terms a sentence must name to count as asking for its removal.
MIN_COVERAGE = 0.6

REMOVAL_MIN_TERMS = 2

# Ways of asking for something to go. The ones that contain a negation ("don't need … anymore")
# are asks in themselves, so they are taken out before the sentence is checked for negation.
_NEGATED_ASKS = (
    r"(?:do not|don't|dont|no longer|not) (?:need|want|use)\w*(?: \w+){0,6}? (?:any ?more|now)",
    r"no longer (?:need|want|use)\w*",
    r"not (?:needed|wanted|used|useful) any ?more",
    "不需要|不要了|不用了|用不上|不再需要",
)
REMOVAL = re.compile(
    r"(?<![\w'])(?:delete|deleting|remove|removing|erase|forget|drop|discard|scrap|purge|wipe|disable|deactivate|"
    r"unlearn|retire|trash|get rid of|throw (?:away|out)|turn off|switch off|stop using|take out|clear out)(?![\w'])"
    r"|" + "|".join(_NEGATED_ASKS) + "|删除|删掉|删了|删去|去掉|移除|清除|忘掉|忘记|忘了|禁用|停用|关掉"
)
_NEGATED_ASK = re.compile("|".join(_NEGATED_ASKS))
_FRAMING = frozenset(lexicon.content_terms("delete remove forget disable skill skills entry note memory file"))


_CLAUSE = re.compile(r"[,;:，；：、]|\s(?:so|and|but|then)\s|所以|但是|然后")


def _negated(sentence: str) -> bool:
    """Whether every clause that asks for a removal is negated ("I don't live there anymore, so
    remove it" asks; "don't remove it" does not)."""
    asks = [c for c in _CLAUSE.split(sentence) if REMOVAL.search(c)]
    return all(lexicon.NEGATION.search(_NEGATED_ASK.sub(" ", c)) for c in asks)


def _question(said: str) -> bool:
    """A question ("should I delete it?"), not a request put as one ("can you delete it?")."""
    if lexicon.REQUEST.search(said):
        return False
    asked = said.endswith(("?", "？")) or bool(lexicon.QUESTION_START.match(said))
    return asked or bool(lexicon.QUESTION_CJK.search(said))


def _cue_reason(sentence: str, quote: str) -> str:
    said, q = lexicon.norm(sentence), repr(quote[:80])
    if not REMOVAL.search(said):
        return f"{q} does not ask for it to be removed."
    if lexicon.JOKE.search(said):
        return f"The person was joking around {q}."
    if _question(said.strip()):
        return f"{q} is part of a question, not a request."
    if _negated(said):
        return f"The sentence around {q} is negated: it asks for the opposite."
    if lexicon.CONDITIONAL.search(said):
        return f"{q} sits in a hypothetical or conditional sentence: it asks for nothing now."
    if lexicon.THIRD_PARTY.search(said):
        return f"{q} is about someone else, not a request of the person's."
    return ""


def _names(subject: str, sentence: str) -> bool:
    wanted = lexicon.content_terms(subject, framing=False) - _FRAMING
    if not wanted:
        return False
    have = wanted & lexicon.content_terms(sentence)
    return len(have) >= min(REMOVAL_MIN_TERMS, len(wanted)) or len(have) / len(wanted) >= MIN_COVERAGE


def check(subject: str, located: Sequence[Located]) -> str:
    """Why the quotes do not show the person asking to remove `subject` (an entry's text, a skill's
    name and file), or "" when one quoted sentence does."""
    if not located:
        return "No quote shows the person asking for it."
    reasons: list[str] = []
    for loc in located:
        if loc.role != "user":
            reasons.append(f"{loc.quote[:80]!r} is not something the person said.")
            continue
        sentence = " ".join(sentences_of(loc)[0]) or loc.quote
        reason = _cue_reason(sentence, loc.quote)
        if not reason and not _names(subject, sentence):
            reason = f"{loc.quote[:80]!r} does not say which one: it does not name {subject[:80]!r}."
        if not reason:
            return ""
        reasons.append(reason)
    return reasons[0]
