"""A setting saved on one worker reaches every other process without a restart: two daphne
workers and a `learning_worker` on one database; the settings page of worker A changes the memory
review's rhythm and its approval rule, the next turn on worker B reviews at the new interval,
and the queue worker runs that review under the new rule."""

from __future__ import annotations

import os
import re
import secrets
from typing import Any

import pytest
import yaml

from tests.chat_socket import say
from tests.cli import CLIHome, start_learning_worker, wait_until
from tests.daphne import Http, another_worker, model_env, start_daphne
from tests.fakellm import Reply, ScriptedLLM, last_user_text
from tests.learning import SAVE_USER_PREF, is_review_followup, is_review_start, user_texts

pytestmark = pytest.mark.slow

# A memory review every second user turn, written at once; nothing else in the background.
EVERY_SECOND_TURN = "memory:\n  nudge_interval: 2\n  flush_min_turns: 0\nskills:\n  creation_nudge_interval: 0\n"
SAVE_EDITOR = {
    "name": "memory",
    "arguments": {
        "target": "user",
        "action": "add",
        "content": "Edits with Neovim",
        "evidence": ["I edit with Neovim"],
    },
}
_INPUT = re.compile(r"<input\b[^>]*>")
_SELECT = re.compile(r'<select\b[^>]*\bname="([^"]+)"[^>]*>(.*?)</select>', re.S)
_OPTION = re.compile(r'<option value="([^"]*)"([^>]*)>')
_ATTR = re.compile(r'(\w+)(?:="([^"]*)")?')


def _llm() -> ScriptedLLM:
    llm = ScriptedLLM()
    llm.default = lambda body: Reply(text=f"answer to {last_user_text(body)}")
    # Each review saves what the conversation it reads says last.
    llm.when(
        is_review_start,
        lambda body: Reply(tool_calls=[SAVE_EDITOR if "I edit with Neovim" in user_texts(body) else SAVE_USER_PREF]),
    )
    llm.when(is_review_followup, Reply(text="Saved."))
    llm.start()
    return llm


def _settings_form(page: str) -> dict[str, str]:
    """The settings form as the browser would post it unchanged: every text field, every checked box."""
    form: dict[str, str] = {}
    for tag in _INPUT.findall(page):
        attrs = {k: v or "" for k, v in _ATTR.findall(tag[len("<input") :])}
        if "name" not in attrs or attrs["name"] == "csrfmiddlewaretoken":
            continue
        if attrs.get("type") == "checkbox":
            if "checked" in attrs:
                form[attrs["name"]] = attrs.get("value") or "on"
        else:
            form[attrs["name"]] = attrs.get("value", "")
    for name, options in _SELECT.findall(page):
        # A browser posts the selected option, or the first when none is marked.
        choices = _OPTION.findall(options)
        form[name] = next((value for value, rest in choices if "selected" in rest), choices[0][0])
    return form


def _field(form: dict[str, str], page: str, section: str, key: str) -> str:
    """The form's name for `section.key` (however the page spells it)."""
    names = {m for m in re.findall(r'name="([^"]+)"', page) if re.fullmatch(rf"{section}\W+{key}", m)}
    assert len(names) == 1, names
    return names.pop()


def _save_settings(client: Http, changes: dict[tuple[str, str], str]) -> None:
    page = client.get("/settings/").body
    form = _settings_form(page)
    for (section, key), value in changes.items():
        form[_field(form, page, section, key)] = value
    resp = client.csrf_post("/settings/", form)
    assert resp.status in (200, 302) and "must be" not in resp.body, resp.body[-2000:]


def _reviews(home: CLIHome) -> list[tuple[Any, ...]]:
    return home.query("SELECT id, status, worker FROM knowledge_reviewrun ORDER BY id")


def test_a_setting_saved_on_worker_a_governs_the_next_turn_on_b_and_the_next_review_on_the_queue(tmp_path):
    llm = _llm()
    env = {**model_env(llm.base_url), "HERMES_QUEUE": "tasks"}
    if os.environ.get("REDIS_URL"):  # the scale-out profile: toasts and frames across workers
        env.update(REDIS_URL=os.environ["REDIS_URL"], HERMES_REDIS_PREFIX=secrets.token_hex(4))
    worker = None
    try:
        with (
            start_daphne(tmp_path / "home", config=EVERY_SECOND_TURN, extra_env=env) as a,
            another_worker(a, extra_env=env) as b,
        ):
            home = CLIHome(a.home, base_url=llm.base_url)
            worker = start_learning_worker(
                home, tmp_path / "worker.log", **{k: v for k, v in env.items() if "OPENAI" not in k}
            )
            on_a, on_b = Http(a.port), Http(b.port)
            on_a.login(a.token)
            on_b.login(b.token)
            assert on_b.get("/").status == 200
            (session_id,) = a.query("SELECT id FROM knowledge_chatsession")[0]
            user_md = a.home / "memories" / "USER.md"

            # Before the change: every second turn on B is reviewed, and the queue worker writes at once.
            say(b, on_b, session_id, "I use Debian base images", "Which tag is smallest?")
            wait_until(lambda: [r[1] for r in _reviews(home)] == ["done"], "the first review")
            assert "Prefers Debian base images" in user_md.read_text(encoding="utf-8")

            _save_settings(on_a, {("memory", "nudge_interval"): "1", ("memory", "write_approval"): "on"})
            on_disk = yaml.safe_load((a.home / "config.yaml").read_text(encoding="utf-8"))
            assert on_disk["memory"]["nudge_interval"] == 1 and on_disk["memory"]["write_approval"] is True

            # The next turn on B, one turn after the last review: reviewed at the new interval (1, not 2).
            say(b, on_b, session_id, "I edit with Neovim")
            wait_until(lambda: len(_reviews(home)) == 2, "a review after the first turn since the save", timeout=30)
            wait_until(lambda: _reviews(home)[1][1] == "done", "the second review")
            # ... run by the queue worker (no restart) under the new rule: its write waits for approval.
            assert _reviews(home)[1][2].endswith(f":{worker.pid}")
            pending = home.query("SELECT kind, status, arguments FROM knowledge_pendingwrite")
            assert [(kind, status) for kind, status, _ in pending] == [("memory", "pending")]
            assert "Edits with Neovim" in str(pending[0][2])
            assert "Neovim" not in user_md.read_text(encoding="utf-8")
            for server in (a, b):
                assert "Traceback" not in server.log()
    finally:
        if worker is not None:
            worker.terminate()
            worker.wait(timeout=30)
        llm.stop()
