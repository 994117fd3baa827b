"""Letters from other scripts (and Latin letters) that pass for ASCII ones, for the threat scan's skeleton reading.

Read from Unicode's confusables table (UTS #39, confusables.txt) as the PyPI package
confusable-homoglyphs ships it (pinned in requirements.txt), once at import: every non-ASCII
letter, digit or symbol whose prototype is one ASCII letter once accents and overlays are taken
off ("ø" is "o" with a long solidus overlay, so it passes for "o"). The skeleton of UTS #39 maps
a string to a prototype; this keeps the single-letter part of it, which is what a disguised key
word is made of.

The package's script data also says which script a letter belongs to (`script`), which decides
whether a word is disguised: threat_normalize folds only mixed-script words and look-alike words
in Latin text.
"""

from __future__ import annotations

import functools
import unicodedata

from confusable_homoglyphs import categories
from confusable_homoglyphs.confusables import confusables_data

__all__ = ["CONFUSABLES", "script"]


def _prototype_letter(glyph: str) -> str:
    """The one ASCII letter `glyph` is drawn as once its marks are removed, or ""."""
    base = "".join(c for c in unicodedata.normalize("NFD", glyph) if not unicodedata.combining(c))
    return base if len(base) == 1 and base.isascii() and base.isalpha() else ""


def _usable(ch: str) -> bool:
    # Letters, digits and symbols can stand in a word; marks, spaces and controls cannot.
    return len(ch) == 1 and not ch.isascii() and unicodedata.category(ch)[0] in "LNS"


def _table() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}

    def add(ch: str, letter: str) -> None:
        if _usable(ch) and letter and letter not in found.setdefault(ch, []):
            found[ch].append(letter)

    for key, glyphs in confusables_data.items():
        if len(key) == 1 and key.isascii() and key.isalpha():
            for glyph in glyphs:  # the characters that look like this ASCII letter
                add(glyph["c"], key)
        elif len(key) == 1:
            for glyph in glyphs:  # what this character looks like
                add(key, _prototype_letter(glyph["c"]))
    return found


# The first letter listed is the reading; NFKC folds full-width and mathematical letters already.
CONFUSABLES: dict[str, str] = {ch: letters[0] for ch, letters in _table().items()}


@functools.lru_cache(maxsize=8192)
def script(ch: str) -> str:
    """The script a character belongs to ("LATIN", "CYRILLIC", "COMMON" …), from the package's data."""
    return str(categories.alias(ch))
