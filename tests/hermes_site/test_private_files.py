"""Files only the owner can read: a new HERMES_HOME, its database (and -wal/-shm), the login token
and the session key are created private whatever the umask; an exposed home is named at start-up."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_site.access import exposed_home_warning

ROOT = Path(__file__).resolve().parents[2]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.slow  # a fresh Python process migrates the home
def test_a_new_home_and_its_secrets_are_the_owners_alone_under_umask_022(tmp_path: Path) -> None:
    home = tmp_path / "fresh" / "home"
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "HERMES_DB", "DJANGO_SETTINGS_MODULE")}
    env |= {"HERMES_HOME": str(home), "DJANGO_SETTINGS_MODULE": "hermes_site.settings"}
    code = (
        "import os; os.umask(0o022); import django; django.setup();"
        "from django.core.management import call_command; call_command('migrate', verbosity=0);"
        "from hermes_site.access import login_token; login_token();"
        # The signing key is made on first use (a session or CSRF cookie), as a first page view does.
        "from django.conf import settings; str(settings.SECRET_KEY);"
        "from django.db import connection; c = connection.cursor(); c.execute('PRAGMA journal_mode=WAL');"
        "c.execute('CREATE TABLE IF NOT EXISTS t (x)'); c.execute('INSERT INTO t VALUES (1)');"
        "print('ok')"
    )
    # The umask is set before anything touches the home.
    out = subprocess.run(
        [sys.executable, "-c", "import os; os.umask(0o022); exec(open(0).read())"],
        input=code,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert _mode(home) == 0o700
    db = home / "dashboard.sqlite3"
    assert _mode(db) == 0o600
    for extra in ("dashboard.sqlite3-wal", "dashboard.sqlite3-shm"):
        if (home / extra).exists():
            assert _mode(home / extra) == 0o600, extra
    assert _mode(home / "login_token") == 0o600 and _mode(home / "secret_key") == 0o600
    assert exposed_home_warning(home) == ""


def test_an_exposed_home_gets_one_warning_naming_the_files_and_the_chmod(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o755)
    home.chmod(0o755)
    for name in ("dashboard.sqlite3", "login_token"):
        (home / name).write_text("x")
        (home / name).chmod(0o644)
    (home / "secret_key").write_text("x")
    (home / "secret_key").chmod(0o600)
    warning = exposed_home_warning(home)
    assert warning.count("\n") == 0 and warning.startswith("warning: other local accounts can read")
    assert str(home / "dashboard.sqlite3") in warning and str(home / "login_token") in warning
    assert "secret_key" not in warning
    assert (
        f"chmod 700 {home}" in warning and f"chmod 600 {home / 'dashboard.sqlite3'} {home / 'login_token'}" in warning
    )
    subprocess.run(warning.split("run: ", 1)[1], shell=True, check=True)
    assert exposed_home_warning(home) == ""
