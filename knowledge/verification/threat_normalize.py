"""What the threat scan looks at: hidden characters, and the readings an obfuscated note hides behind.

A memory entry reaches the model as code points, but the curator reads glyphs. Anything that
makes those two differ is either refused outright (hidden characters, see `first_hidden`) or
undone before the patterns run (`readings`):

- NFKC folds full-width and other compatibility letters ("ｉｇｎｏｒｅ" -> "ignore");
- confusable letters from other scripts are folded onto the Latin letter they look like, in the
  spirit of the Unicode TR39 skeleton ("ignоre" with a Cyrillic о -> "ignore"), and digits used
  as letters inside a word are read as letters ("1gn0re" -> "ignore");
- letters spread out with spaces, dots or hyphens are joined ("i g n o r e", "ig-no-re");
- base64, hex and percent-encoded runs are decoded and scanned as text of their own
  (knowledge/verification/threat_decode.py).

Every reading is bounded (MAX_SCAN_CHARS, a few decoded runs) so a write stays cheap, and a
reading whose trigger is absent (no non-ASCII letter, no digit beside a letter, no hidden
character) costs one C-speed check, not a pass of its own.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from knowledge.verification.threat_confusables import CONFUSABLES as GENERATED_CONFUSABLES
from knowledge.verification.threat_confusables import LOOK_ALIKES as _CONFUSABLE_LETTERS
from knowledge.verification.threat_confusables import script
from knowledge.verification.threat_decode import decoded_runs

MAX_SCAN_CHARS = 65_536

# Fillers that render as blank space yet are letters or marks, so category checks miss them.
_FILLERS = frozenset("\u115f\u1160\u3164\uffa0\u2800\u180e\u034f\u17b4\u17b5\u2061")
_VS_BASIC = range(0xFE00, 0xFE10)  # variation selectors 1-16
_VS_IDEOGRAPHIC = range(0xE0100, 0xE01F0)  # variation selectors 17-256
_TAGS = range(0xE0000, 0xE0080)
_BLACK_FLAG = "\U0001f3f4"  # tag sequences after it are subdivision flags (England, Scotland, Wales)
_FLAG_TAGS = re.compile("\U0001f3f4[\U000e0061-\U000e007a\U000e0030-\U000e0039]{2,6}\U000e007f")


def _marks() -> frozenset[int]:
    """Combining marks (accents written as separate code points), dropped for the unaccented reading."""
    return frozenset(cp for cp in range(0x20000) if unicodedata.category(chr(cp)) == "Mn")


def _hidden_code_points() -> frozenset[int]:
    """Every code point `is_hidden` refuses, listed once at import (format characters live below
    U+20000 and in plane 14), so the scan can find them with one C-speed pass instead of a Python loop."""
    found = {ord(ch) for ch in _FILLERS} | set(_TAGS) | set(_VS_BASIC) | set(_VS_IDEOGRAPHIC)
    for cp in (*range(0x20000), *range(0xE0000, 0xE1000)):
        if unicodedata.category(chr(cp)) == "Cf":
            found.add(cp)
    return frozenset(found)


_HIDDEN = _hidden_code_points()


def _as_class(code_points: frozenset[int]) -> str:
    """A regex class of ranges (a class of single code points is many times slower to search)."""
    ranges: list[list[int]] = []
    for cp in sorted(code_points):
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp])
    return "[" + "".join(re.escape(chr(a)) + (f"-{re.escape(chr(b))}" if b > a else "") for a, b in ranges) + "]"


def _fast_class(code_points: frozenset[int], suffix: str = "") -> str:
    """`_as_class`, split so that the engine looks a BMP character up in one table: a class
    holding code points beyond U+FFFF is otherwise a list of ranges tried one by one at every
    character (20 times slower on 64 KiB). The astral part is tried only at astral characters."""
    bmp = frozenset(cp for cp in code_points if cp < 0x10000)
    parts = [_as_class(bmp) + suffix] if bmp else []
    if code_points - bmp:
        parts.append("(?=[\U00010000-\U0010ffff])" + _as_class(code_points - bmp) + suffix)
    return "|".join(parts)


_HIDDEN_RX = re.compile(_fast_class(_HIDDEN))
# Above this many distinct hidden characters in one text the rest are removed by one translate.
_FEW_HIDDEN = 16
_HIDDEN_TABLE: dict[str, dict[int, str | None]] = {r: dict.fromkeys(_HIDDEN, r or None) for r in ("", " ")}


def _replace_hidden(text: str, repl: str) -> str:
    """Every hidden code point replaced by `repl`. A text holds few distinct ones, however many
    times each: find one, replace all of it (str.replace, in C), look again; a regex substitution
    per occurrence (32,768 of them in 64 KiB) costs a Python object each."""
    for _ in range(_FEW_HIDDEN):
        m = _HIDDEN_RX.search(text)
        if m is None:
            return text
        text = text.replace(m.group(0), repl)
    return text.translate(_HIDDEN_TABLE[repl]) if _HIDDEN_RX.search(text) else text


def is_hidden(ch: str) -> bool:
    """A code point that draws nothing (or nothing a reader can tell apart) yet reaches the model."""
    return ord(ch) in _HIDDEN


def char_label(ch: str) -> str:
    """`U+E0041 (TAG LATIN CAPITAL LETTER A)` — how a refusal or a curation page names it."""
    name = unicodedata.name(ch, "")
    return f"U+{ord(ch):04X}" + (f" ({name})" if name else "")


# Letter-like symbols that are emoji with U+FE0F ("ℹ️", "Ⓜ️"), and the keycap sequences "1️⃣", "#️⃣".
_EMOJI_LETTERS = frozenset("\u2139\u24c2")
_KEYCAP_BASES = frozenset("0123456789#*")
_KEYCAP = "\u20e3"


def _allowed_selector(prev: str, ch: str, following: str = "") -> bool:
    """Emoji and ideographic variation sequences are how people write, not hiding.

    One selector may follow a base character: U+FE0E/U+FE0F after a non-ASCII symbol (emoji
    presentation, "⚠️", "ℹ️") or in a keycap ("1️⃣"), U+E0100.. after a CJK ideograph. A run of
    selectors, or one after a Latin letter, carries data nobody sees ("emoji smuggling") and is refused.
    """
    cp = ord(ch)
    if cp in (0xFE0E, 0xFE0F) and prev in _KEYCAP_BASES and following == _KEYCAP:
        return True
    if not prev or is_hidden(prev) or prev.isascii():
        return False
    if cp in (0xFE0E, 0xFE0F):
        return not prev.isalpha() or prev in _EMOJI_LETTERS
    if cp in _VS_IDEOGRAPHIC:
        return unicodedata.name(prev, "").startswith("CJK")
    return False


def first_hidden(text: str) -> str | None:
    """The first hidden code point that is not part of an ordinary emoji or ideograph sequence.

    Only the hidden code points are visited (found by one regex pass), so a long text costs
    one linear scan however many of them it holds.
    """
    flagged: set[int] = set()
    if _BLACK_FLAG in text:
        for m in _FLAG_TAGS.finditer(text):
            flagged.update(range(m.start(), m.end()))
    for m in _HIDDEN_RX.finditer(text):
        i = m.start()
        if i in flagged:
            continue
        ch = text[i]
        cp = ord(ch)
        if (cp in _VS_BASIC or cp in _VS_IDEOGRAPHIC) and _allowed_selector(
            text[i - 1] if i else "", ch, text[i + 1 : i + 2]
        ):
            continue
        return ch
    return None


def strip_hidden(text: str) -> str:
    # A regex with a class of ranges runs in C; str.translate looks up every non-ASCII character.
    return _replace_hidden(text, "") if _HIDDEN_RX.search(text) else text


_WHITESPACE = re.compile(r"\s+")


def base(text: str, hidden_as: str = "") -> str:
    """NFKC, hidden characters deleted (so "ig\\u200bnore" cannot split a word), spaces collapsed.

    With `hidden_as=" "` they become spaces instead, for marks used in place of spaces.
    """
    text = text[:MAX_SCAN_CHARS]
    kept = _replace_hidden(text, hidden_as) if _HIDDEN_RX.search(text) else text
    return " ".join(unicodedata.normalize("NFKC", kept).split())


# -- confusables (a small TR39-style table: the letters that pass for Latin ones) ---------------

_CONFUSABLES = str.maketrans(_CONFUSABLE_LETTERS)
# A stroke passes for a lower-case l and for a capital I alike ("aӏӏ", "ӏgnore"): the second reading.
_OTHER_STROKE = str.maketrans(
    {ch: ("i" if letter in "lL" else "l") for ch, letter in _CONFUSABLE_LETTERS.items() if letter in "lLI"}
)
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s", "!": "i"})
# A word holding both a letter and a digit or symbol: the lookaheads stop at the word's first
# ones, and words start only after a non-word character, so each word is read a bounded number
# of times (linear time) and only mixed words reach the Python-level check.
_MIXED_WORD = re.compile(r"(?<![\w@$!])(?=[\w@$!]*?[^\W\d_])(?=[\w@$!]*?[\d@$!])[\w@$!]+")


@functools.lru_cache(maxsize=4096)
def _deleet_word(word: str) -> str:
    # Only words that mix letters with digits or symbols: "1gn0re" is a disguise, "2024" is a year.
    letters = sum(map(str.isalpha, word))
    if letters and letters < len(word) and letters >= len(word) // 3:
        return word.translate(_LEET)
    return word


def _deleet(match: re.Match[str]) -> str:
    return _deleet_word(match.group(0))


_CONFUSABLE_RX = re.compile(_fast_class(frozenset(_CONFUSABLES)))
_STROKE_RX = re.compile(_fast_class(frozenset(_OTHER_STROKE)))
_NOT_ASCII_LETTER = re.compile(r"[^A-Za-z]+")
_WORD = re.compile(r"\w+")
# Scripts a Latin word may be written beside without being a disguise ("Schrödinger's", "3rd").
_NEUTRAL_SCRIPTS = frozenset({"COMMON", "INHERITED", "LATIN"})


def _latin_text(text: str) -> bool:
    """Mostly ASCII letters: a look-alike letter in it is a disguise, not the language of the text."""
    ascii_letters = len(_NOT_ASCII_LETTER.sub("", text))
    return ascii_letters >= len(text) - len(text.encode("ascii", "ignore"))


@functools.lru_cache(maxsize=8192)
def _disguised_word(word: str) -> bool:
    """A word that mixes Latin letters with another script's ("ignоre"), or one made only of
    look-alike letters: the words a disguise is written in. Ordinary Greek, Cyrillic or CJK
    words hold letters that Unicode's table gives no Latin look-alike for, and stay as they are."""
    scripts = {script(ch) for ch in word if ch.isalpha()}
    if "LATIN" in scripts and scripts - _NEUTRAL_SCRIPTS:
        return True
    return all(ch in GENERATED_CONFUSABLES for ch in word if ch.isalpha() and not ch.isascii())


