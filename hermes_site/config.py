"""Typed loader for HERMES_HOME/config.yaml (docs/BEHAVIOUR.md, Configuration).

This is the one place configuration is read. It is plain Python (no Django) so the agent
loop, the terminal chat and the Django settings all share it. Validation errors name the
offending key so a person can fix their file without reading a traceback.
"""

from __future__ import annotations

import copy
import fcntl
import logging
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from hermes_site import yaml_edit

log = logging.getLogger(__name__)

DEFAULT_CONTEXT_WINDOW = 128_000

DEFAULTS: dict[str, dict[str, Any]] = {
    "model": {
        "base_url": "",
        "api_key_env": "OPENAI_API_KEY",
        "name": "",
        "context_window": 0,
        "timeout": 60.0,
        "max_retries": 2,
    },
    "memory": {
        "memory_enabled": True,
        "user_profile_enabled": True,
        "nudge_interval": 10,
        "flush_min_turns": 6,
        "memory_char_limit": 2200,
        "user_char_limit": 1375,
        "write_approval": False,
        "provider": "",
    },
    "skills": {"creation_nudge_interval": 10, "disabled": [], "write_approval": False},
    "compression": {"enabled": True, "threshold": 0.5, "protect_first_n": 3},
    "review": {"max_iterations": 8, "model": ""},
    "agent": {"max_iterations": 60, "max_message_chars": 100_000},
    # auto_title: after a chat's first answer the model names it, unless the person already did.
    "chat": {"auto_title": True},
    # "required": review and flush writes must quote the conversation; "off": Hermes Agent's way, no quotes.
    "learning": {"evidence": "required"},
}

# Per-key validators: (type, check, human description of what is allowed).
_NonNegInt = (int, lambda v: v >= 0, "a whole number >= 0")
_PosInt = (int, lambda v: v > 0, "a whole number > 0")
_Bool = (bool, lambda v: True, "true or false")
_Str = (str, lambda v: True, "a string")
_SCHEMA: dict[str, dict[str, tuple[type, Any, str]]] = {
    "model": {
        "base_url": _Str,
        "api_key_env": _Str,
        "name": _Str,
        "context_window": _NonNegInt,
        "timeout": (float, lambda v: 0 < v <= 3600, "a number of seconds between 0 and 3600"),
        "max_retries": (int, lambda v: 0 <= v <= 10, "a whole number from 0 to 10"),
    },
    "memory": {
        "memory_enabled": _Bool,
        "user_profile_enabled": _Bool,
        "nudge_interval": _NonNegInt,
        "flush_min_turns": _NonNegInt,
        "memory_char_limit": _PosInt,
        "user_char_limit": _PosInt,
        "write_approval": _Bool,
        "provider": (str, lambda v: v in ("", "session_recall"), '"" or "session_recall"'),
    },
    "skills": {
        "creation_nudge_interval": _NonNegInt,
        "disabled": (list, lambda v: all(isinstance(x, str) for x in v), "a list of skill names"),
        "write_approval": _Bool,
    },
    "compression": {
        "enabled": _Bool,
        "threshold": (float, lambda v: 0 < v <= 1, "a number between 0 and 1"),
        "protect_first_n": _NonNegInt,
    },
    "review": {"max_iterations": (int, lambda v: 1 <= v <= 50, "a whole number from 1 to 50"), "model": _Str},
    "agent": {"max_iterations": _PosInt, "max_message_chars": _PosInt},
    "chat": {"auto_title": _Bool},
    "learning": {"evidence": (str, lambda v: v in ("required", "off"), '"required" or "off"')},
}


def value_kind(section: str, key: str) -> str:
    """How a form edits this key, from the one schema above: "bool", "text" or "number"."""
    typ = _SCHEMA[section][key][0]
    return "bool" if typ is bool else "text" if typ is str else "number"


class ConfigError(Exception):
    """A config.yaml value is wrong; the message names the key."""


