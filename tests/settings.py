"""Settings for pytest (DJANGO_SETTINGS_MODULE in pyproject.toml): the product's own settings
with a fresh temporary HERMES_HOME per pytest process, so no test touches a person's home, and
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
