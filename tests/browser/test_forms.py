"""Forms in the browser: a bad value comes back on its own field, with what the person typed,
on the settings page (a full page post) and in the first-run panel (an htmx swap)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import yaml
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import BROWSER_CONFIG
from tests.daphne import Daphne, start_daphne

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def unset_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daphne]:
    """A dashboard with no model configured and nothing set in its environment: the first run."""
    with start_daphne(tmp_path_factory.mktemp("forms-home"), BROWSER_CONFIG, {}) as server:
        yield server


@pytest.fixture
def first_run(browser: Browser, unset_server: Daphne) -> Iterator[Page]:
    ctx = browser.new_context(base_url=unset_server.url, viewport={"width": 1280, "height": 860})
    ctx.set_default_timeout(15_000)
    page = ctx.new_page()
    page.goto(unset_server.login_url("/"))
    page.wait_for_url(f"{unset_server.url}/")
    yield page
    ctx.close()


def test_settings_bad_values_come_back_on_their_fields(first_run: Page, unset_server: Daphne, screenshot) -> None:
    page = first_run
    before = (unset_server.home / "config.yaml").read_bytes()
    page.goto("/settings/")
    key_env = page.locator('input[name="model.api_key_env"]')
    threshold = page.locator('input[name="compression.threshold"]')
    key_env.fill("my key")
    threshold.fill("1.5")
    page.click("#settings-save")
    expect(page.locator('[id="err-model.api_key_env"]')).to_contain_text("like OPENROUTER_API_KEY")
    expect(page.locator('[id="err-compression.threshold"]')).to_contain_text("a number between 0 and 1, got 1.5")
    expect(key_env).to_have_value("my key")
    expect(threshold).to_have_value("1.5")
    expect(key_env).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#settings-error li")).to_have_count(2)
    screenshot("forms-settings-errors", page, full_page=True)
    page.locator('#settings-error a[href="#id-model.api_key_env"]').click()  # the summary leads to the field
    expect(key_env).to_be_focused()
    assert (unset_server.home / "config.yaml").read_bytes() == before


def test_first_run_panel_refuses_a_base_url_that_is_not_http(first_run: Page, unset_server: Daphne, screenshot) -> None:
    page = first_run
    panel = page.locator("#setup-panel")
    expect(panel).to_contain_text("Connect a model")
    panel.locator('input[name="base_url"]').fill("not a url")
    panel.locator('input[name="model"]').fill("llama3.1")
    panel.get_by_role("button", name="Save", exact=True).click()
    error = page.locator("#conn-err-base_url")
    expect(error).to_contain_text("The base URL must be an http:// or https:// address")
    expect(page.locator('#setup-panel input[name="base_url"]')).to_have_value("not a url")
    expect(page.locator('#setup-panel input[name="model"]')).to_have_value("llama3.1")
    expect(page.locator("#connection-saved")).to_have_count(0)
    screenshot("forms-setup-error", page)
    saved = yaml.safe_load((unset_server.home / "config.yaml").read_text())
    assert not (saved.get("model") or {}).get("name")
    # Corrected, it saves: the panel is swapped in place again and says where.
    page.locator('#setup-panel input[name="base_url"]').fill("http://127.0.0.1:11434/v1")
    page.locator("#setup-panel").get_by_role("button", name="Save", exact=True).click()
    expect(page.locator("#connection-saved")).to_contain_text("Saved to")
    expect(page.locator("#conn-err-base_url")).to_have_count(0)
    saved = yaml.safe_load((unset_server.home / "config.yaml").read_text())["model"]
    assert (saved["base_url"], saved["name"]) == ("http://127.0.0.1:11434/v1", "llama3.1")
