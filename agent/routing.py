"""Websocket routes: one socket per open chat, one notifications socket per open page."""

from typing import Any

from django.urls import path

from agent.chat import consumers

websocket_urlpatterns: list[Any] = [
    path("ws/chat/<str:session_id>/", consumers.ChatConsumer.as_asgi()),
    path("ws/notify/", consumers.NotifyConsumer.as_asgi()),
]
