from django.apps import AppConfig


class KnowledgeConfig(AppConfig):
    name = "knowledge"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The stores' undo modules register their restorers with the change log on import.
        import knowledge.memory.store
        import knowledge.skills.undo  # noqa: F401
