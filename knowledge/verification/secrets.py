"""Secrets in a text a review wants to learn: found, named in plain words, and redacted.

A pasted Stripe key or "the wifi password is hunter2" must never reach MEMORY.md, USER.md or a
skill, where every future prompt would carry it. Three kinds of evidence, all in-process:

- detect-secrets' plugins, as its default settings build them: keys recognised by their shape
  (AWS, GitHub, Slack, Stripe, JWT, private keys, …), assignments in code (`password = "…"`) and
  quoted random-looking strings. Its plugins read one line at a time, so the text is cut into lines
  and each hit mapped back to its place in the whole text. Nothing is verified over the network
  and no files or baselines are involved.
- shapes detect-secrets 1.5.0 does not know (current OpenAI-style `sk-…` keys, Stripe test keys,
  GitHub fine-grained tokens, Google API keys, a URL's password without a user name) and whole
  private key blocks, which span lines.
- secrets said in a sentence, in English, German, Spanish and French
  (`knowledge/verification/secret_phrases.py`).

Each finding is the span of the secret's value only, so `redact` keeps the words around it:
"the wifi password is [redacted]".
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from detect_secrets.filters import heuristic
from detect_secrets.plugins.base import BasePlugin, RegexBasedDetector
from detect_secrets.plugins.high_entropy_strings import HexHighEntropyString, HighEntropyStringsPlugin
from detect_secrets.plugins.keyword import KeywordDetector
from detect_secrets.plugins.private_key import PrivateKeyDetector
from detect_secrets.settings import default_settings, get_plugins

from knowledge.verification.secret_phrases import REDACTED, find_phrases, is_placeholder

__all__ = ["REDACTED", "Finding", "find", "find_all", "redact", "redact_value"]


@dataclass(frozen=True)
class Finding:
    """A secret in a text: what it is, for a person to read, and where its value is."""

    what: str
    start: int
    end: int


# What a person is told, by detect-secrets plugin. A plugin a later version adds is named by its
# own `secret_type`.
_PLUGIN_WHAT: dict[str, str] = {
    "ArtifactoryDetector": "an Artifactory token",
    "AWSKeyDetector": "an AWS access key",
    "AzureStorageKeyDetector": "an Azure storage key",
    "BasicAuthDetector": "a password in a URL",
    "CloudantDetector": "a Cloudant password",
    "DiscordBotTokenDetector": "a Discord bot token",
    "GitHubTokenDetector": "a GitHub token",
    "GitLabTokenDetector": "a GitLab token",
    "Base64HighEntropyString": "a random-looking secret",
    "HexHighEntropyString": "a random-looking secret",
    "IbmCloudIamDetector": "an IBM Cloud key",
    "IbmCosHmacDetector": "an IBM Cloud key",
    "JwtTokenDetector": "a JSON Web Token",
    "MailchimpDetector": "a Mailchimp API key",
    "NpmDetector": "an npm token",
    "OpenAIDetector": "an OpenAI API key",
    "PrivateKeyDetector": "a private key",
    "PypiTokenDetector": "a PyPI token",
    "SendGridDetector": "a SendGrid API key",
    "SlackDetector": "a Slack token",
    "SoftlayerDetector": "a SoftLayer key",
    "SquareOAuthDetector": "a Square OAuth secret",
    "StripeDetector": "a Stripe API key",
    "TelegramBotTokenDetector": "a Telegram bot token",
    "TwilioKeyDetector": "a Twilio API key",
}
# A server's address is how one reaches it, not a credential: "deploys to 203.0.113.7" is a fact
# worth remembering. Every other default plugin runs.
_LEFT_OUT = frozenset({"IPPublicDetector"})
# Detectors that recognise a key by a word before it ("key", "password", "cloudant") rather than
# by the key's own prefix: "Restricted key rk_live_…" is a Stripe key, not an IBM Cloud one.
_WORD_ANCHORED = frozenset({"IbmCloudIamDetector", "IbmCosHmacDetector", "SoftlayerDetector", "CloudantDetector"})

# Shapes detect-secrets 1.5.0 does not know. Its OpenAI pattern only knows the legacy keys with
# "T3BlbkFJ" inside; its Stripe pattern only live keys.
_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "an OpenAI API key",
        re.compile(r"(?<![\w-])sk-(?:proj-|svcacct-|admin-|ant-(?:api\d\d-)?)?(?=[\w-]*\d)[\w-]{20,}"),
    ),
    ("a Stripe API key", re.compile(r"(?<![\w-])(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}")),
    ("a GitHub token", re.compile(r"(?<![\w-])github_pat_[A-Za-z0-9_]{22,}")),
    ("a Google API key", re.compile(r"(?<![\w-])AIza[0-9A-Za-z_-]{35}")),
    ("a Hugging Face token", re.compile(r"(?<![\w-])hf_[A-Za-z0-9]{30,}")),
    ("a Slack token", re.compile(r"(?<![\w-])xapp-\d-[A-Za-z0-9-]{20,}")),
)
# A URL's password: group 1. detect-secrets needs a user name before it; redis://:pw@host has none.
_URL_PASSWORD = re.compile(r"://[^\s:/?#@]*:([^\s:/?#@]+)@[\w.-]")
# A private key is a block of lines; its value runs from the BEGIN line to the END line (or to
# the end of the text when it was pasted cut short).
_KEY_BLOCK = re.compile(
    r"-----BEGIN (?P<kind>(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----.*?(?:-----END (?P=kind)-----|\Z)"
    r"|PuTTY-User-Key-File-\d+:.*?(?:Private-MAC:[^\n]*|\Z)",
    re.DOTALL,
)
# The characters a key is made of, to extend a detect-secrets match to the whole key.
_KEY_CHARS = re.compile(r"[A-Za-z0-9_\-+/=.]*")
# A quoted hexadecimal string after these words is a commit, a checksum or a digest.
_HASH_WORDS = re.compile(r"(?:commit|sha\d*|hash|revision|rev|checksum|digest|md5|etag)\W{0,4}$", re.IGNORECASE)

_plugins_lock = threading.Lock()
_plugins_cache: list[BasePlugin] = []


def _plugins() -> list[BasePlugin]:
    """detect-secrets' plugins as its default settings build them, built once per process."""
    if _plugins_cache:
        return _plugins_cache
    with _plugins_lock:
        if not _plugins_cache:
            # default_settings() swaps detect-secrets' global settings for the duration; the lock
            # keeps two threads from swapping at once.
            with default_settings():
                built = [plugin for plugin in get_plugins() if type(plugin).__name__ not in _LEFT_OUT]
            _plugins_cache.extend(built)
    return _plugins_cache


