"""HERMES_HOME/config.yaml: read, checked, saved, and followed while the process runs.

This is the one place configuration is read. It is plain Python (no Django) so the agent
loop, the terminal chat and the Django settings all share it. The keys are declared once, in
`foundation.config_schema`; a `Config` holds one frozen dataclass per section
(`config.memory.nudge_interval`), checked when it is built. Validation errors name the offending
key so a person can fix their file without reading a traceback.

Every process (each daphne worker, each `learning_worker`, the terminal chat) holds the config
it last read. `refresh()` costs one `stat` of the file and re-reads it only when it changed, so
calling it at the start of each request, turn and background job makes a setting saved on any
worker govern the next one everywhere. A file changed into something wrong keeps the last good
config and logs the error naming the key; at start-up the same error is a system check error
(`hermes_site.config_checks`). Reading never writes: the file with the defaults is created by
`manage.py serve` (`write_defaults`) or by the first save.
"""

from __future__ import annotations

import copy
import dataclasses
import fcntl
import logging
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from foundation import yaml_edit
from foundation.config_schema import (
    SECTIONS,
    SETTINGS,
    AgentSettings,
    ChatSettings,
    CompressionSettings,
    ConfigError,
    CuratorSettings,
    EmbeddingsSettings,
    LearningSettings,
    MemorySettings,
    ModelSettings,
    ReviewSettings,
    Section,
    Setting,
    SkillsSettings,
    all_settings,
    defaults,
    lookup,
    section_settings,
    value_kind,
)

__all__ = ["SETTINGS", "Config", "ConfigError", "Setting", "all_settings", "value_kind"]

log = logging.getLogger(__name__)

DEFAULT_CONTEXT_WINDOW = 128_000
API_KEY_FILE = "api_key"


# What the settings form is generated from: each key with its type, default, rule and choices.
KeySpec = Setting


def key_specs() -> list[KeySpec]:
    """Every key the dashboard reads, in the schema's order."""
    return list(all_settings())


@dataclass(frozen=True)
class Config:
    """One reading of config.yaml: a frozen section object per section, plus where it lives."""

    home: Path
    model: ModelSettings = field(default_factory=ModelSettings)
    memory: MemorySettings = field(default_factory=MemorySettings)
    skills: SkillsSettings = field(default_factory=SkillsSettings)
    compression: CompressionSettings = field(default_factory=CompressionSettings)
    review: ReviewSettings = field(default_factory=ReviewSettings)
    agent: AgentSettings = field(default_factory=AgentSettings)
    chat: ChatSettings = field(default_factory=ChatSettings)
    learning: LearningSettings = field(default_factory=LearningSettings)
    curator: CuratorSettings = field(default_factory=CuratorSettings)
    embeddings: EmbeddingsSettings = field(default_factory=EmbeddingsSettings)
    warnings: tuple[str, ...] = ()

    def value(self, dotted: str) -> Any:
        """A key's value by its name ("memory.nudge_interval"), for code that walks the schema
        (the settings form); everything else reads the typed attribute."""
        setting = lookup(dotted)
        return getattr(getattr(self, setting.section), setting.key)

    def with_values(self, changes: dict[str, Any]) -> Config:
        """A copy with some keys changed ({"section.key": value}), each checked as from the file."""
        sections: dict[str, dict[str, Any]] = {}
        for dotted, value in changes.items():
            setting = lookup(dotted)
            sections.setdefault(setting.section, {})[setting.key] = value
        return dataclasses.replace(
            self, **{name: dataclasses.replace(getattr(self, name), **kv) for name, kv in sections.items()}
        )

    @property
    def data(self) -> dict[str, dict[str, Any]]:
        """Every key's value as config.yaml holds it ({"memory": {"nudge_interval": 10, ...}})."""
        return {
            name: {s.key: _plain(getattr(getattr(self, name), s.key)) for s in section_settings(cls)}
            for name, cls in SECTIONS.items()
        }

    @property
    def model_name(self) -> str:
        return os.environ.get("HERMES_MODEL") or self.model.name

    @property
    def base_url(self) -> str:
        return os.environ.get("OPENAI_BASE_URL") or self.model.base_url

    @property
    def api_key(self) -> str:
        """The environment's key (model.api_key_env, else OPENAI_API_KEY), else the one saved in the home."""
        env_name = self.model.api_key_env or "OPENAI_API_KEY"
        return os.environ.get(env_name) or os.environ.get("OPENAI_API_KEY", "") or self.saved_api_key

    @property
    def saved_api_key(self) -> str:
        """The key saved from the settings page (HERMES_HOME/api_key, 0600: knowledge/api_key.py)."""
        try:
            return (self.home / API_KEY_FILE).read_text(encoding="utf-8").strip()
        except (FileNotFoundError, NotADirectoryError):
            return ""

    @property
    def embedding_model(self) -> str:
        """The model that embeds messages for recall by meaning; "" when search is by words only."""
        return os.environ.get("HERMES_EMBEDDING_MODEL") or self.embeddings.model

    @property
    def embedding_base_url(self) -> str:
        return self.embeddings.base_url or self.base_url

    @property
    def embedding_api_key(self) -> str:
        """The key of the embedding server: its own variable when set, else the chat model's key."""
        own = os.environ.get(self.embeddings.api_key_env, "") if self.embeddings.api_key_env else ""
        return own or self.api_key

    @property
    def review_model(self) -> str:
        return self.review.model or self.model_name

    @property
    def context_window(self) -> int:
        return self.model.context_window or DEFAULT_CONTEXT_WINDOW

    @property
    def memory_on(self) -> bool:
        """Either memory target is kept: the memory tool exists and memory reviews can run."""
        return self.memory.memory_enabled or self.memory.user_profile_enabled

    @property
    def memories_dir(self) -> Path:
        return self.home / "memories"

    @property
    def skills_dir(self) -> Path:
        return self.home / "skills"

    @property
    def config_path(self) -> Path:
        return self.home / "config.yaml"


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def hermes_home() -> Path:
    return Path(os.environ.get("HERMES_HOME") or Path.home() / ".hermes").expanduser()


