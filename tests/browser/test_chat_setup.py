"""The first run in the browser: with no model anywhere, the chat page's panel takes the base URL,
the key and the model; Check asks the server and saves nothing, Save writes them and says so, and
the chat tried before the setup answers the next message without a reload. At 1280 and 390 px,
light and dark, with axe on each state."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import yaml
from playwright.sync_api import Browser, Page, expect

from tests.browser.chat_helpers import send
from tests.browser.conftest import BROWSER_CONFIG
from tests.browser.test_a11y import blocking_violations
from tests.browser.test_chat_list import MODES
from tests.daphne import Daphne, start_daphne
from tests.fakellm import Reply, ScriptedLLM, last_user_text

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def unset_server(tmp_path_factory: pytest.TempPathFactory, llm_server: ScriptedLLM) -> Iterator[Daphne]:
    """A fresh home with no model configured anywhere (no config key, no environment)."""
    home = tmp_path_factory.mktemp("no-model-home")
    with start_daphne(home, BROWSER_CONFIG, {}) as server:
        yield server


@pytest.fixture(params=list(MODES))
def first_run(request, browser: Browser, unset_server: Daphne) -> Iterator[tuple[str, Page]]:
    # Each mode starts from the first run again: no model and no key (the server follows the file).
    (unset_server.home / "config.yaml").write_text(BROWSER_CONFIG, encoding="utf-8")
    (unset_server.home / "api_key").unlink(missing_ok=True)
    scheme, width, height = MODES[request.param]
    ctx = browser.new_context(
        base_url=unset_server.url, viewport={"width": width, "height": height}, color_scheme=scheme
    )
    ctx.set_default_timeout(15_000)
    page = ctx.new_page()
    page.goto(unset_server.login_url("/"))
    page.wait_for_url(f"{unset_server.url}/")
    yield request.param, page
    ctx.close()


def _model_on_disk(server: Daphne) -> dict:
    return yaml.safe_load((server.home / "config.yaml").read_text(encoding="utf-8")).get("model") or {}


def test_first_run_form_checks_saves_and_the_chat_answers(first_run, unset_server: Daphne, llm, screenshot):
    mode, page = first_run
    llm.models = ["scripted-model", "other-model"]
    llm.default = lambda body: Reply(text=f"answer to {last_user_text(body)}")
    page.wait_for_selector('#chat[data-connected="1"]')
    send(page, f"setup hello {mode}")
    expect(page.locator(".msg-error")).to_contain_text("No model is configured")
    panel = page.locator("#setup-panel")
    expect(panel).to_contain_text("Connect a model")
    problems = blocking_violations(page, f"first-run panel ({mode})")

    # A bad value: refused on its field, with what was typed kept, and nothing asked or saved.
    page.fill("#conn-base_url", "not a url")
    page.click("#connection-check")
    expect(page.locator("#conn-err-base_url")).to_contain_text("must be an http:// or https:// address")
    expect(page.locator("#conn-base_url")).to_have_value("not a url")
    expect(page.locator("#conn-base_url")).to_have_attribute("aria-invalid", "true")
    problems += blocking_violations(page, f"first-run panel with an error ({mode})")

    # Check: the server answers with what is typed; nothing is saved yet.
    secret = f"sk-first-run-{mode}-4321"
    page.fill("#conn-base_url", llm.base_url)
    page.fill("#conn-key", secret)
    page.fill("#conn-model", "scripted-model")
    page.click("#connection-check")
    expect(page.locator("#check-status")).to_contain_text("Connected — the server lists 2 models")
    expect(page.locator('#model-check [data-step="chat"]')).to_contain_text("Plain chat: yes")
    expect(page.locator("#model-check")).to_contain_text("Checked only: nothing was saved.")
    expect(page.locator("#connection-saved")).to_have_count(0)
    expect(page.locator("#conn-key")).to_have_value(secret)  # ready to Save as checked
    assert not _model_on_disk(unset_server).get("name") and not (unset_server.home / "api_key").exists()
    problems += blocking_violations(page, f"first-run panel after Check ({mode})")
    screenshot(f"first-run-checked-{mode}", page, full_page=True)

    # Save: written, then said; the key is not shown back.
    page.click("#connection-save")
    expect(page.locator("#connection-saved")).to_contain_text("Send your first message below.")
    expect(page.locator("#connection-saved")).to_contain_text("API key ending …4321")
    expect(page.locator("#conn-key")).to_have_value("")
    saved = _model_on_disk(unset_server)
    assert (saved["base_url"], saved["name"]) == (llm.base_url, "scripted-model")
    assert (unset_server.home / "api_key").read_text(encoding="utf-8").strip() == secret
    assert secret not in page.content()
    problems += blocking_violations(page, f"first-run panel after Save ({mode})")
    screenshot(f"first-run-saved-{mode}", page, full_page=True)

    # The first answer, without a reload.
    send(page, f"first question {mode}")
    expect(page.locator(".msg-assistant .md").last).to_have_text(f"answer to first question {mode}")
    page.reload()
    expect(page.locator("#setup-panel")).to_have_count(0)  # a model is configured now
    assert not problems, "\n".join(problems)