def _lines(text: str) -> Iterator[tuple[int, str]]:
    offset = 0
    for line in text.splitlines(keepends=True):
        yield offset, line.rstrip("\r\n")
        offset += len(line)


def _occurrences(line: str, value: str) -> Iterator[int]:
    index = line.find(value)
    while index >= 0:
        yield index
        index = line.find(value, index + 1)


def _keyword_what(line: str, start: int) -> str:
    """What `password = "…"` or `api_key: "…"` holds, by the last name written before the value."""
    before = line[:start].lower()
    names = {
        "a password": max(before.rfind(word) for word in ("pass", "pwd", "contrase")),
        "an API key": before.rfind("key"),
        "a secret": before.rfind("secret"),
    }
    best = max(names, key=lambda what: names[what])
    if names[best] < 0:
        return "a secret"
    if best == "an API key" and "api" not in before[max(names[best] - 5, 0) : names[best]]:
        return "a key"  # private_key, db_key, client_key
    return best


def _filtered(plugin: BasePlugin, value: str, line: str) -> bool:
    """detect-secrets' default heuristics: sequences, UUIDs, templates, `$VAR`, `get_key()`, `user_id = …`."""
    if (
        heuristic.is_sequential_string(value)
        or heuristic.is_potential_uuid(value)
        or heuristic.is_templated_secret(value)
        or heuristic.is_prefixed_with_dollar_sign(value)
        or heuristic.is_not_alphanumeric_string(value)
        or is_placeholder(value)
    ):
        return True
    # The shape detectors are specific enough; a line that also calls a function does not hide
    # the key written in it.
    if isinstance(plugin, RegexBasedDetector):
        return False
    return heuristic.is_indirect_reference(line) or heuristic.is_likely_id_string(value, line, plugin)


def _value_span(match: re.Match[str]) -> tuple[int, int]:
    """Where the key is in a detector's match: a capture group when it holds the value.

    Groups mean different things per detector: the password of `://user:pw@` and the 40 characters
    after `aws_secret…=` are the value; `(ghp|gho|…)_` and GitLab's optional `2f_` are pieces of it.
    """
    groups = [
        index
        for index in range(1, (match.re.groups or 0) + 1)
        if match.group(index) and match.start(index) > match.start()
    ]
    if groups:
        index = max(groups, key=lambda i: len(match.group(i)))
        if len(match.group(index)) >= 8 or match.end() - match.end(index) <= 1:
            return match.span(index)
    start, end = match.span()
    # Some patterns take the space or quote around the key ("(?:\\s|=|:|\"|^)AKC…").
    while start < end and not _KEY_CHARS.fullmatch(match.string[start]):
        start += 1
    while end > start and not _KEY_CHARS.fullmatch(match.string[end - 1]):
        end -= 1
    return start, end


def _random_enough(plugin: HighEntropyStringsPlugin, value: str) -> bool:
    """The plugin's own entropy limit; `analyze_string` yields every quoted string of its alphabet."""
    return plugin.calculate_shannon_entropy(value) > plugin.entropy_limit


def _regex_hits(plugin: RegexBasedDetector, line: str, values: set[str]) -> Iterator[tuple[int, int]]:
    """The spans of the values `analyze_string` accepted (it also validates, e.g. a JWT's JSON)."""
    for regex in plugin.denylist:
        for match in regex.finditer(line):
            items = [g for g in match.groups() if g] if regex.groups else [match.group()]
            if not values.intersection(items):
                continue
            start, end = _value_span(match)
            # A detector's pattern may stop inside the key: Stripe's after 24 characters, the
            # JWT one before the signature.
            extended = _KEY_CHARS.match(line, end)
            end = extended.end() if extended else end
            while end > match.end() and line[end - 1] == ".":
                end -= 1
            if end > start:
                yield start, end


