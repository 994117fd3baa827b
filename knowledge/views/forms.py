"""The curation pages' forms: settings and a skill (new and edited); the memory page's are in
knowledge/views/memory_forms.py, the inbox's in knowledge/views/inbox_forms.py.

Each form's `clean()` runs the store's own checks before anything is written (the config schema's,
the skill format's), so a refusal lands on the field it is about, in words for
a person; `save()` then writes through the store and reports a refusal that came in between (another
writer) the same way. Bad input re-renders the form with what the person typed.
"""

from __future__ import annotations

import os
import re
import urllib.parse
from dataclasses import dataclass
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from foundation import config as hermes_config
from knowledge.provenance import Provenance
from knowledge.skills.format import SkillError, check_category, check_name, validate_skill_md
from knowledge.skills.store import SkillInfo, SkillStore

USER = Provenance(actor="user")

# --- settings ---------------------------------------------------------------------------------

# How the page lays the schema out for a person: groups, labels and what a value means. Types,
# defaults, what is allowed and the choices come from the config schema (`key_specs`).
PAGE: list[tuple[str, list[tuple[str, str, str]]]] = [
    ("Learning rhythm", [
        ("memory.nudge_interval", "Memory review every N user turns", "0: off"),
        ("memory.flush_min_turns", "Flush memory after at least N turns", "0 disables the flush"),
        ("skills.creation_nudge_interval", "Skill review every N model calls", "0: off"),
    ]),
    ("Memory", [
        ("memory.memory_char_limit", "MEMORY.md limit (characters)", ""),
        ("memory.user_char_limit", "USER.md limit (characters)", ""),
        ("memory.memory_enabled", "Keep the agent's notes (MEMORY.md)", ""),
        ("memory.user_profile_enabled", "Keep the user profile (USER.md)", ""),
        ("memory.provider", "Memory provider", "session_recall: recall matching past sessions each turn; "
         "mem0: the mem0 library, run locally (needs requirements-mem0.txt and an embedding model)"),
        ("memory.provider_timeout", "Seconds a memory provider may take", "later, the chat goes on without it"),
    ]),
    ("Approval", [
        ("memory.write_approval", "Hold review writes to memory for my approval", ""),
        ("skills.write_approval", "Hold review writes to skills for my approval", ""),
        ("learning.evidence", "Evidence for what reviews learn", "required: each write quotes the conversation"),
        ("learning.verify", "Second reading of what reviews learn", "model: the review model checks each write"),
    ]),
    # The base URL and the model's name are the model connection's form (knowledge/views/model_key.py).
    ("Model", [
        ("model.api_key_env", "Environment variable holding the API key", "the key is never written to the file"),
        ("model.context_window", "Context window (tokens)", "0: the model's known size, or 128,000"),
        ("model.timeout", "Request timeout (seconds)", ""),
        ("model.max_retries", "Retries of a failed request", ""),
    ]),
    ("Background review", [
        ("review.model", "Review model", "empty: the main model"),
        ("review.max_iterations", "Review iterations at most", ""),
    ]),
    ("Context compression", [
        ("compression.enabled", "Compress long conversations", ""),
        ("compression.threshold", "Compress at this share of the context window", ""),
        ("compression.protect_first_n", "Messages never compressed at the start", ""),
    ]),
    ("Skill curator", [
        ("curator.enabled", "Propose archiving unused skills and merging overlaps", "proposals wait in the inbox"),
        ("curator.interval_hours", "Hours between curator passes", ""),
        ("curator.min_idle_hours", "Only after this many hours without a chat message", ""),
        ("curator.stale_after_days", "A skill unused this many days is stale", ""),
        ("curator.archive_after_days", "Propose archiving a skill unused this many days", ""),
        ("curator.consolidate", "Propose merging skills that overlap", ""),
        ("curator.include_user_skills", "Curate skills I wrote or imported too", "off: only skills reviews created"),
    ]),
    ("Search by meaning", [
        ("embeddings.model", "Embedding model", "empty: search by words only"),
        ("embeddings.base_url", "Base URL of the embedding server", "empty: the model connection's server"),
        ("embeddings.api_key_env", "Environment variable holding its API key", "empty: the model connection's key"),
    ]),
    ("Chat", [
        ("chat.auto_title", "Let the model title new chats", ""),
        ("agent.max_iterations", "Model calls per turn at most", ""),
        ("agent.max_message_chars", "Longest message (characters)", ""),
    ]),
]  # fmt: skip
# Keys of the schema the page does not edit, and where they are edited instead.
ELSEWHERE = {
    "skills.disabled": "the Skills page (enable, disable)",
    "model.base_url": "the model connection (settings page and first-run panel), with the API key and Check",
    "model.name": "the model connection (settings page and first-run panel), with the API key and Check",
}
# Environment variables that win over the file (foundation.config's Config properties).
ENV_OVERRIDES = {
    "model.base_url": "OPENAI_BASE_URL",
    "model.name": "HERMES_MODEL",
    "embeddings.model": "HERMES_EMBEDDING_MODEL",
}
_ERROR_CODES_FOR_SCHEMA = ("invalid", "required", "invalid_choice")
ENV_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def check_base_url(value: str) -> None:
    """An OpenAI-compatible server's address: http(s), a host, and nothing a URL cannot hold."""
    try:
        parts = urllib.parse.urlsplit(value)
        ok = parts.scheme in ("http", "https") and bool(parts.hostname) and not any(c.isspace() for c in value)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number from 0 to 65535
    except ValueError:
        ok = False
    if value and not ok:
        raise ValidationError(
            "The base URL must be an http:// or https:// address of the server, like http://127.0.0.1:11434/v1 "
            "(got %(value)r). Leave it empty for OpenAI itself.",
            code="not_http_url",
            params={"value": value},
        )


