"""The keys of config.yaml, each declared once: its section, type, default, the values it allows
and the words a form shows for it.

Each section is a frozen dataclass (`MemorySettings.nudge_interval: int`), so the rest of the
code reads typed attributes (`config.memory.nudge_interval`) instead of strings. A section
checks its values when it is built: a wrong one raises ConfigError naming the key, whether it
came from the file, a form or a test. `SETTINGS` lists every key with its type, default, help
and choices, for the settings page and the system check. Plain Python: no Django.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, ClassVar, get_type_hints


class ConfigError(Exception):
    """A config.yaml value is wrong; the message names the key (`key`: "section.key", or "")."""

    def __init__(self, message: str, key: str = "") -> None:
        super().__init__(message)
        self.key = key


@dataclass(frozen=True)
class Rule:
    allowed: str  # what a person may write, in their words: "a whole number >= 0"
    check: Callable[[Any], bool]


NON_NEGATIVE = Rule("a whole number >= 0", lambda v: v >= 0)
POSITIVE = Rule("a whole number > 0", lambda v: v > 0)


def setting(
    default: Any,
    label: str,
    *,
    rule: Rule | None = None,
    choices: tuple[str, ...] = (),
    help: str = "",
    env: str = "",
    lenient: bool = False,
) -> Any:
    """One key's declaration. `choices`: the only strings allowed; `env`: an environment variable
    that overrides the file; `lenient`: a value the dashboard does not implement is a warning
    (the key then keeps its default), for keys Hermes Agent has more options for."""
    meta = {"label": label, "rule": rule, "choices": choices, "help": help, "env": env, "lenient": lenient}
    return field(default=default, metadata=meta)


@dataclass(frozen=True)
class Setting:
    """One key of config.yaml as a form or a check sees it."""

    section: str
    key: str
    type: type  # bool, int, float, str or tuple (a list of strings in the file)
    default: Any
    label: str
    help: str
    allowed: str  # "a whole number >= 0": the words of the error for a wrong value
    choices: tuple[str, ...]
    env: str
    lenient: bool
    check: Callable[[Any], bool]

    @property
    def name(self) -> str:
        return f"{self.section}.{self.key}"

    @property
    def kind(self) -> str:
        """How a form edits it: "bool", "text", "choice", "list" or "number"."""
        if self.choices:
            return "choice"
        return {bool: "bool", str: "text", tuple: "list"}.get(self.type, "number")

    @property
    def field_kind(self) -> str:
        """The form field that edits it: "bool", "int", "float", "text" or "list"."""
        return {bool: "bool", int: "int", float: "float", str: "text", tuple: "list"}[self.type]

    def coerce(self, value: Any) -> Any:
        """`value` as this key's type, or ConfigError naming the key and what it allows."""
        if "off" in self.choices:
            value = self._on_off(value)
        if self.type is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if self.type is tuple and isinstance(value, list):
            value = tuple(value)
        ok = isinstance(value, self.type) and not (self.type is int and isinstance(value, bool))
        if not ok or not self.check(value):
            raise ConfigError(f"config.yaml: {self.name} must be {self.allowed}, got {_shown(value)}", self.name)
        return value

    def _on_off(self, value: Any) -> Any:
        """An on/off-like choice written the ways people write it: YAML 1.1 reads a bare `off` or `no`
        as false, and "false" / "no" mean off too; true means the one other choice, when there is one."""
        if value is False or (isinstance(value, str) and value.strip().casefold() in OFF_WORDS):
            return "off"
        others = [c for c in self.choices if c != "off"]
        return others[0] if value is True and len(others) == 1 else value


OFF_WORDS = ("off", "false", "no")


def _shown(value: Any) -> str:
    return repr(list(value) if isinstance(value, tuple) else value)


_TYPE_WORDS = {bool: "true or false", str: "a string", tuple: "a list of skill names"}


class Section:
    """A section of config.yaml; subclasses are frozen dataclasses of `setting(...)` fields."""

    NAME: ClassVar[str]

    def __post_init__(self) -> None:
        for s in section_settings(type(self)):
            # Frozen: the checked (and converted: 1 -> 1.0, a list -> a tuple) value is set once, here.
            object.__setattr__(self, s.key, s.coerce(getattr(self, s.key)))


def _bool_or_choice(choices: tuple[str, ...]) -> Rule:
    return Rule(" or ".join(f'"{c}"' for c in choices), lambda v: v in choices)