def _fold_word(match: re.Match[str]) -> str:
    word = match.group(0)
    return word.translate(_CONFUSABLES) if not word.isascii() and _disguised_word(word) else word


def fold_confusables(text: str, *, strokes: bool = False) -> str:
    """Confusable letters folded onto the letters they pass for (none in ASCII text).

    In text written mostly in ASCII letters every look-alike is folded, with one str.translate
    (a dictionary look-up per character); in text written in another script only the disguised
    words are, so an ordinary Greek or Russian note reads as itself. `strokes` reads the letters
    that pass for both "l" and "I" the other way (the second reading of "ӏgnore")."""
    if text.isascii() or not _CONFUSABLE_RX.search(text):
        return text
    folded = text.translate(_CONFUSABLES) if _latin_text(text) else _WORD.sub(_fold_word, text)
    return folded if not strokes else text.translate(_OTHER_STROKE).translate(_CONFUSABLES)


def has_strokes(text: str) -> bool:
    """Whether `text` holds a look-alike that passes for both "l" and "I" (a second reading is due)."""
    return not text.isascii() and _STROKE_RX.search(text) is not None


# A letter beside a digit or symbol: without one no word mixes them, and the word pass is skipped.
# (It starts with a class, so the engine skips to digits and symbols.)
_MIXED_TRIGGER = re.compile(r"[\d@$!](?:(?<=[^\W\d_][\d@$!])|(?=[^\W\d_]))")


