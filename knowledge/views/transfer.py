"""Import a Hermes home / export everything. The work is in knowledge/transfer/hermes_import.py."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from django.http import FileResponse, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_POST

from knowledge.transfer import export as home_export
from knowledge.transfer import hermes_import as transfer

_MB = 1024 * 1024


def _page(request: HttpRequest, status: int = 200, **extra: Any) -> HttpResponse:
    ctx = {"nav": "overview", "imports": transfer.recent_imports(), "max_mb": transfer.MAX_ARCHIVE_BYTES // _MB}
    ctx.update(extra)
    return render(request, "knowledge/transfer.html", ctx, status=status)


@require_GET
def transfer_page(request: HttpRequest) -> HttpResponse:
    return _page(request)


def _run_import(request: HttpRequest) -> transfer.ImportReport:
    upload = request.FILES.get("archive")
    if upload is not None:
        if upload.size is not None and upload.size > transfer.MAX_ARCHIVE_BYTES:
            raise transfer.TransferError(
                f"The upload is {upload.size / _MB:.1f} MB; archives up to {transfer.MAX_ARCHIVE_BYTES // _MB} MB "
                "can be imported. Import a folder on this machine by its path instead."
            )
        return transfer.import_archive(upload.file, upload.name or "upload")
    path = request.POST.get("path", "").strip()
    if not path:
        raise transfer.TransferError("Choose a .zip or .tar.gz of a Hermes home, or give the path of a folder.")
    if not Path(path).expanduser().is_absolute():
        raise transfer.TransferError(f"'{path}' is not an absolute path on this machine.")
    return transfer.import_path(Path(path))


@require_POST
def import_view(request: HttpRequest) -> HttpResponse:
    # Refused before the body is used; Django has spooled it to a temp file, not memory.
    if int(request.META.get("CONTENT_LENGTH") or 0) > transfer.MAX_ARCHIVE_BYTES + _MB:
        return _page(request, 413, error=f"The upload is larger than {transfer.MAX_ARCHIVE_BYTES // _MB} MB.")
    try:
        report = _run_import(request)
    except transfer.TransferError as exc:
        return _page(request, 400, error=str(exc))
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
