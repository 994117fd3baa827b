"""ASGI entry point: HTTP through Django, websockets through Channels (served by daphne)."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hermes_site.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from agent import reclaim  # noqa: E402
from agent.routing import websocket_urlpatterns  # noqa: E402
from knowledge.history.presence import SERVER  # noqa: E402
from knowledge.history.runs import recover_after_restart  # noqa: E402

# Once per server process, now and every HERMES_RECLAIM_SECONDS: say it is alive, and run here the
# reviews and session ends a process that died left. Then free the turns dead processes held.
reclaim.start(SERVER, reclaim.on_threads)
recover_after_restart()

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)