def _section_values(section: str, values: Any) -> dict[str, Any] | None:
    """A section as a mapping; Hermes' own shapes (`model: "<name>"`, `model.default`) are read."""
    if values is None:
        return None
    if section == "model" and isinstance(values, str):
        return {"name": values}  # Hermes' default shape: the whole section is the model name
    if not isinstance(values, dict):
        raise ConfigError(f"config.yaml: {section} must be a mapping", section)
    if section == "model" and "name" not in values and isinstance(values.get("default"), str):
        values = {**values, "name": values["default"]}  # Hermes' `model.default`
    return values


HERMES_ONLY_KEYS = {"model": ("default", "provider"), "curator": ("prune_builtins", "backup")}


def _known_key(section: str, key: str) -> bool:
    # Keys Hermes keeps in sections the dashboard shares; read by Hermes only, not worth a warning.
    return f"{section}.{key}" in SETTINGS or key in HERMES_ONLY_KEYS.get(section, ())


def _section(name: str, raw: Any, warnings: list[str]) -> Section:
    kwargs: dict[str, Any] = {}
    for key, value in (_section_values(name, raw) or {}).items():
        dotted = f"{name}.{key}"
        if not _known_key(name, key):
            warnings.append(f"config.yaml: unknown key {dotted} ignored")
        elif dotted not in SETTINGS:
            continue
        elif SETTINGS[dotted].lenient:
            # A value only Hermes implements (a memory provider such as mem0): the dashboard runs
            # as if the key were unset.
            try:
                kwargs[key] = SETTINGS[dotted].coerce(value)
            except ConfigError as exc:
                warnings.append(f"{exc}; the dashboard does not implement it and runs without it")
        else:
            kwargs[key] = value
    return SECTIONS[name](**kwargs)  # checks every value; ConfigError names the first wrong key