def check_env_name(value: str) -> None:
    """The name of an environment variable (the key is read from it, never written to the file)."""
    if value and not ENV_NAME_RE.fullmatch(value):
        raise ValidationError(
            "An environment variable's name is letters, digits and '_', not starting with a digit, like "
            "OPENROUTER_API_KEY (got %(value)r).",
            code="not_env_name",
            params={"value": value},
        )


# Checks a form makes beyond the schema's type and range.
_FORM_CHECKS = {"model.base_url": check_base_url, "model.api_key_env": check_env_name}


class _SchemaChecked:
    """A generated field: the Django field parses, then the schema's own check has the last word."""

    def __init__(self, *, spec: hermes_config.KeySpec, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.spec = spec

    def clean(self, value: Any) -> Any:
        try:
            parsed = super().clean(value)  # type: ignore[misc]
        except ValidationError as exc:
            if any(e.code not in _ERROR_CODES_FOR_SCHEMA for e in exc.error_list):
                raise  # a check of the form's own (the base URL's): its words stand
            # Not a number, or not a choice: the schema's check says what it must be, naming the key.
            parsed = "" if value is None else value
        try:
            return self.spec.coerce(parsed)
        except hermes_config.ConfigError as exc:
            raise ValidationError(str(exc), code="schema") from exc


class SettingBool(_SchemaChecked, forms.BooleanField):
    pass


class SettingInt(_SchemaChecked, forms.IntegerField):
    pass


class SettingFloat(_SchemaChecked, forms.FloatField):
    pass


class SettingText(_SchemaChecked, forms.CharField):
    pass


class SettingChoice(_SchemaChecked, forms.ChoiceField):
    pass


_FIELD_CLASSES: dict[str, type[forms.Field]] = {
    "bool": SettingBool,
    "int": SettingInt,
    "float": SettingFloat,
    "text": SettingText,
}


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return f"{value:,}" if isinstance(value, int) else str(value) or "empty"


def setting_field(spec: hermes_config.KeySpec, label: str = "", help_text: str = "") -> forms.Field:
    """One key's form field: its type, default, what is allowed and its choices from the schema."""
    allowed = spec.allowed if spec.field_kind in ("int", "float") else ""
    default = f"default: {_shown(spec.default)}"
    kwargs: dict[str, Any] = {
        "label": label or spec.name,
        "help_text": " · ".join(filter(None, [help_text, allowed, default])),
    }
    if spec.choices:
        choices = [(c, c or "none") for c in spec.choices]
        field: forms.Field = SettingChoice(spec=spec, choices=choices, required=False, **kwargs)
    else:
        # A checkbox left unticked is false; an empty text is a value of its own ("" = the default server).
        optional = spec.field_kind in ("bool", "text")
        field = _FIELD_CLASSES[spec.field_kind](spec=spec, required=not optional, **kwargs)
    if spec.name in _FORM_CHECKS:
        field.validators.append(_FORM_CHECKS[spec.name])
    return field


def specs() -> dict[str, hermes_config.KeySpec]:
    return {spec.name: spec for spec in hermes_config.key_specs()}


@dataclass(frozen=True)
class SettingRow:
    """A field as the settings template lays it out."""

    field: forms.BoundField
    kind: str
    env: str  # the environment variable that overrides the file, when one is set
    file_value: Any  # what config.yaml holds (shown beside a value the environment overrides)


class ConfigForm(forms.Form):
    """Keys of config.yaml; only the ones that changed are saved, so the file keeps every other byte.

    `layout()` names the fields: (field name, key, label, help). A key the environment overrides
    shows the value in use and cannot be edited here (saving it would not change what runs)."""

    def __init__(self, data: Any = None, *, config: hermes_config.Config) -> None:
        super().__init__(data)
        self.config = config
        self.specs: dict[str, hermes_config.KeySpec] = {}  # by field name
        self.envs: dict[str, str] = {}  # field name -> the environment variable in use instead, if any
        schema = specs()
        for field_name, key, label, help_text in self.layout():
            spec = schema[key]
            field = setting_field(spec, label, help_text)
            env = ENV_OVERRIDES.get(key, "")
            field.disabled = bool(env and os.environ.get(env))
            field.initial = os.environ[env] if field.disabled else config.value(spec.name)
            self.fields[field_name] = field
            self.specs[field_name] = spec
            self.envs[field_name] = env if field.disabled else ""

    def layout(self) -> list[tuple[str, str, str, str]]:
        raise NotImplementedError

    def row(self, field_name: str) -> SettingRow:
        spec = self.specs[field_name]
        return SettingRow(self[field_name], spec.field_kind, self.envs[field_name], self.config.value(spec.name))

    def changes(self) -> dict[str, Any]:
        return {
            self.specs[name].name: value
            for name, value in self.cleaned_data.items()
            if not self.fields[name].disabled and value != self.fields[name].initial
        }

    def save(self) -> hermes_config.Config | None:
        """Write the changed keys (validated once more with the whole file); None and an error if refused."""
        try:
            return hermes_config.save_changes(self.changes(), self.config.home)
        except hermes_config.ConfigError as exc:
            self.add_error(None, str(exc))
            return None


class SettingsForm(ConfigForm):
    """Every key of the schema the page edits (fields named by their key), grouped as PAGE lays them out."""

    def layout(self) -> list[tuple[str, str, str, str]]:
        return [(key, key, label, help_text) for _, rows in PAGE for key, label, help_text in rows]

    def groups(self) -> list[tuple[str, list[SettingRow]]]:
        return [(title, [self.row(key) for key, _, _ in rows]) for title, rows in PAGE]


# --- skills -----------------------------------------------------------------------------------


def _skill_check(check: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return check(*args, **kwargs)
    except SkillError as exc:
        raise ValidationError(str(exc), code="skill") from exc


class _SkillForm(forms.Form):
    content = forms.CharField(required=False, strip=False, widget=forms.Textarea)

    def clean_content(self) -> str:
        return str(self.cleaned_data["content"]).replace("\r\n", "\n")

    def _write(self, write: Any, *args: Any, **kwargs: Any) -> bool:
        """A write the checks could not foresee (a skill created meanwhile, the disk): the form's error."""
        try:
            write(*args, **kwargs)
        except SkillError as exc:
            self.add_error(None, str(exc))
            return False
        return True


class NewSkillForm(_SkillForm):
    name = forms.CharField(required=False)
    category = forms.CharField(required=False)

    def __init__(self, data: Any = None, *, store: SkillStore, **kwargs: Any) -> None:
        super().__init__(data, **kwargs)
        self.store = store

    def clean_name(self) -> str:
        name = _skill_check(check_name, self.cleaned_data["name"])
        existing = self.store.find(name)
        if existing is not None:
            where = f" in category '{existing.category}'" if existing.category else ""
            raise ValidationError(f"A skill named '{name}' already exists{where}; names are unique across categories.")
        return str(name)

    def clean_category(self) -> str:
        return str(_skill_check(check_category, self.cleaned_data["category"]))

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if "name" in data and "content" in data:
            try:
                # Lenient as an import: a skill pasted from elsewhere (Anthropic's claude-api has a 1,068-character
                # description) is created and its page says which limit it breaks; the model's creates stay strict.
                _skill_check(validate_skill_md, data["content"], data["name"], lenient=True)
            except ValidationError as exc:
                self.add_error("content", exc)
        return data

    def save(self) -> bool:
        data = self.cleaned_data
        return self._write(
            self.store.create, data["name"], data["content"], category=data["category"], prov=USER, lenient=True
        )


class SkillEditForm(_SkillForm):
    def __init__(self, data: Any = None, *, store: SkillStore, skill: SkillInfo, **kwargs: Any) -> None:
        super().__init__(data, **kwargs)
        self.store, self.skill = store, skill

    def clean_content(self) -> str:
        content = super().clean_content()
        _skill_check(self.store.check_edit, self.skill.name, content)
        return content

    def save(self) -> bool:
        return self._write(self.store.edit, self.skill.name, self.cleaned_data["content"], prov=USER)


_PICK_SKILLS = "Pick one or more skills and an action."


class _AnyNames(forms.MultipleChoiceField):
    def valid_value(self, value: str) -> bool:
        return bool(value)


class SkillBulkForm(forms.Form):
    """Enable, disable or delete the ticked skills, each through the store."""

    action = forms.ChoiceField(
        choices=[("enable", "Enable"), ("disable", "Disable"), ("delete", "Delete")],
        error_messages={"required": _PICK_SKILLS, "invalid_choice": _PICK_SKILLS},
    )
    # Not checked against the skills on disk: a name deleted meanwhile is the store's refusal of
    # that one skill ("not found"), and the other ticked skills are still done.
    names = _AnyNames(error_messages={"required": _PICK_SKILLS})

    def __init__(self, data: Any = None, *, store: SkillStore, **kwargs: Any) -> None:
        super().__init__(data, **kwargs)
        self.store = store

    def save(self) -> tuple[list[str], list[str]]:
        """(the names done, a sentence per skill the store refused)."""
        action = self.cleaned_data["action"]
        done: list[str] = []
        refused: list[str] = []
        for name in self.cleaned_data["names"]:
            try:
                getattr(self.store, action)(name, prov=USER)
                done.append(name)
            except SkillError as exc:
                refused.append(f"{name}: {exc}")
        return done, refused


def errors_text(form: forms.Form) -> str:
    """Every error of a form as one line (for a JSON answer or a panel's message)."""
    said = (str(message) for messages in form.errors.values() for message in messages)
    return " ".join(dict.fromkeys(said))  # once each: several hidden fields can fail for one reason