@dataclass(frozen=True)
class ModelSettings(Section):
    NAME = "model"
    base_url: str = setting("", "Base URL of the OpenAI-compatible server", env="OPENAI_BASE_URL")
    api_key_env: str = setting("OPENAI_API_KEY", "Environment variable holding the API key")
    name: str = setting("", "Model name", env="HERMES_MODEL")
    context_window: int = setting(
        0, "Context window (tokens)", rule=NON_NEGATIVE, help="0: the model's known size, or 128,000"
    )
    timeout: float = setting(
        60.0, "Request timeout (seconds)", rule=Rule("a number of seconds between 0 and 3600", lambda v: 0 < v <= 3600)
    )
    max_retries: int = setting(
        2, "Retries of a failed model call", rule=Rule("a whole number from 0 to 10", lambda v: 0 <= v <= 10)
    )


@dataclass(frozen=True)
class MemorySettings(Section):
    NAME = "memory"
    memory_enabled: bool = setting(True, "Keep MEMORY.md (the agent's notes)")
    user_profile_enabled: bool = setting(True, "Keep USER.md (the user profile)")
    nudge_interval: int = setting(10, "Memory review every N user turns", rule=NON_NEGATIVE, help="0: off")
    flush_min_turns: int = setting(
        6, "Flush memory after at least N turns", rule=NON_NEGATIVE, help="0 disables the flush"
    )
    memory_char_limit: int = setting(2200, "MEMORY.md limit (characters)", rule=POSITIVE)
    user_char_limit: int = setting(1375, "USER.md limit (characters)", rule=POSITIVE)
    write_approval: bool = setting(False, "Hold review writes to memory for my approval")
    provider: str = setting(
        "", "External memory provider", choices=("", "session_recall", "mem0"), help="empty: none", lenient=True
    )
    # A provider's answer is waited for this long at the start of a turn (and at a session's end);
    # later, the turn goes on without it (docs/DECISIONS.md, record 25).
    provider_timeout: float = setting(
        3.0,
        "Seconds a memory provider may take before a turn goes on without it",
        rule=Rule("a number of seconds between 0 and 600", lambda v: 0 < v <= 600),
    )


@dataclass(frozen=True)
class SkillsSettings(Section):
    NAME = "skills"
    creation_nudge_interval: int = setting(10, "Skill review every N model calls", rule=NON_NEGATIVE, help="0: off")
    disabled: tuple[str, ...] = setting(
        (), "Skills switched off", rule=Rule("a list of skill names", lambda v: all(isinstance(x, str) for x in v))
    )
    write_approval: bool = setting(False, "Hold review writes to skills for my approval")


@dataclass(frozen=True)
class CompressionSettings(Section):
    NAME = "compression"
    enabled: bool = setting(True, "Compress long conversations")
    threshold: float = setting(
        0.5,
        "Compress at this share of the context window",
        rule=Rule("a number between 0 and 1", lambda v: 0 < v <= 1),
        help="between 0 and 1",
    )
    protect_first_n: int = setting(3, "Messages at the start never compressed", rule=NON_NEGATIVE)


@dataclass(frozen=True)
class ReviewSettings(Section):
    NAME = "review"
    max_iterations: int = setting(
        8, "Review iterations at most", rule=Rule("a whole number from 1 to 50", lambda v: 1 <= v <= 50)
    )
    model: str = setting("", "Review model", help="empty: the main model")


@dataclass(frozen=True)
class AgentSettings(Section):
    NAME = "agent"
    max_iterations: int = setting(60, "Model calls per turn at most", rule=POSITIVE)
    max_message_chars: int = setting(100_000, "Longest message (characters)", rule=POSITIVE)


@dataclass(frozen=True)
class ChatSettings(Section):
    NAME = "chat"
    # After a chat's first answer the model names it, unless the person already did.
    auto_title: bool = setting(True, "Name new chats after their first answer")


@dataclass(frozen=True)
class LearningSettings(Section):
    NAME = "learning"
    # "required": review and flush writes must quote the conversation; "off": written without quotes.
    evidence: str = setting("required", "Evidence for learned writes", choices=("off", "required"))
    # "model": a write that passes the evidence checks is read once more by the review model, which
    # must find it supported before it is saved; "off": the deterministic checks alone decide.
    verify: str = setting("model", "Second reading of learned writes", choices=("model", "off"))


