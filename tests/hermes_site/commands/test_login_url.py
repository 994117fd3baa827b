"""`manage.py login_url`: the link that logs a browser in, for each port a worker listens on."""

from __future__ import annotations

import pytest

from tests.cli import CLIHome, new_home
from tests.daphne import Http, start_daphne

pytestmark = pytest.mark.slow


def test_it_prints_one_link_per_port_with_the_homes_token(tmp_path):
    home = new_home(tmp_path)
    r = home.manage("login_url", "--port", "8801", "--port", "8802")
    assert r.returncode == 0, r.stderr
    token = (home.path / "login_token").read_text().strip()
    assert r.stdout.splitlines() == [
        f"http://127.0.0.1:8801/login?token={token}",
        f"http://127.0.0.1:8802/login?token={token}",
    ]


def test_the_link_it_prints_logs_a_browser_in(tmp_path):
    with start_daphne(tmp_path / "home") as server:
        r = CLIHome(server.home).manage("login_url", "--port", str(server.port))
        assert r.returncode == 0, r.stderr
        path = r.stdout.strip().removeprefix(f"http://127.0.0.1:{server.port}")
        client = Http(server.port)
        assert client.get(path).status in (302, 303) and "sessionid" in client.cookies
        assert client.get("/").status == 200


def test_the_login_page_names_the_command_that_prints_the_link_again(client):
    page = client.get("/login").content.decode()
    assert "<code>python manage.py login_url</code>" in page
