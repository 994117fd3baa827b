from django.apps import AppConfig


class SiteConfig(AppConfig):
    """The roof: settings, URLs, ASGI, access and the commands that start the server."""

    name = "hermes_site"

    def ready(self) -> None:
        from hermes_site import config_django

        config_django.register()  # a wrong config.yaml value is a system check error naming the key