def _plugin_hits(plugin: BasePlugin, line: str) -> Iterator[tuple[str, int, int]]:
    name = type(plugin).__name__
    what = _PLUGIN_WHAT.get(name) or f"a secret ({plugin.secret_type})"
    values = {value for value in plugin.analyze_string(line) if value and not _filtered(plugin, value, line)}
    if not values:
        return
    if isinstance(plugin, RegexBasedDetector):
        for start, end in _regex_hits(plugin, line, values):
            yield what, start, end
        return
    for value in values:
        if (
            isinstance(plugin, HighEntropyStringsPlugin)
            and plugin.calculate_shannon_entropy(value) <= plugin.entropy_limit
        ):
            continue
        for start in _occurrences(line, value):
            if isinstance(plugin, HexHighEntropyString) and _HASH_WORDS.search(line[: max(start - 1, 0)]):
                continue
            if isinstance(plugin, KeywordDetector):
                yield _keyword_what(line, start), start, start + len(value)
            else:
                yield what, start, start + len(value)


def _rank(plugin: BasePlugin) -> int:
    """Which check names a secret best when several see it: a fixed prefix (sk_live_, ghp_, AKIA)
    ranks 0; a detector anchored on a word like "key" or "password" ranks 1, with the sentences;
    assignments in code and random-looking strings rank 2."""
    if type(plugin).__name__ in _WORD_ANCHORED:
        return 1
    return 0 if isinstance(plugin, RegexBasedDetector) else 2


def _detect_secrets(text: str) -> Iterator[tuple[int, Finding]]:
    for offset, line in _lines(text):
        for plugin in _plugins():
            if isinstance(plugin, PrivateKeyDetector):
                continue  # blocks span lines: _own_shapes finds them whole
            rank = _rank(plugin)
            for what, start, end in _plugin_hits(plugin, line):
                yield rank, Finding(what, offset + start, offset + end)


def _own_shapes(text: str) -> Iterator[tuple[int, Finding]]:
    for what, pattern in _SHAPES:
        for match in pattern.finditer(text):
            yield 0, Finding(what, match.start(), match.end())
    for match in _URL_PASSWORD.finditer(text):
        if not is_placeholder(match.group(1)):
            yield 0, Finding("a password in a URL", *match.span(1))
    for match in _KEY_BLOCK.finditer(text):
        yield 0, Finding("a private key", match.start(), match.end())


def _left_by_redact(value: str) -> bool:
    """Nothing but "[redacted]" and punctuation: what `redact` left, so redacting twice changes nothing."""
    letters = re.sub(r"[^a-z0-9]", "", value.lower())
    return "[redacted" in value and letters == "redacted" * (len(letters) // len("redacted"))


def find_all(text: str) -> list[Finding]:
    """Every secret in `text`, in order, without overlaps (overlapping findings are joined)."""
    candidates = [*_detect_secrets(text), *_own_shapes(text)]
    candidates.extend((1, Finding(hit.what, hit.start, hit.end)) for hit in find_phrases(text))
    # "[redacted]" where a secret was is not a secret: redacting twice changes nothing.
    candidates = [(rank, f) for rank, f in candidates if not _left_by_redact(text[f.start : f.end])]
    candidates.sort(key=lambda item: (item[1].start, -item[1].end, item[0]))
    joined: list[tuple[int, Finding]] = []
    for rank, finding in candidates:
        if joined and finding.start < joined[-1][1].end:
            last_rank, last = joined[-1]
            # One secret seen by several checks: the union of their spans, named by the most
            # specific check ("a Stripe API key" rather than "a random-looking secret").
            what = finding.what if rank < last_rank else last.what
            joined[-1] = (min(rank, last_rank), Finding(what, last.start, max(last.end, finding.end)))
        else:
            joined.append((rank, finding))
    return [finding for _, finding in joined]


def find(text: str) -> Finding | None:
    """The first secret in `text`, or None."""
    found = find_all(text)
    return found[0] if found else None


def redact(text: str) -> str:
    """`text` with every secret's value replaced by "[redacted]"; the words around it are kept."""
    parts: list[str] = []
    position = 0
    for finding in find_all(text):
        parts.append(text[position : finding.start])
        parts.append(REDACTED)
        position = finding.end
    parts.append(text[position:])
    return "".join(parts)


def redact_value(value: Any) -> Any:
    """A tool call's arguments with every string redacted, through nested dicts, lists and tuples.

    Keys are names from the tool's schema and are kept; numbers, booleans and None pass unchanged.
    """
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {key: redact_value(item) for key, item in value.items()}
    if isinstance(value, list):
        return [redact_value(item) for item in value]
    if isinstance(value, tuple):
        return tuple(redact_value(item) for item in value)
    return value
