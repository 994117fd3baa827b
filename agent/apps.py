from django.apps import AppConfig


class AgentConfig(AppConfig):
    name = "agent"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # An approved pending write is applied by the tool that staged it (knowledge.approvals).
        from agent import recall
        from agent.chat import live
        from agent.tools import memory_tool, skill_tools
        from knowledge import approvals
        from knowledge.search import meaning

        live.listen()  # review notices reach the pages (toasts), from any thread or process
        meaning.register(recall.embedder)  # searches embed their query with the configured model
        # The pending write keeps the result as the model would have read it (its JSON).
        approvals.register_applier("memory", lambda pending, prov: memory_tool.apply_pending(pending, prov).to_json())
        approvals.register_applier("skill", lambda pending, prov: skill_tools.apply_pending(pending, prov).to_json())
