"""Search, overview, settings and import/export pages."""

from django.urls import path

from knowledge.views import overview, search, settings, transfer

urlpatterns = [
    path("search/", search.search_page, name="search"),
    path("overview/", overview.overview_page, name="overview"),
    path("settings/", settings.settings_page, name="settings"),
    path("transfer/", transfer.transfer_page, name="transfer"),
    path("transfer/import/", transfer.import_view, name="transfer_import"),
    path("transfer/imports/<int:run_id>/undo/", transfer.undo_import_view, name="transfer_undo"),
    path("transfer/export/", transfer.export_view, name="transfer_export"),
]