def validate(raw: Any) -> tuple[dict[str, Section], list[str]]:
    """The sections of a parsed config.yaml over the defaults; raise ConfigError naming the first bad key."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError("config.yaml: the top level must be a mapping of sections")
    warnings: list[str] = []
    others = [str(section) for section in raw if section not in SECTIONS]
    if others:
        # A home shared with Hermes Agent holds dozens of its sections: one line, not one each.
        warnings.append(f"config.yaml: sections the dashboard does not use are kept as they are: {', '.join(others)}")
    sections = {name: _section(name, raw.get(name), warnings) for name in SECTIONS}
    return sections, warnings


def from_raw(home: Path, raw: Any) -> Config:
    """A Config from a parsed document (what `load` does after reading the file)."""
    sections, warnings = validate(raw)
    return Config(home, **sections, warnings=tuple(warnings))  # type: ignore[arg-type]


def dump_defaults() -> str:
    return yaml.safe_dump(defaults(), sort_keys=False, allow_unicode=True)


_warned: set[str] = set()
_warned_lock = threading.Lock()


def _warn_once(warnings: tuple[str, ...]) -> None:
    # Every change of the file is read again; a Hermes home's unknown keys are logged once per process.
    with _warned_lock:
        fresh = [w for w in warnings if w not in _warned]
        _warned.update(fresh)
    for w in fresh:
        log.warning(w)


def _read_raw(path: Path) -> tuple[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return "", None  # no file yet: every key takes its default
    try:
        return text, yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"config.yaml is not valid YAML: {exc}") from exc


def load(home: Path | None = None) -> Config:
    """Read and check `home`/config.yaml (a missing file: the defaults). Writes nothing."""
    home = home or hermes_home()
    config = from_raw(home, _read_raw(home / "config.yaml")[1])
    _warn_once(config.warnings)
    return config


DEFAULTS_HEADER = "# Hermes dashboard configuration. Keys you leave out take their defaults.\n"


def write_defaults(home: Path | None = None) -> bool:
    """First run: create config.yaml with every default, for a person to edit. False if it exists."""
    home = home or hermes_home()
    home.mkdir(mode=0o700, parents=True, exist_ok=True)  # a new home is the owner's alone
    try:
        with open(home / "config.yaml", "x", encoding="utf-8") as out:  # never over a file another process wrote
            out.write(DEFAULTS_HEADER + dump_defaults())
    except FileExistsError:
        return False
    return True


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
        raise ConfigError(f"config.yaml: {section} must be a mapping", section)


def save_changes(changes: dict[str, Any], home: Path | None = None) -> Config:
    """Set the given keys ({"section.key": value}) and keep every other byte of config.yaml.

    The file is re-read under `config.yaml.lock`, so two saves (a skill toggle and the settings
    page, on one worker or two) never undo each other; the result is validated before anything
    is written. This process follows the new file at once; the others at their next `refresh()`.
    """
    home = home or get().home
    home.mkdir(parents=True, exist_ok=True)
    path = home / "config.yaml"
    with open(home / "config.yaml.lock", "a+b") as lock_file:
        fcntl.flock(lock_file.fileno(), fcntl.LOCK_EX)
        text, raw = _read_raw(path)
        if not text:
            text, raw = DEFAULTS_HEADER + dump_defaults(), defaults()  # the first save writes the whole file
        raw = copy.deepcopy(raw) if isinstance(raw, dict) else {}
        changed: dict[str, list[str]] = {}
        for dotted, value in changes.items():
            setting = lookup(dotted)
            _set_raw(raw, setting.section, setting.key, _plain(value))
            changed.setdefault(setting.section, []).append(setting.key)
        validate(raw)  # raises ConfigError naming the key; nothing is written
        if changed or not path.exists():
            _write(path, _new_text(text, raw, changed))
    return refresh() if home == hermes_home() else load(home)


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
    # Through a symbolic link (dotfiles): the link stays and its target gets the new text. A new
    # file replaces the old one, so every reader sees the whole old text or the whole new one.
    real = Path(os.path.realpath(path))
    tmp = real.with_name(f".{real.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, real)


def save(config: Config, data: dict[str, dict[str, Any]]) -> Config:
    """Save the keys of `data` that differ from `config` (see `save_changes`)."""
    current = config.data
    changes = {
        f"{section}.{key}": value
        for section, values in data.items()
        for key, value in values.items()
        if current.get(section, {}).get(key, object()) != value
    }
    return save_changes(changes, config.home)


# -- the config this process runs with ------------------------------------------------------------

Stamp = tuple[int, int, int, int, int] | None


def _stamp(path: Path) -> Stamp:
    """What identifies one version of the file, from one stat: a save replaces the file (a new
    inode); an edit in place changes its size or times. None: there is no file."""
    try:
        st = os.stat(path)  # through a symbolic link: the target's
    except FileNotFoundError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


@dataclass
class _State:
    config: Config | None = None
    stamp: Stamp = None
    rejected: Stamp = None  # a version already found wrong (and logged): not read again


_lock = threading.Lock()
_state = _State()


def _read_locked(home: Path, stamp: Stamp) -> Config:
    try:
        config = load(home)
    except ConfigError as exc:
        if _state.config is None or _state.config.home != home:
            raise  # nothing good to keep: the caller reports it (the system check does, at start-up)
        if _state.rejected != stamp:
            log.error("%s; the settings read before stay in use until the file is fixed", exc)
        _state.rejected = stamp
        return _state.config
    _state.config, _state.stamp, _state.rejected = config, stamp, None
    return config


def refresh() -> Config:
    """The config, re-read if config.yaml changed since it was read (one stat when it did not)."""
    home = hermes_home()
    stamp = _stamp(home / "config.yaml")  # before reading: a change during the read is seen next time
    with _lock:
        current = _state.config
        unchanged = stamp == _state.stamp or (stamp is not None and stamp == _state.rejected)
        if current is not None and current.home == home and unchanged:
            return current
        return _read_locked(home, stamp)


def get() -> Config:
    """The config as of this process's last `refresh()` (read on first use, or when HERMES_HOME
    changes). A turn, job or request holds the one it started with."""
    with _lock:
        current = _state.config
        if current is not None and current.home == hermes_home():
            return current
    return refresh()


def reset() -> None:
    """Forget the config read so far: the next `get()` reads the file again."""
    with _lock:
        _state.config, _state.stamp, _state.rejected = None, None, None
