"""The product's settings never branch on being under test: a server started from a process
that carries pytest's marker still uses the HERMES_HOME it is given (its memory, its token)."""

from __future__ import annotations

import os

import pytest

from hermes_site import settings as product_settings
from tests import dbs
from tests.cli import CLIHome
from tests.daphne import Http, start_daphne


@pytest.mark.slow
def test_server_started_with_pytest_marker_uses_the_given_home(tmp_path):
    assert "PYTEST_VERSION" in os.environ  # inherited by the server below, as by any child
    home = tmp_path / "home"
    (home / "memories").mkdir(parents=True)
    (home / "memories" / "USER.md").write_text("Prefers short answers in British English", encoding="utf-8")
    with start_daphne(home, extra_env={"PYTEST_VERSION": os.environ["PYTEST_VERSION"]}) as server:
        client = Http(server.port)
        client.login(server.token)  # the token written into that home is the one the server checks
        page = client.get("/memory/")
        assert page.status == 200
        assert "Prefers short answers in British English" in page.body
        assert dbs.on_postgres() or (home / "dashboard.sqlite3").exists()


def test_product_settings_have_no_test_client_host():
    assert "testserver" not in product_settings.ALLOWED_HOSTS


@pytest.mark.slow  # manage.py check in a subprocess
def test_a_reclaim_interval_that_is_not_a_number_of_seconds_stops_start_up_with_its_name(tmp_path):
    home = CLIHome(tmp_path / "home")
    for wrong in ("soon", "0", "-5"):
        result = home.manage("check", env={"HERMES_RECLAIM_SECONDS": wrong})
        assert result.returncode != 0
        assert f"HERMES_RECLAIM_SECONDS must be a number of seconds between 0 and 86400, got '{wrong}'" in result.stderr
