"""Attaching a PDF or an image to a chat message: the upload and the image's own address.

A PDF is read by a capped worker process (agent/chat/pdf_text.py) and its text goes back to the
page, which puts it in the message like an attached text file. An image is kept in the home (knowledge/attachments.py)
and the page sends its id with the message; the runner links it to the stored message and the
model gets it as an image part (agent/chat/image_parts.py). Limits are stated in
docs/BEHAVIOUR.md, "The chat"; every refusal is a JSON {"error": sentence} and nothing the
person typed is touched (the page keeps it).
"""

from __future__ import annotations

from django import forms
from django.http import FileResponse, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from agent.chat import pdf_text
from foundation import config as hermes_config
from knowledge import attachments, capabilities
from knowledge.models import ChatSession

_MB = 1024 * 1024
PDF_BYTES = 10 * _MB
IMAGE_BYTES = 5 * _MB
IMAGES_PER_MESSAGE = 4
IMAGE_KINDS = "PNG, JPEG, WebP or GIF"
IMAGES_REFUSED = (
    "This model does not accept images. Choose a model that reads images (the Model box), or send the text alone."
)


class AttachForm(forms.Form):
    session = forms.CharField(max_length=64, error_messages={"required": "Which chat the file is for is missing."})
    file = forms.FileField(
        allow_empty_file=False,
        error_messages={"required": "No file was sent.", "empty": "The file is empty. It was not attached."},
    )


def _refused(message: str, status: int = 400) -> JsonResponse:
    return JsonResponse({"error": message}, status=status)


def _size(n: int) -> str:
    return f"{n / _MB:.1f} MB" if n >= _MB else f"{max(1, n // 1000)} KB"


def _model_refuses_images(session: ChatSession) -> bool:
    """Whether the chat's model is known (from a refusal) not to accept images."""
    config = hermes_config.get()
    model = session.model or config.model_name
    return bool(model) and (capabilities.known(config.base_url, model) or {}).get("images") is False


def _image(session: ChatSession, name: str, data: bytes, ext: str) -> JsonResponse:
    if len(data) > IMAGE_BYTES:
        limit = f"images are limited to {_size(IMAGE_BYTES)} each"
        return _refused(f"{name} is {_size(len(data))}; {limit}. It was not attached.")
    if _model_refuses_images(session):
        return _refused(f"{name} was not attached. {IMAGES_REFUSED}")
    att = attachments.store_image(name, data, ext, session.pk)
    url = reverse("chat_attachment", args=[att.pk])
    return JsonResponse({"kind": "image", "id": att.pk, "name": att.name, "size": att.size, "url": url})


def _pdf(name: str, data: bytes) -> JsonResponse:
    try:
        got = pdf_text.extract(name, data, hermes_config.get().agent.max_message_chars)
    except pdf_text.PdfRefused as exc:
        return _refused(str(exc))
    return JsonResponse({"kind": "text", "name": name, "text": got.text, "note": got.note, "size": len(data)})


@require_POST
def upload(request: HttpRequest) -> HttpResponse:
    """POST a file (form field "file") for chat "session": a PDF's text, or a stored image's id."""
    form = AttachForm(request.POST, request.FILES)
    if not form.is_valid():
        return _refused(next(iter(e for errors in form.errors.values() for e in errors)))
    session = ChatSession.objects.filter(pk=form.cleaned_data["session"]).first()
    if session is None:
        return _refused("This chat no longer exists (it was deleted).", 404)
    file = form.cleaned_data["file"]
    name = str(file.name or "attachment")
    if file.size > PDF_BYTES:
        limit = f"attachments are limited to {_size(PDF_BYTES)}"
        return _refused(f"{name} is {_size(file.size)}; {limit}. It was not attached.")
    data = file.read()
    ext = attachments.sniff(data)
    if ext is not None:
        return _image(session, name, data, ext)
    if pdf_text.is_pdf(data) or name.lower().endswith(".pdf"):
        return _pdf(name, data)
    return _refused(
        f"{name} is neither a PDF nor an image ({IMAGE_KINDS}). Text files are attached as they are; "
        "other kinds cannot be read. It was not attached."
    )


@require_GET
def image(request: HttpRequest, pk: int) -> HttpResponse:
    """An attached image, as the type its bytes were recognised as, never anything a browser runs."""
    att = get_object_or_404(attachments.MessageAttachment, pk=pk)
    try:
        handle = att.path.open("rb")
    except FileNotFoundError:
        return HttpResponse("This image is no longer in the home folder.", status=404, content_type="text/plain")
    response = FileResponse(handle, content_type=att.mime)
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "default-src 'none'; sandbox"
    response["Cache-Control"] = "private, max-age=86400"
    return response
