"""A PDF is read by a worker process with limits: a decompression bomb, a document that is slow on
every page and an unknown compression are refused with a sentence, the server's own memory stays
put and its pages are served meanwhile, while a normal long PDF still comes back whole."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from agent.chat import pdf_text
from tests.attachment_files import flate_bomb_pdf, shared_stream_pdf, text_pdf, unknown_filter_pdf
from tests.daphne import Daphne, Http, rss_mb, start_daphne, upload

MEMORY = "needs more memory than allowed to read"
SLOW = "took too long to read"
BUSY = "Other PDFs are being read right now"


def test_a_decompression_bomb_is_refused_for_memory():
    # A smaller cap than the server's meets the bomb on its first page, within the processor time
    # the reader gets at full priority: the refusal does not depend on how busy the machine is.
    with pytest.raises(pdf_text.PdfRefused) as refused:
        pdf_text.extract("bomb.pdf", flate_bomb_pdf(), 100_000, deadline=120, memory=128 * 1024 * 1024)
    assert str(refused.value) == f"bomb.pdf {MEMORY} (over 128 MB). It was not attached."


def test_a_document_slow_on_every_page_is_refused_at_the_deadline():
    with pytest.raises(pdf_text.PdfRefused) as refused:
        pdf_text.extract("slow.pdf", shared_stream_pdf(), 100_000, deadline=1.5)
    assert str(refused.value) == f"slow.pdf {SLOW} (over 1.5 seconds). It was not attached."


def test_an_unknown_compression_is_named_in_a_sentence():
    with pytest.raises(pdf_text.PdfRefused) as refused:
        pdf_text.extract("odd.pdf", unknown_filter_pdf(), 100_000)
    assert str(refused.value) == (
        "odd.pdf uses a compression this reader does not know (/NoSuchDecode). It was not attached."
    )


def test_a_long_normal_pdf_is_read_whole_within_the_limits():
    pages = [f"Page {n} of the annual report\n" + "the figures rose again this quarter\n" * 30 for n in range(300)]
    # The deadline is the test's: past its first half second a long document reads at the lowest
    # priority, which on a busy test machine can take longer than the server's 20 s.
    got = pdf_text.extract("annual.pdf", text_pdf(pages), 10_000_000, deadline=120)
    assert got.pages == 300 and got.cut_at is None
    assert "Page 0 of the annual report" in got.text and "Page 299 of the annual report" in got.text


def test_reading_stops_at_the_message_limit():
    pages = ["a page of words\n" * 60 for _ in range(300)]
    got = pdf_text.extract("long.pdf", text_pdf(pages), 5000)
    assert got.cut_at == 5000 - pdf_text.FRAME_ROOM and got.note == f"300 pages; cut at {got.cut_at:,} characters"


def test_when_every_reader_is_busy_the_person_is_told_to_try_again(monkeypatch):
    taken = threading.BoundedSemaphore(1)
    taken.acquire()
    monkeypatch.setattr(pdf_text, "_slots", taken)
    with pytest.raises(pdf_text.PdfRefused, match="Other PDFs are being read right now; attach a.pdf again"):
        pdf_text.extract("a.pdf", text_pdf(["hello"]), 100_000, deadline=0.2)


# Through a real daphne: the upload view, the server process's memory, and other people's pages.


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daphne]:
    with start_daphne(tmp_path_factory.mktemp("pdf-worker"), extra_env={"HERMES_PDF_SECONDS": "6"}) as s:
        yield s


@pytest.fixture
def person(server: Daphne) -> tuple[Http, str]:
    client = Http(server.port)
    client.login(server.token)
    chat = client.csrf_post("/c/new/")
    assert chat.status == 302, chat
    return client, chat.location.rstrip("/").rsplit("/", 1)[-1]


@pytest.mark.slow
def test_hostile_pdfs_leave_the_server_small_and_other_pages_served(server: Daphne, person):
    client, session = person
    reader = Http(server.port)
    reader.login(server.token)
    assert upload(client, session, "warm.pdf", text_pdf(["warm up"])).status == 200
    before = rss_mb(server.process.pid)
    peak = before
    hostile = [("bomb.pdf", flate_bomb_pdf()), ("slow.pdf", shared_stream_pdf())] * 2
    served = []
    with ThreadPoolExecutor(len(hostile)) as pool:
        answers = [pool.submit(upload, client, session, name, data) for name, data in hostile]
        while not all(a.done() for a in answers):
            served.append(reader.get("/memory/").status)
            peak = max(peak, rss_mb(server.process.pid))
    errors = []
    for answer in answers:
        resp = answer.result()
        assert resp.status == 400, resp
        errors.append(json.loads(resp.body)["error"])
    # Two readers at a time: a later upload waits for one and may hear that the server is busy; on
    # a busy machine the bomb may meet the deadline before its memory limit (the unit test above
    # sees the memory refusal itself).
    bomb, slow = errors[0::2], errors[1::2]
    assert all(any(reason in e for reason in (MEMORY, SLOW, BUSY)) for e in bomb), bomb
    assert all(any(reason in e for reason in (SLOW, BUSY)) for e in slow), slow
    assert any(e.startswith(f"slow.pdf {SLOW}") for e in slow), slow
    assert peak - before < 200, f"the server grew from {before:.0f} MB to {peak:.0f} MB"
    assert len(served) >= 3 and set(served) == {200}


@pytest.mark.slow  # against a daphne subprocess
def test_an_unknown_compression_is_a_sentence_not_a_server_error(server: Daphne, person):
    client, session = person
    resp = upload(client, session, "odd.pdf", unknown_filter_pdf())
    assert resp.status == 400
    assert "odd.pdf uses a compression this reader does not know (/NoSuchDecode)" in resp.body
