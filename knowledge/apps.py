from django.apps import AppConfig


class KnowledgeConfig(AppConfig):
    name = "knowledge"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The stores register their undo handlers with the change log on import.
        import knowledge.memory_store
        import knowledge.skills  # noqa: F401
