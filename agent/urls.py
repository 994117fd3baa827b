from django.urls import path

from agent import views

urlpatterns = [
    path("", views.home, name="home"),
    path("c/new/", views.new_chat, name="new_chat"),
    path("c/sessions/", views.sessions, name="chat_sessions"),
    path("c/<str:session_id>/", views.chat, name="chat"),
    path("c/<str:session_id>/rename/", views.rename, name="chat_rename"),
    path("c/<str:session_id>/delete/", views.delete, name="chat_delete"),
    path("api/skills/slash", views.slash_skills, name="slash_skills"),
    path("setup/model/", views.setup_save, name="setup_save"),
    path("setup/check/", views.setup_check, name="setup_check"),
]
