"""The README's deployment pieces, followed as written: its marked shell blocks run in fresh
shells (no variable of this test process leaks in) against a PostgreSQL cluster set up as
Debian's package sets one up (peer auth on the socket, a password over TCP) and a Redis, both
started with scripts/services.sh; the Procfile's processes are started as a process manager
would; the printed login links must log a browser into the dashboard on each worker, and the
system checks must find nothing missing. The nginx example then proxies both workers, without
sticky sessions, websockets included (when nginx is installed).

The only changes to the README's text: free ports in place of 5432, 6379, 8765, 8766 and 8080
(so the test never meets a server of the machine), and this interpreter for `.venv/bin/python`
when the checkout has no `.venv`. The role's password is typed at the prompt as the README's
placeholder, `PASSWORD`, so DATABASE_URL stays as written.
"""

from __future__ import annotations

import asyncio
import http.cookiejar
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
from websockets.asyncio.client import connect as ws_connect
from websockets.typing import Origin

ROOT = Path(__file__).resolve().parent.parent
_BLOCK = re.compile(r"<!-- deployment: ([\w-]+) -->\n```[\w-]*\n(.*?)```", re.S)
PASSWORD = "PASSWORD"
PORTS = ("5432", "6379", "8765", "8766", "8080")

needs_services = pytest.mark.skipif(
    not (os.environ.get("DATABASE_URL") and os.environ.get("REDIS_URL")),
    reason="the scale-out profile: scripts/test.sh installs and starts PostgreSQL and Redis",
)
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the README's role step runs `su postgres` as root")


def readme_blocks() -> dict[str, str]:
    return dict(_BLOCK.findall((ROOT / "README.md").read_text(encoding="utf-8")))