def skeleton(text: str, *, strokes: bool = False) -> str:
    """Confusable letters folded to Latin, digits-as-letters read as letters; lower-cased."""
    folded = fold_confusables(text, strokes=strokes)
    if _MIXED_TRIGGER.search(folded):
        folded = _MIXED_WORD.sub(_deleet, folded)
    return folded.lower()


# -- spread-out letters ---------------------------------------------------------------------------

# A run of single characters kept apart by single spaces ("i g n o r e", "h t t p s : / /"), or
# single letters kept apart by a punctuation separator ("i.g.n.o.r.e", "i_g_n_o_r_e").
# Two patterns rather than one alternation: each then starts with a class the engine can skip to.
# Both start with a character the engine can skip to (a space; a separator), not a look-behind
# tried at every position: a spaced run is matched with the space before it (a run opening the
# text is matched on its own), a marked run from its first separator (its first letter before it).
_SPREAD_SPACED = re.compile(r" \S (?:\S ){0,4096}\S(?!\S)")
_SPREAD_SPACED_AT_START = re.compile(r"\S (?:\S ){0,4096}\S(?!\S)")
_MARK = r"[._*·•\-/|+~]"
_SPREAD_MARKED = re.compile(rf"{_MARK}(?<=\w{_MARK})(?<!\w\w{_MARK})(?:\w{_MARK}){{2,4095}}\w(?!\w)")
# Deleted with str.translate: for ASCII text it works from a table of 128 entries, in C.
_SEPARATORS = dict.fromkeys(map(ord, " ._*·•-/|+~"))
_HYPHENATED = re.compile(r"(?<=\S)[\-·•~](?=\S)")
_HYPHEN_CHARS = re.compile(r"[\-·•~]")


