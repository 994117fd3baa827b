"""Settings page: edit config.yaml with the start-up validation.

The form (knowledge/views/forms.py) is generated from the config schema: one field per key with
its type, default, what it allows and its choices. A wrong value is refused on its field with the
start-up check's words naming the key, and nothing is saved; only the keys that changed are
written, so the rest of the file keeps every byte.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from foundation import config as hermes_config
from knowledge import capabilities
from knowledge.views.forms import SettingsForm
from knowledge.views.model_key import connection_context


def _server_capabilities() -> dict[str, Any]:
    """What the configured server + model was found to do (learned in use or by check_model)."""
    config = hermes_config.get()
    data = capabilities.known(config.base_url, config.model_name) if config.model_name else None
    return {"model": config.model_name, "base_url": config.base_url, "features": capabilities.describe(data),
            "probed_at": (data or {}).get("probed_at", ""), "known": data is not None}  # fmt: skip


@require_http_methods(["GET", "POST"])
def settings_page(request: HttpRequest) -> HttpResponse:
    return page(request)


def page(request: HttpRequest, *, connection: dict[str, Any] | None = None, status: int = 200) -> HttpResponse:
    """The settings page; `connection`: the model connection's form as a post left it (a plain
    post of that form, without JavaScript, comes back here with its result)."""
    ctx: dict[str, Any] = {"nav": "settings", "error": "", "saved": False}
    try:
        # The file on disk, not the cached config: a skill toggle may have changed it since.
        current = hermes_config.load(hermes_config.get().home)
    except hermes_config.ConfigError as exc:
        return render(request, "knowledge/settings.html", {**ctx, "error": str(exc), "broken": True})
    posted = request.method == "POST" and connection is None
    form = SettingsForm(request.POST if posted else None, config=current)
    if posted:
        saved = form.save() if form.is_valid() else None
        if saved is None:
            status = 400
        else:
            hermes_config.reset()  # the next session (and every store) reads the new file
            form, ctx["saved"], ctx["warnings"] = SettingsForm(config=saved), True, saved.warnings
    ctx.update(form=form, path=current.config_path, server=_server_capabilities())
    ctx.update(connection or connection_context())
    # A plain form post (no htmx): a full page with the errors in place works without JS too.
    return render(request, "knowledge/settings.html", ctx, status=status)