def test_the_readme_marks_each_deployment_block():
    blocks = readme_blocks()
    assert list(blocks) == ["database", "environment", "procfile", "links", "nginx"]
    assert [line.split(":")[0] for line in blocks["procfile"].splitlines()] == ["web1", "web2", "learning"]
    assert "createdb -O hermes hermes" in blocks["database"]
    assert "server 127.0.0.1:8765;" in blocks["nginx"] and "server 127.0.0.1:8766;" in blocks["nginx"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def _services(script: str, env: dict[str, str]) -> None:
    subprocess.run(["bash", "-ec", f"source scripts/services.sh\n{script}"], cwd=ROOT, env=env, check=True, timeout=120)


@dataclass
class Deployment:
    ports: dict[str, str]
    home: Path  # the fresh shells' $HOME
    logs: Path
    fresh_env: dict[str, str]

    def literal(self, text: str) -> str:
        """A README block as it runs here: free ports, and this interpreter without a .venv."""
        for port in PORTS:
            text = re.sub(rf"\b{port}\b", self.ports[port], text)
        if not (ROOT / ".venv" / "bin" / "python").exists():
            text = text.replace(".venv/bin/python", sys.executable)
        return text

    def shell(self, script: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", "-ec", script], cwd=ROOT, env=self.fresh_env, capture_output=True, text=True, timeout=timeout
        )

    def exports(self) -> str:
        """The environment block's exports: what every process of the deployment runs with."""
        lines = self.literal(readme_blocks()["environment"]).splitlines()
        return "\n".join(line for line in lines if line.startswith("export "))

    def log_text(self) -> str:
        return "\n".join(f"== {p.name}\n{p.read_text(errors='replace')}" for p in sorted(self.logs.glob("*.log")))


def _wait(predicate, what: str, deployment: Deployment, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}\n{deployment.log_text()}"
        time.sleep(0.2)


def _workers_seen(d: Deployment) -> int:
    url = f"postgres://hermes:{PASSWORD}@127.0.0.1:{d.ports['5432']}/hermes"
    try:
        with psycopg.connect(url, connect_timeout=5) as conn:
            (seen,) = conn.execute("SELECT count(*) FROM knowledge_workerprocess").fetchall()
            return int(seen[0])
    except psycopg.Error:  # not migrated yet
        return 0


@pytest.fixture(scope="module")
def deployment() -> Iterator[Deployment]:
    # Not under pytest's own temporary folder, which only its owner may enter: the postgres user
    # runs the cluster inside this one (as scripts/test.sh does with its mktemp -d).
    base = Path(tempfile.mkdtemp(prefix="hermes-readme-"))
    base.chmod(0o755)
    services, home, logs = base / "services", base / "home", base / "logs"
    for folder in (services, home, logs):
        folder.mkdir()
    ports = {port: str(_free_port()) for port in PORTS}
    fresh = {"HOME": str(home), "PATH": os.environ["PATH"], "LANG": "C.UTF-8"}
    pg_env = {**fresh, "PG_INITDB_AUTH": "--auth-local=peer --auth-host=scram-sha-256", "PG_CREATE_DB": ""}
    _services(f"start_postgres '{services}' {ports['5432']}\nstart_redis '{services}' {ports['6379']}", pg_env)
    d = Deployment(ports, home, logs, fresh)
    manager = None
    try:
        # As root, once: the role (its password typed twice at the prompt) and its database. The
        # cluster's socket is in its own folder, not Debian's /var/run/postgresql: PGHOST says where.
        database = subprocess.run(
            ["bash", "-ec", d.literal(readme_blocks()["database"])],
            cwd=ROOT,
            env={**fresh, "PGHOST": str(services / "pg"), "PGPORT": ports["5432"]},
            input=f"{PASSWORD}\n{PASSWORD}\n",
            capture_output=True,
            text=True,
            start_new_session=True,  # no terminal: createuser reads the password from standard input
            timeout=60,
        )
        assert database.returncode == 0, database.stderr
        # The environment block, then the Procfile's processes, as a process manager runs them.
        procfile = [line.partition(":") for line in d.literal(readme_blocks()["procfile"]).splitlines()]
        started = "\n".join(f"{cmd.strip()} > '{logs}/{name}.log' 2>&1 &" for name, _, cmd in procfile)
        script = f"{d.literal(readme_blocks()['environment'])}\n{started}\nwait\n"
        with (logs / "shell.log").open("wb") as out:
            manager = subprocess.Popen(
                ["bash", "-ec", script],
                cwd=ROOT,
                env=fresh,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        _wait(lambda: _listening(int(ports["8765"])) and _listening(int(ports["8766"])), "both workers", d)
        _wait(lambda: _workers_seen(d) == 3, "both workers and the learning_worker to say they are alive", d)
        yield d
    finally:
        if manager is not None:
            os.killpg(manager.pid, signal.SIGTERM)  # the process group of the shell this fixture started
            try:
                manager.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(manager.pid, signal.SIGKILL)
                manager.wait()
        _services(
            f"HERMES_PG_BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)\nstop_services '{services}'", fresh
        )
        shutil.rmtree(base, ignore_errors=True)


def _logs_in(link: str) -> tuple[int, str, str]:
    """Open `link` as a browser does (cookies kept, redirects followed): status, final path, page."""
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    with opener.open(link, timeout=60) as resp:
        return resp.status, urllib.parse.urlsplit(resp.url).path, resp.read().decode("utf-8", "replace")


@needs_services
@needs_root
def test_the_readme_brings_up_two_workers_whose_printed_links_log_in(deployment: Deployment):
    d = deployment
    out = d.shell(f"{d.exports()}\n{d.literal(readme_blocks()['links'])}")
    assert out.returncode == 0, out.stderr + d.log_text()
    links = [line for line in out.stdout.splitlines() if line.startswith("http://")]
    assert [urllib.parse.urlsplit(link).port for link in links] == [int(d.ports["8765"]), int(d.ports["8766"])]
    assert "System check identified no issues (0 silenced)." in out.stdout, out.stdout + out.stderr
    for link in links:
        status, path, page = _logs_in(link)
        assert (status, path) == (200, "/"), link
        assert "Log out" in page  # the dashboard, logged in


def _nginx_conf(d: Deployment, folder: Path) -> Path:
    """The README's example inside a minimal main file (a pid file and logs of its own)."""
    conf = folder / "nginx.conf"
    main = [
        "daemon off;",
        f"pid {folder}/nginx.pid;",
        f"error_log {folder}/error.log;",
        "events {}",
        "http {",
        "log_format upstream '$request_uri $upstream_addr';",  # which worker served each request
        f"access_log {folder}/access.log upstream;",
        f"client_body_temp_path {folder}/body;",
        f"proxy_temp_path {folder}/proxy;",
        d.literal(readme_blocks()["nginx"]),
        "}",
    ]
    conf.write_text("\n".join(main), encoding="utf-8")
    return conf


async def _notify_socket_opens(port: int, cookie: str) -> None:
    url = f"ws://127.0.0.1:{port}/ws/notify/"
    async with ws_connect(url, origin=Origin(f"http://127.0.0.1:{port}"), additional_headers={"Cookie": cookie}):
        pass


@needs_services
@needs_root
@pytest.mark.skipif(not shutil.which("nginx"), reason="nginx is not installed (Debian: apt-get install nginx-light)")
def test_the_readmes_nginx_example_serves_both_workers_with_websockets(deployment: Deployment):
    d = deployment
    folder = d.logs / "nginx"
    folder.mkdir(exist_ok=True)
    nginx = subprocess.Popen(["nginx", "-c", str(_nginx_conf(d, folder))], stderr=subprocess.PIPE)
    try:
        proxy = int(d.ports["8080"])
        _wait(lambda: _listening(proxy) or nginx.poll() is not None, "nginx", d, timeout=30)
        assert nginx.poll() is None, nginx.stderr.read() if nginx.stderr else ""
        out = d.shell(f"{d.exports()}\n{d.literal('.venv/bin/python manage.py login_url --port 8080')}")
        (link,) = out.stdout.split()
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        with opener.open(link, timeout=60) as resp:
            assert (resp.status, urllib.parse.urlsplit(resp.url).path) == (200, "/")
        for n in range(4):  # no sticky sessions: the proxy takes turns, and each worker knows the login
            with opener.open(f"http://127.0.0.1:{proxy}/memory/?through=nginx-{n}", timeout=60) as resp:
                assert resp.status == 200 and "Log out" in resp.read().decode("utf-8", "replace")

        # nginx writes a request's log line after it sent the response: wait for all four.
        def through() -> list[str]:
            lines = (folder / "access.log").read_text(encoding="utf-8").splitlines()
            return [line for line in lines if "through=nginx-" in line]

        _wait(lambda: len(through()) >= 4, "nginx's access log", d, timeout=30)
        log = (folder / "access.log").read_text(encoding="utf-8").splitlines()
        served = [line.rsplit(":", 1)[1] for line in through()]
        assert sorted(served) == sorted([d.ports["8765"], d.ports["8766"]] * 2), log
        cookie = "; ".join(f"{c.name}={c.value}" for c in jar)
        asyncio.run(_notify_socket_opens(proxy, cookie))  # the upgrade passes, Host and Origin agree
    finally:
        nginx.terminate()
        nginx.wait(timeout=30)
