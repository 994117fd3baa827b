from django.contrib import admin
from django.urls import include, path

from hermes_site.access import login_view

urlpatterns = [
    path("login", login_view, name="login"),
    path("admin/", admin.site.urls),
    path("", include("knowledge.urls")),
    path("", include("agent.urls")),
]