@dataclass(frozen=True)
class Config:
    home: Path
    data: dict[str, dict[str, Any]]
    warnings: list[str] = field(default_factory=list)

    def get(self, section: str, key: str) -> Any:
        return self.data[section][key]

    @property
    def model_name(self) -> str:
        return os.environ.get("HERMES_MODEL") or str(self.data["model"]["name"])

    @property
    def base_url(self) -> str:
        return os.environ.get("OPENAI_BASE_URL") or str(self.data["model"]["base_url"])

    @property
    def api_key(self) -> str:
        env_name = str(self.data["model"]["api_key_env"]) or "OPENAI_API_KEY"
        return os.environ.get(env_name) or os.environ.get("OPENAI_API_KEY", "")

    @property
    def review_model(self) -> str:
        return str(self.data["review"]["model"]) or self.model_name

    @property
    def context_window(self) -> int:
        configured = int(self.data["model"]["context_window"])
        return configured or DEFAULT_CONTEXT_WINDOW

    @property
    def memories_dir(self) -> Path:
        return self.home / "memories"

    @property
    def skills_dir(self) -> Path:
        return self.home / "skills"

    @property
    def config_path(self) -> Path:
        return self.home / "config.yaml"


def hermes_home() -> Path:
    return Path(os.environ.get("HERMES_HOME") or Path.home() / ".hermes").expanduser()


# String keys whose words YAML 1.1 reads as booleans (a bare `off` is false): (false word, true word).
_BOOL_WORDS: dict[tuple[str, str], tuple[str, str]] = {("learning", "evidence"): ("off", "required")}


def _coerce(section: str, key: str, value: Any) -> Any:
    typ, check, desc = _SCHEMA[section][key]
    if isinstance(value, bool) and (section, key) in _BOOL_WORDS:
        value = _BOOL_WORDS[(section, key)][int(value)]
    if typ is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if typ is int and isinstance(value, bool):
        raise ConfigError(f"config.yaml: {section}.{key} must be {desc}, got {value!r}")
    if not isinstance(value, typ):
        raise ConfigError(f"config.yaml: {section}.{key} must be {desc}, got {value!r}")
    if not check(value):
        raise ConfigError(f"config.yaml: {section}.{key} must be {desc}, got {value!r}")
    return value


# Values of keys the dashboard reads but does not implement every option of: a Hermes home may
# name a provider only Hermes has (mem0, honcho, ...). Such a value is a warning, not an error,
# and the dashboard runs as if the key were unset.
_LENIENT = {("memory", "provider")}


def _section_values(section: str, values: Any) -> dict[str, Any] | None:
    """A section as a mapping; Hermes' own shapes (`model: "<name>"`, `model.default`) are read."""
    if values is None:
        return None
    if section == "model" and isinstance(values, str):
        return {"name": values}  # Hermes' default shape: the whole section is the model name
    if not isinstance(values, dict):
        raise ConfigError(f"config.yaml: {section} must be a mapping")
    if section == "model" and "name" not in values and isinstance(values.get("default"), str):
        values = {**values, "name": values["default"]}  # Hermes' `model.default`
    return values


def _known_key(section: str, key: str) -> bool:
    # Keys Hermes keeps in sections the dashboard shares; read by Hermes only, not worth a warning.
    return key in DEFAULTS[section] or (section == "model" and key in ("default", "provider"))


def validate(raw: Any) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Merge `raw` over the defaults; raise ConfigError naming the first bad key."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError("config.yaml: the top level must be a mapping of sections")
    data = copy.deepcopy(DEFAULTS)
    warnings: list[str] = []
    others = [str(section) for section in raw if section not in DEFAULTS]
    if others:
        # A home shared with Hermes Agent holds dozens of its sections: one line, not one each.
        warnings.append(f"config.yaml: sections the dashboard does not use are kept as they are: {', '.join(others)}")
    for section, section_raw in raw.items():
        if section not in DEFAULTS:
            continue
        values = _section_values(section, section_raw)
        for key, value in (values or {}).items():
            if not _known_key(section, key):
                warnings.append(f"config.yaml: unknown key {section}.{key} ignored")
            elif key not in DEFAULTS[section]:
                continue
            elif (section, key) in _LENIENT:
                try:
                    data[section][key] = _coerce(section, key, value)
                except ConfigError as exc:
                    warnings.append(f"{exc}; the dashboard does not implement it and runs without it")
            else:
                data[section][key] = _coerce(section, key, value)
    return data, warnings


def dump_defaults() -> str:
    return yaml.safe_dump(DEFAULTS, sort_keys=False, allow_unicode=True)


_warned: set[str] = set()
_warned_lock = threading.Lock()


