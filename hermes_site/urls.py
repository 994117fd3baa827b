from django.contrib import admin
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.templatetags.static import static
from django.urls import include, path

from hermes_site.access import login_view, logout_view


def favicon(request: HttpRequest) -> HttpResponse:
    """Browsers ask for /favicon.ico whatever the page's <link rel=icon> says; point them at the SVG
    (a temporary redirect, so a browser never keeps the address if static files move)."""
    return HttpResponseRedirect(static("favicon.svg"))


urlpatterns = [
    path("login", login_view, name="login"),
    path("logout", logout_view, name="logout"),
    path("favicon.ico", favicon, name="favicon"),
    path("admin/", admin.site.urls),
    path("", include("knowledge.urls")),
    path("", include("agent.urls")),
]
