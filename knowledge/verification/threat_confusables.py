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

__all__ = ["CONFUSABLES", "LOOK_ALIKES", "script"]


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


# The letters folded before the scan: Unicode's table with the look-alikes it lists as several
# letters or not at all added by hand.
LOOK_ALIKES: dict[str, str] = (
    CONFUSABLES
    | {
        # Cyrillic
        "а": "a", "в": "b", "с": "c", "ԁ": "d", "е": "e", "ё": "e", "һ": "h", "і": "i", "ї": "i", "ј": "j",
        "к": "k", "ӏ": "l", "м": "m", "н": "h", "о": "o", "р": "p", "ԛ": "q", "г": "r", "ѕ": "s", "т": "t",
        "ц": "u", "υ": "u", "ѵ": "v", "ԝ": "w", "х": "x", "у": "y", "з": "3", "ь": "b", "п": "n",
        "А": "A", "В": "B", "С": "C", "Е": "E", "Н": "H", "І": "I", "Ј": "J", "К": "K", "М": "M",
        "О": "O", "Р": "P", "Ѕ": "S", "Т": "T", "Х": "X", "У": "Y", "Ԁ": "D", "Ԍ": "G", "Ԛ": "Q", "Ԝ": "W",
        # Greek
        "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p",
        "τ": "t", "χ": "x", "γ": "y", "ω": "w", "ϲ": "c", "ϳ": "j",
        "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N",
        "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
        # Armenian, Latin extensions and IPA letters that pass for ASCII
        "օ": "o", "ս": "u", "ց": "g", "հ": "h", "ո": "n", "ɡ": "g", "ɑ": "a", "ı": "i", "ȷ": "j",
        "ʟ": "l", "ɪ": "i", "ᴀ": "a", "ᴄ": "c", "ᴅ": "d", "ᴇ": "e", "ɴ": "n", "ᴏ": "o", "ʀ": "r",
        "ꜱ": "s", "ᴛ": "t", "ᴜ": "u", "ᴠ": "v", "ᴡ": "w", "ʏ": "y", "ᴢ": "z", "ɾ": "r", "ɽ": "r", "ɼ": "r",
    }  # by hand: look-alikes the table lists as multi-letter or not at all, which take precedence
)  # fmt: skip
