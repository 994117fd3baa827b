"""The model connection: one form (base URL, API key, model) on the first-run panel and on the
settings page, with Check (ask the server, save nothing) and Save (config.yaml and the key file).

The key is never shown back once saved: the form says where the key in use comes from and its
last four characters. A key in the environment wins, and the form says so (a key saved here is
then only used once the variable is unset). The views are the chat's (agent/chat/connection_views.py),
since Check reaches the model server; this module holds what both places render.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from foundation import config as hermes_config
from knowledge import api_key
from knowledge.views.forms import ConfigForm

KEY_CHARS = 500


class ConnectionForm(ConfigForm):
    """Base URL and model (config.yaml's `model.base_url`, `model.name`, checked as the settings
    page checks them) and the API key (saved in the home, 0600). An empty key field keeps the
    saved key. Check needs no model name (the server lists its models); Save does."""

    PLACEHOLDERS = {"base_url": "https://api.openai.com/v1", "model": "gpt-4o-mini"}

    def __init__(self, data: Any = None, *, config: hermes_config.Config, checking: bool = False) -> None:
        super().__init__(data, config=config)
        self.checking = checking
        self.fields["key"] = forms.CharField(
            label="API key", required=False, strip=True, widget=forms.PasswordInput(render_value=True)
        )
        self.fields["remove_key"] = forms.BooleanField(required=False)
        self.order_fields(["base_url", "key", "model", "remove_key"])

    def layout(self) -> list[tuple[str, str, str, str]]:
        return [
            ("base_url", "model.base_url", "Base URL", ""),
            ("model", "model.name", "Model", ""),
        ]

    @property
    def placed(self) -> list[tuple[forms.BoundField, str, str]]:
        """The config fields with their placeholder and the environment variable in use instead, if any."""
        return [(self[name], placeholder, self.envs[name]) for name, placeholder in self.PLACEHOLDERS.items()]

    def clean_key(self) -> str:
        key = str(self.cleaned_data["key"])
        if len(key) > KEY_CHARS:
            raise ValidationError(f"An API key is at most {KEY_CHARS} characters; this is {len(key):,}.", code="long")
        if any(ch.isspace() or not ch.isprintable() for ch in key):
            raise ValidationError("An API key is one word without spaces.", code="spaces")
        return key

    def clean_model(self) -> str:
        name = str(self.cleaned_data["model"])
        if not name and not self.checking and not self.fields["model"].disabled:
            raise ValidationError(
                "Name the model as the server knows it, like gpt-4o-mini or llama3.1 "
                "(Check lists the server's models).",
                code="required",
            )
        return name

    def changes(self) -> dict[str, Any]:
        return {
            self.specs[name].name: value
            for name, value in self.cleaned_data.items()
            if name in self.specs and not self.fields[name].disabled and value != self.fields[name].initial
        }

    def candidate(self) -> tuple[hermes_config.Config, str]:
        """The config as it would be once saved, and the key the model calls would use: the
        environment's wins, as at run time; else the one typed, else the one saved."""
        data = self.cleaned_data
        config = self.config.with_values({"model.base_url": data["base_url"], "model.name": data["model"]})
        typed = "" if data.get("remove_key") else data.get("key", "")
        in_use = api_key.status(self.config)
        return config, (self.config.api_key if in_use.source == "env" else typed or config.saved_api_key)

    def save(self) -> hermes_config.Config | None:
        """Write the changed keys and the key file; None (and the form's error) if refused."""
        saved = super().save()
        if saved is None:
            return None
        if self.cleaned_data["remove_key"]:
            api_key.remove(saved)
        elif self.cleaned_data["key"]:
            api_key.save(saved, self.cleaned_data["key"])
        return saved


@dataclass(frozen=True)
class Saved:
    """What a save did, for the banner shown after it (and only then)."""

    path: str
    model: str
    base_url: str
    key: api_key.KeyStatus


def connection_context(
    form: ConnectionForm | None = None,
    *,
    place: str = "settings",
    check: dict[str, Any] | None = None,
    saved: Saved | None = None,
) -> dict[str, Any]:
    """What the connection partial renders; `place` is "setup" (the first-run panel) or "settings"."""
    config = hermes_config.get()
    return {
        "connection_form": form or ConnectionForm(config=config),
        "connection_key": api_key.status(config),
        "connection_place": place,
        "connection_check": check,
        "connection_saved": saved,
    }


def saved_state(config: hermes_config.Config) -> Saved:
    return Saved(str(config.config_path), config.model_name, config.base_url, api_key.status(config))