@dataclass(frozen=True)
class EmbeddingsSettings(Section):
    """Recall by meaning (docs/BEHAVIOUR.md, Sessions and search): past messages are embedded by this model in
    the background and searched by meaning beside their words. Empty: search is by words only."""

    NAME = "embeddings"
    model: str = setting("", "Embedding model", help="empty: search by words only", env="HERMES_EMBEDDING_MODEL")
    base_url: str = setting("", "Base URL of the embedding server", help="empty: the chat model's server")
    api_key_env: str = setting("", "Environment variable holding its API key", help="empty: the chat model's key")


@dataclass(frozen=True)
class CuratorSettings(Section):
    """The skill curator (docs/BEHAVIOUR.md, Curator), with Hermes Agent's key names. It only ever
    proposes: its report waits in the inbox until the person approves an item."""

    NAME = "curator"
    enabled: bool = setting(True, "Propose archiving unused skills and merging overlapping ones")
    interval_hours: int = setting(24 * 7, "Hours between curator passes", rule=POSITIVE)
    min_idle_hours: float = setting(
        2.0,
        "Pass only after this many hours without a chat message",
        rule=Rule("a number of hours >= 0", lambda v: v >= 0),
    )
    stale_after_days: int = setting(30, "A skill unused this many days is stale", rule=POSITIVE)
    archive_after_days: int = setting(90, "Propose archiving a skill unused this many days", rule=POSITIVE)
    consolidate: bool = setting(True, "Propose merging skills that overlap")
    include_user_skills: bool = setting(
        False, "Curate skills I wrote or imported too", help="off: only skills the background review created"
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.archive_after_days < self.stale_after_days:
            raise ConfigError(
                "config.yaml: curator.archive_after_days must be at least curator.stale_after_days "
                f"({self.stale_after_days}), got {self.archive_after_days}",
                "curator.archive_after_days",
            )


SECTIONS: dict[str, type[Section]] = {
    cls.NAME: cls
    for cls in (
        ModelSettings,
        MemorySettings,
        SkillsSettings,
        CompressionSettings,
        ReviewSettings,
        AgentSettings,
        ChatSettings,
        LearningSettings,
        CuratorSettings,
        EmbeddingsSettings,
    )
}


def _setting(cls: type[Section], f: Any, hints: dict[str, Any]) -> Setting:
    meta = f.metadata
    typ = getattr(hints[f.name], "__origin__", hints[f.name])  # tuple[str, ...] -> tuple
    rule = meta["rule"] or (_bool_or_choice(meta["choices"]) if meta["choices"] else None)
    allowed = rule.allowed if rule else _TYPE_WORDS[typ]
    check = rule.check if rule else (lambda v: True)
    default = f.default if f.default is not MISSING else None
    return Setting(
        cls.NAME,
        f.name,
        typ,
        default,
        meta["label"],
        meta["help"],
        allowed,
        meta["choices"],
        meta["env"],
        meta["lenient"],
        check,
    )


_BY_SECTION: dict[type[Section], tuple[Setting, ...]] = {
    cls: tuple(_setting(cls, f, get_type_hints(cls)) for f in fields(cls))  # type: ignore[arg-type]
    for cls in SECTIONS.values()
}
SETTINGS: dict[str, Setting] = {s.name: s for group in _BY_SECTION.values() for s in group}


def section_settings(cls: type[Section]) -> tuple[Setting, ...]:
    return _BY_SECTION[cls]


def all_settings() -> Iterator[Setting]:
    """Every key, in the file's order of sections and keys."""
    yield from SETTINGS.values()


def lookup(dotted: str) -> Setting:
    """The key named "section.key", or ConfigError when the dashboard has no such setting."""
    if dotted not in SETTINGS:
        raise ConfigError(f"config.yaml: {dotted} is not a setting the dashboard can change", dotted)
    return SETTINGS[dotted]


def value_kind(section: str, key: str) -> str:
    """How a form edits this key: "bool", "text" or "number" (choices are text, lists numbers no form shows)."""
    kind = SETTINGS[f"{section}.{key}"].kind
    return {"choice": "text", "list": "number"}.get(kind, kind)


def defaults() -> dict[str, dict[str, Any]]:
    """Every key's default, as config.yaml holds it (lists, not tuples)."""
    return {
        name: {s.key: list(s.default) if isinstance(s.default, tuple) else s.default for s in section_settings(cls)}
        for name, cls in SECTIONS.items()
    }
