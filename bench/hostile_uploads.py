"""10. Hostile uploads: a page's load time while 4 hostile PDFs are being read, against the same page
on an idle server; interleaved round by round.

    .venv/bin/python -m bench.hostile_uploads            # full: 3 rounds of each
    .venv/bin/python -m bench.hostile_uploads tiny       # one round

The 4 uploads are 2 decompression bombs (20 pages of compressed blank space, ~1.4 MB inflating to
~1.4 GB) and 2 documents whose 300 pages share one stream of 100,000 text operators (~0.75 s of
parsing per page). Each is read by a worker process capped in memory and processor time
(agent/chat/pdf_text.py); the deadline is shortened to DEADLINE seconds so a round stays short, which
changes when a worker is stopped, not what it costs while it runs. The page is /memory/, a page
rendered by Django with the session, CSRF and security middleware, loaded one after another by a
second logged-in client for as long as the uploads run; the idle side loads it for as long (the
deadline). Goal: ≤ 1.2× the idle load time.
"""

from __future__ import annotations

import sys
import time
from concurrent.futures import ThreadPoolExecutor

from bench.common import Figure, Samples, figure_from, median, rss_mb, temp_home
from tests.attachment_files import flate_bomb_pdf, shared_stream_pdf, text_pdf
from tests.daphne import Daphne, Http, start_daphne, upload

SCALES = {"full": 3, "tiny": 1}
DEADLINE = 8
GOAL = 1.2


def _load(reader: Http) -> float:
    t = time.perf_counter()
    status = reader.get("/memory/").status
    if status != 200:
        raise RuntimeError(f"/memory/ answered {status}")
    return (time.perf_counter() - t) * 1000


def _hostile_round(server: Daphne, uploader: Http, session: str, reader: Http, into: list[float]) -> tuple[int, float]:
    """Page loads for as long as the 4 uploads run; how many were refused, and the server's growth."""
    before = peak = rss_mb(server.process.pid)
    hostile = [("bomb.pdf", flate_bomb_pdf()), ("slow.pdf", shared_stream_pdf())] * 2
    with ThreadPoolExecutor(len(hostile)) as pool:
        answers = [pool.submit(upload, uploader, session, name, data) for name, data in hostile]
        time.sleep(0.3)  # every worker started: the loads measure the reading, not the uploading
        while not all(a.done() for a in answers):
            into.append(_load(reader))
            peak = max(peak, rss_mb(server.process.pid))
    refused = sum(a.result().status == 400 for a in answers)
    return refused, peak - before


def run(scale: str) -> list[Figure]:
    tmp = temp_home()
    samples = Samples()
    refused, growth = 0, 0.0
    with start_daphne(tmp / "home", extra_env={"HERMES_PDF_SECONDS": str(DEADLINE)}) as server:
        uploader, reader = Http(server.port), Http(server.port)
        uploader.login(server.token)
        reader.login(server.token)
        session = uploader.csrf_post("/c/new/").location.rstrip("/").rsplit("/", 1)[-1]
        flate_bomb_pdf(), shared_stream_pdf()  # built before the first round, not during it
        if upload(uploader, session, "warm.pdf", text_pdf(["warm"])).status != 200:
            raise RuntimeError("a normal PDF was refused")
        for _ in range(5):
            _load(reader)
        for i in range(SCALES[scale]):
            for hostile in [True, False] if i % 2 == 0 else [False, True]:
                if hostile:
                    got, grew = _hostile_round(server, uploader, session, reader, samples.product)
                    refused += got
                    growth = max(growth, grew)
                else:
                    # As long as a hostile round lasts, so both sides sample the shared machine alike.
                    until = time.monotonic() + DEADLINE
                    while time.monotonic() < until:
                        samples.reference.append(_load(reader))
    ratio = median(samples.product) / median(samples.reference)
    fig = figure_from(
        "10", "page load during 4 hostile PDF uploads", "ms", samples, reference="the same page, server idle"
    )
    fig.result = f"{ratio:.2f}x"
    fig.goal = f"≤ {GOAL}x"
    fig.met = ratio <= GOAL
    fig.notes = (
        f"{refused} of {4 * SCALES[scale]} uploads refused with a sentence; the server grew by at most "
        f"{growth:.0f} MB while they were read; deadline shortened to {DEADLINE} s"
    )
    return [fig]


if __name__ == "__main__":
    for f in run(sys.argv[1] if len(sys.argv) > 1 else "full"):
        print(f"{f.name}: {f.median:.1f} ms vs {f.ref_median:.1f} ms idle -> {f.result} (goal {f.goal}); {f.notes}")
