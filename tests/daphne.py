"""A real daphne server in a subprocess, for the tests that need the whole stack.

One helper for every such test (browser fixtures, the origin/security tests, the soak and
restart tests): its own HERMES_HOME with a migrated database, a known login token and a
config.yaml, on a free port read back from daphne's log (it starts on port 0 and logs the port it bound). `Http`
is a small cookie-keeping client with full control of the Host and Origin headers.
"""

from __future__ import annotations

import http.client
import os
import re
import secrets
import subprocess
import sys
import time
import urllib.parse
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_site import websocket_server
from tests import dbs

ROOT = Path(__file__).resolve().parent.parent
_LISTENING = re.compile(r"Listening on TCP address [\d.]+:(\d+)")


@dataclass
class Daphne:
    port: int
    home: Path
    token: str
    process: subprocess.Popen[bytes]
    log_path: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def origin(self) -> str:
        return self.url

    def login_url(self, next_path: str = "/") -> str:
        return f"{self.url}/login?token={self.token}&next={next_path}"

    def query(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        """Read the server's database (e.g. what was stored) from the test."""
        return dbs.query(self.home, sql, *args)

    def write_skill(self, name: str, description: str, body: str, category: str = "") -> Path:
        folder = self.home / "skills" / category / name if category else self.home / "skills" / name
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "SKILL.md"
        path.write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}\n", encoding="utf-8")
        return path

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")


def server_env(home: Path, extra_env: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("HERMES_DB", "HERMES_DEBUG")}
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "HERMES_MODEL"):
        env.pop(var, None)
    env.update(
        HERMES_HOME=str(home),
        **dbs.database_env(home),
        DJANGO_SETTINGS_MODULE="hermes_site.settings",
        PYTHONUNBUFFERED="1",
        HERMES_LOG_LEVEL="INFO",  # daphne's "Listening on TCP address" line carries the real port
        **(extra_env or {}),
    )
    return env


# As in this process (tests/conftest.py): no automatic chat title, and no verifier's second reading
# of learned writes, unless a test's config asks for them: each is one more model request, which
# would take a scripted reply meant for something else.
TEST_DEFAULTS = {"chat": "chat:\n  auto_title: false\n", "learning": "learning:\n  verify: 'off'\n"}


def with_test_defaults(config: str) -> str:
    """`config` with the test defaults added for the sections it does not set."""
    missing = [text for section, text in TEST_DEFAULTS.items() if f"{section}:" not in config]
    if not missing:
        return config
    return config + ("" if not config or config.endswith("\n") else "\n") + "".join(missing)


def model_env(base_url: str) -> dict[str, str]:
    return {"OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "test-key", "HERMES_MODEL": "scripted-model"}


def _wait_for_port(proc: subprocess.Popen[bytes], log_path: Path, timeout: float = 60) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        match = _LISTENING.search(log_path.read_text(encoding="utf-8", errors="replace"))
        if match:
            return int(match.group(1))
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    raise RuntimeError(f"daphne did not start:\n{log_path.read_text(errors='replace')}")


@contextmanager
def start_daphne(home: Path, config: str = "", extra_env: dict[str, str] | None = None) -> Iterator[Daphne]:
    """daphne on 127.0.0.1, port 0 (read back from its log), with its own home and database."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(with_test_defaults(config), encoding="utf-8")
    token = secrets.token_urlsafe(18)
    (home / "login_token").write_text(token, encoding="utf-8")
    env = server_env(home, extra_env)
    migrate = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert migrate.returncode == 0, migrate.stderr
    with _daphne_process(home, env, "daphne.log") as (port, proc, log_path):
        yield Daphne(port, home, token, proc, log_path)


@contextmanager
def another_worker(server: Daphne, extra_env: dict[str, str] | None = None) -> Iterator[Daphne]:
    """A second daphne process on the same home and database (as behind a proxy), own port."""
    env = server_env(server.home, extra_env)
    with _daphne_process(server.home, env, f"daphne-{secrets.token_hex(3)}.log") as (port, proc, log_path):
        yield Daphne(port, server.home, server.token, proc, log_path)


@contextmanager
def _daphne_process(
    home: Path, env: dict[str, str], log_name: str
) -> Iterator[tuple[int, subprocess.Popen[bytes], Path]]:
    log_path = home / log_name
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            websocket_server.command("127.0.0.1", 0),  # daphne with the project's websocket limits
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        yield _wait_for_port(proc, log_path), proc, log_path
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@dataclass
class Resp:
    status: int
    headers: dict[str, str]
    body: str

    @property
    def location(self) -> str:
        return self.headers.get("location", "")


@dataclass
class Http:
    """A cookie-keeping HTTP/1.1 client with full control of the Host and Origin headers."""

    port: int
    cookies: dict[str, str] = field(default_factory=dict)

    def request(
        self,
        method: str,
        path: str,
        *,
        form: dict[str, str] | None = None,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
        host: str | None = None,
        timeout: float = 30,
    ) -> Resp:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        all_headers = {"Host": host or f"127.0.0.1:{self.port}"}
        if self.cookies:
            all_headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        if form is not None:
            body = urllib.parse.urlencode(form).encode()
            all_headers["Content-Type"] = "application/x-www-form-urlencoded"
        all_headers.update(headers or {})
        try:
            conn.request(method, path, body=body, headers=all_headers)
            raw = conn.getresponse()
            data = raw.read().decode("utf-8", errors="replace")
            for cookie in raw.headers.get_all("Set-Cookie") or []:
                name, _, value = cookie.split(";", 1)[0].partition("=")
                self.cookies[name.strip()] = value.strip()
            return Resp(raw.status, {k.lower(): v for k, v in raw.getheaders()}, data)
        finally:
            conn.close()

    def get(self, path: str, **kw: Any) -> Resp:
        return self.request("GET", path, **kw)

    def post(self, path: str, form: dict[str, str] | None = None, **kw: Any) -> Resp:
        return self.request("POST", path, form=form or {}, **kw)

    def login(self, token: str) -> None:
        resp = self.get(f"/login?token={token}")
        assert resp.status == 302 and "sessionid" in self.cookies, resp
        # A page with a form sets the CSRF cookie, as the browser would get it.
        assert self.get("/memory/").status == 200 and "csrftoken" in self.cookies

    def csrf_post(self, path: str, form: dict[str, str] | None = None, **kw: Any) -> Resp:
        """A POST as the dashboard's own pages make it: token in the form and same-origin headers."""
        headers = {"Origin": f"http://127.0.0.1:{self.port}", **kw.pop("headers", {})}
        return self.post(
            path, {**(form or {}), "csrfmiddlewaretoken": self.cookies["csrftoken"]}, headers=headers, **kw
        )


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def upload(client: Http, session: str, name: str, data: bytes) -> Resp:
    """POST a PDF to the chat's attachment view as the browser does (multipart, CSRF, same origin)."""
    boundary = uuid.uuid4().hex
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="session"\r\n\r\n{session}\r\n'
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
            "Content-Type: application/pdf\r\n\r\n"
        ).encode()
        + data
        + f"\r\n--{boundary}--\r\n".encode()
    )
    headers = {
        "Content-Type": f"multipart/form-data; boundary={boundary}",
        "Origin": f"http://127.0.0.1:{client.port}",
        "X-CSRFToken": client.cookies["csrftoken"],
    }
    return client.request("POST", "/chat/attach/", body=body, headers=headers, timeout=120)
