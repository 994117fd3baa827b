"""Settings for pytest (`--ds` in pyproject.toml's pytest options): the product's own settings
with a fresh temporary HERMES_HOME per pytest process (each pytest-xdist worker has its own), so
no test touches a person's home nor another worker's, and
the host name Django's test client sends.

Subprocesses started by tests (daphne, manage.py, the serve script) are the product itself: they
run with hermes_site.settings and the home each test gives them (see tests/conftest.py).
"""

import os
import tempfile

os.environ["HERMES_HOME"] = tempfile.mkdtemp(prefix="hermes-test-home-")

from hermes_site.settings import *  # noqa: F403
from hermes_site.settings import ALLOWED_HOSTS

ALLOWED_HOSTS = [*ALLOWED_HOSTS, "testserver"]
