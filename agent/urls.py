from django.urls import path

from agent.chat import actions as chat_actions
from agent.chat import attachments as chat_attachments
from agent.chat import connection_views, list_views, private, review_now, sharing, sources, views

urlpatterns = [
    path("", views.home, name="home"),
    path("c/new/", views.new_chat, name="new_chat"),
    path("c/new/private/", private.new_private_chat, name="new_private_chat"),
    path("c/sessions/", views.sessions, name="chat_sessions"),
    path("c/<str:session_id>/", views.chat, name="chat"),
    path("c/<str:session_id>/rename/", views.rename, name="chat_rename"),
    path("c/<str:session_id>/delete/", views.delete, name="chat_delete"),
    path("c/<str:session_id>/version/", chat_actions.choose_version, name="chat_version"),
    path("c/<str:session_id>/messages/", chat_actions.messages_fragment, name="chat_messages"),
    path("c/<str:session_id>/pin/", list_views.pin, name="chat_pin"),
    path("c/<str:session_id>/archive/", list_views.archive, name="chat_archive"),
    path("c/<str:session_id>/tags/", list_views.tags, name="chat_tags"),
    path("c/<str:session_id>/list-rename/", list_views.list_rename, name="chat_list_rename"),
    path("c/<str:session_id>/settings/", list_views.chat_settings, name="chat_settings"),
    path("c/<str:session_id>/private/", private.switch, name="chat_private"),
    path("c/<str:session_id>/share/", sharing.manage, name="chat_share"),
    path("c/<str:session_id>/share/<int:pk>/revoke/", sharing.revoke, name="chat_share_revoke"),
    path("c/<str:session_id>/review/", review_now.review_now, name="chat_review_now"),
    path("c/<str:session_id>/suggest-title/", chat_actions.suggest_title, name="chat_suggest_title"),
    path("c/<str:session_id>/model/", chat_actions.set_model, name="chat_model"),
    path("c/<str:session_id>/m/<int:message_id>/sources/", sources.sources, name="chat_sources"),
    path("c/<str:session_id>/latest/sources/", sources.latest_sources, name="chat_latest_sources"),
    path(
        "c/<str:session_id>/m/<int:message_id>/sources/feedback/",
        sources.source_feedback_view,
        name="chat_source_feedback",
    ),
    path("c/<str:session_id>/export.md", chat_actions.export_markdown, name="chat_export_md"),
    path("c/<str:session_id>/export.json", chat_actions.export_json, name="chat_export_json"),
    # Public (no login): hermes_site/access.py lets exactly these two through.
    path("s/<str:token>/", sharing.public, name="public_share"),
    path("s/<str:token>/images/<int:pk>/", sharing.public_image, name="public_share_image"),
    path("chat/attach/", chat_attachments.upload, name="chat_attach"),
    path("chat/attachments/<int:pk>/", chat_attachments.image, name="chat_attachment"),
    path("api/models", chat_actions.models, name="chat_models"),
    path("api/skills/slash", views.slash_skills, name="slash_skills"),
    path("settings/connection/", connection_views.save, name="model_connection"),
    path("settings/connection/check/", connection_views.check, name="model_connection_check"),
]
