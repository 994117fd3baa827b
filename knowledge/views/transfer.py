"""Import a Hermes home / export everything. The work is in knowledge/transfer/hermes_import.py."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import UploadedFile
from django.http import FileResponse, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_POST

from knowledge.transfer import export as home_export
from knowledge.transfer import hermes_import as transfer
from knowledge.views.forms import errors_text

_MB = 1024 * 1024


def _page(request: HttpRequest, status: int = 200, **extra: Any) -> HttpResponse:
    ctx = {"nav": "settings", "imports": transfer.recent_imports(), "max_mb": transfer.MAX_ARCHIVE_BYTES // _MB}
    ctx.update(extra)
    return render(request, "knowledge/transfer.html", ctx, status=status)


@require_GET
def transfer_page(request: HttpRequest) -> HttpResponse:
    return _page(request)


class ImportForm(forms.Form):
    """An uploaded archive, or the path of a Hermes home (folder or archive) on this machine."""

    archive = forms.FileField(required=False)
    path = forms.CharField(required=False)

    def clean_archive(self) -> UploadedFile | None:
        upload: UploadedFile | None = self.cleaned_data["archive"]
        if upload is not None and upload.size is not None and upload.size > transfer.MAX_ARCHIVE_BYTES:
            raise ValidationError(
                f"The upload is {upload.size / _MB:.1f} MB; archives up to {transfer.MAX_ARCHIVE_BYTES // _MB} MB "
                "can be imported. Import a folder on this machine by its path instead."
            )
        return upload

    def clean_path(self) -> str:
        path = str(self.cleaned_data["path"])
        if path and not Path(path).expanduser().is_absolute():
            raise ValidationError(f"'{path}' is not an absolute path on this machine.")
        return path

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if not self.errors and not data.get("archive") and not data.get("path"):
            raise ValidationError("Choose a .zip or .tar.gz of a Hermes home, or give the path of a folder.")
        return data

    def run(self) -> transfer.ImportReport | None:
        """Import what was chosen; None (and the importer's refusal as the form's error) if refused."""
        upload, path = self.cleaned_data.get("archive"), self.cleaned_data["path"]
        try:
            if upload is not None:
                return transfer.import_archive(upload.file, upload.name or "upload")
            return transfer.import_path(Path(path))
        except transfer.TransferError as exc:
            self.add_error(None, str(exc))
            return None


@require_POST
def import_view(request: HttpRequest) -> HttpResponse:
    # Refused before the body is used; Django has spooled it to a temp file, not memory.
    if int(request.META.get("CONTENT_LENGTH") or 0) > transfer.MAX_ARCHIVE_BYTES + _MB:
        return _page(request, 413, error=f"The upload is larger than {transfer.MAX_ARCHIVE_BYTES // _MB} MB.")
    form = ImportForm(request.POST, request.FILES)
    report = form.run() if form.is_valid() else None
    if report is None:
        return _page(request, 400, error=errors_text(form), path=form["path"].value() or "")
    return _page(request, report=report)


@require_POST
def undo_import_view(request: HttpRequest, run_id: int) -> HttpResponse:
    try:
        done = transfer.undo_import(run_id)
    except transfer.TransferError as exc:
        return _page(request, 400, error=str(exc))
    return _page(request, undone=run_id, undone_count=len(done))


@require_GET
def export_view(request: HttpRequest) -> HttpResponse:
    layout = request.GET.get("layout", "wrapped")
    if layout not in home_export.LAYOUTS:
        return _page(request, 400, error=f"Unknown export layout {layout!r}.")
    # A temp file, not memory: sessions can be large; it is deleted when the response closes it.
    fh = tempfile.TemporaryFile()  # noqa: SIM115 -- FileResponse closes it after streaming
    home_export.export_archive(fh, layout)
    fh.seek(0)
    return FileResponse(fh, as_attachment=True, filename=home_export.export_filename(), content_type="application/gzip")
