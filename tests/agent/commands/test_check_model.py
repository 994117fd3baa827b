"""`manage.py check_model`, run as a real subprocess against scripted servers."""

from __future__ import annotations

import json

import pytest

from tests import dbs
from tests.cli import new_home
from tests.fakellm import Reply
from tests.wire.ollama import CASES as OLLAMA
from tests.wire.replay import uses

pytestmark = pytest.mark.slow


def _stored(home) -> dict:
    rows = dbs.query(home.path, "select model, data from knowledge_modelcapabilities")
    # SQLite hands back the JSON text, PostgreSQL the decoded object.
    return {model: json.loads(data) if isinstance(data, str) else data for model, data in rows}


def test_check_model_reports_and_stores_a_missing_feature(tmp_path, server):
    no_tools = next(c for c in OLLAMA if c.refuses == "tools")
    server.when(uses("tools"), Reply(raw=no_tools.raw))
    home = new_home(tmp_path, server.base_url)
    r = home.manage("check_model")
    assert r.returncode == 0, r.stderr
    assert "Plain chat: yes" in r.stdout and "Tool call: no" in r.stdout and "System role: yes" in r.stdout
    assert "cannot save memories or skills itself" in r.stdout
    assert _stored(home)["scripted-model"]["tools"] is False
    # the chat that follows never offers tools to this model, says nothing more about it, and
    # spawns no review although one is due (a review is a tool-calling agent)
    (home.path / "config.yaml").write_text("memory:\n  nudge_interval: 1\n")
    r2 = home.manage("chat", "-m", "hi")
    assert r2.returncode == 0, r2.stderr
    assert "tools" not in server.requests[-1] and "note:" not in r2.stderr
    assert dbs.query(home.path, "select count(*) from knowledge_reviewrun") == [(0,)]


def test_check_model_on_a_dead_server_is_one_error_line(tmp_path):
    home = new_home(tmp_path, "http://127.0.0.1:9/v1")
    (home.path / "config.yaml").write_text("model:\n  max_retries: 0\n  timeout: 2\n")
    r = home.manage("check_model")
    assert r.returncode == 1
    assert [line for line in r.stderr.splitlines() if line.startswith("error:")] == [r.stderr.strip()]
    assert "not reachable" in r.stderr and "Traceback" not in r.stderr