def join_spread(text: str, runs: list[str] | None = None) -> str:
    """Spread-out letters joined, soft-hyphenated words closed up; words elsewhere kept apart.
    The spread runs found on the way are added to `runs` when given."""

    def spaced(m: re.Match[str]) -> str:
        run = m.group(0)
        lead = " " if run[0] == " " else ""
        if runs is not None:
            runs.append(run[len(lead) :])
        return lead + run.replace(" ", "")

    def marked(m: re.Match[str]) -> str:
        if runs is not None:
            runs.append(m.string[m.start() - 1] + m.group(0))
        return m.group(0).translate(_SEPARATORS)

    opening = _SPREAD_SPACED_AT_START.match(text) if text[1:2] == " " else None
    if opening is not None:
        text = spaced(opening) + text[opening.end() :]
    joined = _SPREAD_MARKED.sub(marked, _SPREAD_SPACED.sub(spaced, text))
    return _HYPHENATED.sub("", joined) if _HYPHEN_CHARS.search(joined) else joined


_NOT_LETTER = re.compile(r"[\W\d_]+")


def compact(text: str) -> str:
    """Letters only, for phrases spelled out letter by letter with no word gaps at all."""
    return _NOT_LETTER.sub("", text.lower())


_TAG_CHARS = re.compile("[\U000e0020-\U000e007e]+")
_TAG_TO_ASCII = {cp: cp - 0xE0000 for cp in range(0xE0020, 0xE007F)}