def _warn_once(warnings: list[str]) -> None:
    # Every page load re-reads the file; a Hermes home's unknown keys are logged once per process.
    with _warned_lock:
        fresh = [w for w in warnings if w not in _warned]
        _warned.update(fresh)
    for w in fresh:
        log.warning(w)


def _read_raw(path: Path) -> tuple[str, Any]:
    text = path.read_text(encoding="utf-8")
    try:
        return text, yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"config.yaml is not valid YAML: {exc}") from exc


def load(home: Path | None = None) -> Config:
    home = home or hermes_home()
    home.mkdir(parents=True, exist_ok=True)
    path = home / "config.yaml"
    if not path.exists():
        path.write_text(
            "# Hermes dashboard configuration. Keys you leave out take their defaults.\n" + dump_defaults(),
            encoding="utf-8",
        )
    data, warnings = validate(_read_raw(path)[1])
    _warn_once(warnings)
    return Config(home=home, data=data, warnings=warnings)


def _set_raw(raw: dict[str, Any], section: str, key: str, value: Any) -> None:
    """Set one key in the file's own document, keeping the shape the file already uses."""
    current = raw.get(section)
    if current is None:
        raw[section] = {key: value}
    elif section == "model" and isinstance(current, str):
        # Hermes' `model: "<name>"`: the name stays a string; another key makes it Hermes' mapping form.
        raw[section] = value if key == "name" else {"default": current, key: value}
    elif isinstance(current, dict):
        current[key] = value
    else:
        raise ConfigError(f"config.yaml: {section} must be a mapping")


def _split_key(dotted: str) -> tuple[str, str]:
    section, _, key = dotted.partition(".")
    if section not in _SCHEMA or key not in _SCHEMA[section]:
        raise ConfigError(f"config.yaml: {dotted} is not a setting the dashboard can change")
    return section, key


def save_changes(changes: dict[str, Any], home: Path | None = None) -> Config:
    """Set the given keys ({"section.key": value}) and keep every other byte of config.yaml.

    The file is re-read under `config.yaml.lock`, so two saves (a skill toggle and the settings
    page) never undo each other; the result is validated before anything is written.
    """
    home = home or get().home
    path = load(home).config_path  # creates the file with the defaults on first use
    with open(home / "config.yaml.lock", "a+b") as lock_file:
        fcntl.flock(lock_file.fileno(), fcntl.LOCK_EX)
        text, raw = _read_raw(path)
        raw = copy.deepcopy(raw) if isinstance(raw, dict) else {}
        changed: dict[str, list[str]] = {}
        for dotted, value in changes.items():
            section, key = _split_key(dotted)
            _set_raw(raw, section, key, value)
            changed.setdefault(section, []).append(key)
        validate(raw)  # raises ConfigError naming the key; nothing is written
        if changed:
            _write(path, _new_text(text, raw, changed))
    reset()
    return load(home)


def _new_text(text: str, raw: dict[str, Any], changed: dict[str, list[str]]) -> str:
    try:
        out = yaml_edit.splice(text, raw, changed)
        if yaml.safe_load(out) == raw:
            return out
    except (yaml_edit.SpliceError, yaml.YAMLError) as exc:
        log.info("config.yaml: re-dumping the document instead of editing it in place (%s)", exc)
    # Keys and their order survive a re-dump; only formatting and comments are lost.
    return yaml.safe_dump(raw, sort_keys=False, allow_unicode=True)


def _write(path: Path, text: str) -> None:
    # Through a symbolic link (dotfiles): the link stays and its target gets the new text.
    real = Path(os.path.realpath(path))
    tmp = real.with_name(f".{real.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, real)


def save(config: Config, data: dict[str, dict[str, Any]]) -> Config:
    """Save the keys of `data` that differ from `config` (see `save_changes`)."""
    changes = {
        f"{section}.{key}": value
        for section, values in data.items()
        for key, value in values.items()
        if config.data.get(section, {}).get(key, object()) != value
    }
    return save_changes(changes, config.home)


_lock = threading.Lock()
_current: Config | None = None


def get() -> Config:
    """The process-wide config, loaded once (re-read after `reset()`)."""
    global _current
    with _lock:
        if _current is None or _current.home != hermes_home():
            _current = load()
        return _current


def reset() -> None:
    global _current
    with _lock:
        _current = None
