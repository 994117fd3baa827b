from django.apps import AppConfig


class KnowledgeConfig(AppConfig):
    name = "knowledge"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # An approved item of the curator's report is applied by the curator itself (no tool staged it).
        from knowledge import approvals, source_feedback
        from knowledge.skills import curator

        approvals.register_applier(curator.KIND, curator.apply_pending)
        # An approved "Not relevant" / "Wrong" on an answer's source (a memory entry's is a memory removal).
        approvals.register_applier(source_feedback.KIND, source_feedback.apply_pending)