def tag_text(text: str) -> str:
    """ASCII spelled in TAG characters ("ASCII smuggling"), so a refusal can say what it hid."""
    return "".join(_TAG_CHARS.findall(text)).translate(_TAG_TO_ASCII)


_OTHER_WHITESPACE = re.compile(r"[^\S ]+")


def _collapse(text: str) -> str:
    if "  " not in text and text[:1] != " " and text[-1:] != " ":
        return text  # already single-spaced (the usual case): no 64 KiB split and join
    return " ".join(text.split())


def _sources(text: str, has_hidden: bool) -> list[str]:
    """The texts the readings are made from; only those that differ from the plain one are kept.
    NFKC is applied once for the first two."""
    text = text[:MAX_SCAN_CHARS]
    nfkc = unicodedata.normalize("NFKC", _replace_hidden(text, "") if has_hidden else text)
    first = " ".join(nfkc.split())
    sources = [first]
    # Keeps runs of spaces, the word gaps of "i g n o r e  a l l".
    unspaced = _OTHER_WHITESPACE.sub(" ", nfkc).strip()
    if unspaced != first:
        sources.append(unspaced)
    if has_hidden:
        sources.append(base(text, hidden_as=" "))  # marks used in place of spaces
        hidden = tag_text(text)
        if hidden:
            sources.append(hidden)
    sources.extend(decoded_runs(first))
    return sources


_MARKS_RX = re.compile(_fast_class(_marks() - _HIDDEN))
# Separators between letters that join words into one token ("ignore_previous", "IGNORE.ALL").
# It starts with the separator (checked to follow a letter), so the engine skips to separators.
_WORD_JOINERS = re.compile(r"[_.\-/+~*](?<=[^\W\d_][_.\-/+~*])[_.\-/+~*]*(?=[^\W\d_])")
_PLUS_AS_SPACE = re.compile(r"\+(?<=\S\+)(?=\S)")  # "send+the+data", as in a query string


def unaccented(text: str) -> str:
    """Accents and combining marks removed ("prévious", "pre\u0301vious" -> "previous")."""
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFD", text)
    if not _MARKS_RX.search(decomposed):
        return text
    return unicodedata.normalize("NFC", _MARKS_RX.sub("", decomposed))


def unjoined(text: str) -> str:
    """Words glued by separators read as words ("ignore_previous_instructions" -> "ignore previous instructions")."""
    return _PLUS_AS_SPACE.sub(" ", _WORD_JOINERS.sub(" ", text))


def readings(text: str) -> tuple[list[str], list[str]]:
    """(lower-cased texts to match the patterns on, letter-only blobs for the compact patterns).

    The first text is the plain reading: NFKC, hidden characters removed, spaces collapsed.
    """
    texts, blobs, _hidden = read(text)
    return texts, blobs


def read(text: str) -> tuple[list[str], list[str], bool]:
    """`readings`, and whether the text holds any hidden code point (looked for once: without
    one, `first_hidden` has nothing to find)."""
    text = text[:MAX_SCAN_CHARS]
    has_hidden = _HIDDEN_RX.search(text) is not None
    texts: list[str] = []
    seen: set[str] = set()
    blobs: list[str] = []
    for source in _sources(text, has_hidden):
        folded = skeleton(source)
        plain = unaccented(folded)
        runs: list[str] = []
        variants = [source.lower(), folded, join_spread(folded, runs), plain, unjoined(plain)]
        if has_strokes(source):
            variants.append(unaccented(skeleton(source, strokes=True)))
        for variant in variants:
            variant = _collapse(variant)
            if variant not in seen:
                seen.add(variant)
                texts.append(variant)
        blobs.extend(compact(run) for run in runs if len(run) > 12)
    return texts, blobs, has_hidden
