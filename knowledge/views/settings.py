"""Settings page: edit config.yaml with the start-up validation.

Posted text is read as YAML scalars, exactly as it would be written in config.yaml, then the
whole file goes through `hermes_site.config.validate`: a wrong value gives the same ConfigError
naming the key as at start-up, and nothing is saved. Checkboxes are booleans; free-text
settings (URLs, model names) stay strings so "" or "1.0" cannot change type.
"""

from __future__ import annotations

import copy
import os
import re
from dataclasses import dataclass
from typing import Any

import yaml
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from hermes_site import config as hermes_config
from knowledge import capabilities


@dataclass(frozen=True)
class Field:
    section: str
    key: str
    label: str
    help: str = ""
    env: str = ""  # an environment variable that overrides the file

    @property
    def name(self) -> str:
        return f"{self.section}.{self.key}"

    @property
    def kind(self) -> str:
        """number | bool | text, from the config loader's schema (declared once, there)."""
        return hermes_config.value_kind(self.section, self.key)


GROUPS: list[tuple[str, list[Field]]] = [
    ("Learning rhythm", [
        Field("memory", "nudge_interval", "Memory review every N user turns", "0: off"),
        Field("memory", "flush_min_turns", "Flush memory after at least N turns", "0 disables the flush"),
        Field("skills", "creation_nudge_interval", "Skill review every N model calls", "0: off"),
    ]),
    ("Memory limits", [
        Field("memory", "memory_char_limit", "MEMORY.md limit (characters)"),
        Field("memory", "user_char_limit", "USER.md limit (characters)"),
    ]),
    ("Approval", [
        Field("memory", "write_approval", "Hold review writes to memory for my approval"),
        Field("skills", "write_approval", "Hold review writes to skills for my approval"),
    ]),
    ("Model", [
        Field("model", "base_url", "Base URL of the OpenAI-compatible server", env="OPENAI_BASE_URL"),
        Field("model", "name", "Model name", env="HERMES_MODEL"),
        Field("model", "context_window", "Context window (tokens)", "0: the model's known size, or 128,000"),
        Field("model", "timeout", "Request timeout (seconds)"),
    ]),
    ("Background review", [
        Field("review", "model", "Review model", "empty: the main model"),
        Field("review", "max_iterations", "Review iterations at most"),
    ]),
    ("Context compression", [
        Field("compression", "enabled", "Compress long conversations"),
        Field("compression", "threshold", "Compress at this share of the context window", "between 0 and 1"),
    ]),
]  # fmt: skip
FIELDS = [f for _, fields in GROUPS for f in fields]
_KEY_RE = re.compile(r"config\.yaml: (\w+\.\w+)")


def _posted(post: Any, f: Field) -> Any:
    if f.kind == "bool":
        return post.get(f.name) == "on"
    text = str(post.get(f.name, ""))
    if f.kind == "text":
        return text.strip()
    try:
        return yaml.safe_load(text) if text.strip() else None
    except yaml.YAMLError:
        return text  # not a YAML scalar: validate() names the key and what it must be


def _apply(data: dict[str, dict[str, Any]], post: Any) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """The edited config, and what the form should show (the person's text, not the parsed value)."""
    edited = copy.deepcopy(data)
    shown: dict[str, str] = {}
    for f in FIELDS:
        edited[f.section][f.key] = _posted(post, f)
        shown[f.name] = "on" if f.kind == "bool" and post.get(f.name) == "on" else str(post.get(f.name, ""))
    return edited, shown


def _current_values(data: dict[str, dict[str, Any]]) -> dict[str, str]:
    return {f.name: ("on" if data[f.section][f.key] else "") if f.kind == "bool" else str(data[f.section][f.key])
            for f in FIELDS}  # fmt: skip


def _server_capabilities() -> dict[str, Any]:
    """What the configured server + model was found to do (learned in use or by check_model)."""
    config = hermes_config.get()
    data = capabilities.known(config.base_url, config.model_name) if config.model_name else None
    return {"model": config.model_name, "base_url": config.base_url, "features": capabilities.describe(data),
            "probed_at": (data or {}).get("probed_at", ""), "known": data is not None}  # fmt: skip


@require_http_methods(["GET", "POST"])
def settings_page(request: HttpRequest) -> HttpResponse:
    ctx: dict[str, Any] = {"nav": "settings", "error": "", "error_key": "", "saved": False}
    try:
        # The file on disk, not the cached config: a skill toggle may have changed it since.
        current = hermes_config.load(hermes_config.get().home)
    except hermes_config.ConfigError as exc:
        return render(request, "knowledge/settings.html", {**ctx, "error": str(exc), "groups": [], "broken": True})
    values = _current_values(current.data)
    status = 200
    if request.method == "POST":
        edited, values = _apply(current.data, request.POST)
        try:
            saved = hermes_config.save(current, edited)
        except hermes_config.ConfigError as exc:
            match = _KEY_RE.search(str(exc))
            ctx.update(error=str(exc), error_key=match.group(1) if match else "")
            status = 400
        else:
            hermes_config.reset()  # the next session (and every store) reads the new file
            values, ctx["saved"], ctx["warnings"] = _current_values(saved.data), True, saved.warnings
    groups = [(title, [(f, values[f.name], os.environ.get(f.env)) for f in fields]) for title, fields in GROUPS]
    ctx.update(groups=groups, path=current.config_path, server=_server_capabilities())
    # A plain form post (no htmx): a full page with the errors in place works without JS too.
    return render(request, "knowledge/settings.html", ctx, status=status)
