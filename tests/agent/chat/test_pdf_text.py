"""The text of an attached PDF: read with pypdf, cut visibly at the message limit, and every
refusal a sentence for the person."""

from __future__ import annotations

import pytest

from agent.chat import pdf_text
from knowledge.verification.documents import statement_text
from tests.attachment_files import blank_pdf, encrypted_pdf, text_pdf


def test_the_text_of_every_page_is_extracted_with_the_page_count():
    got = pdf_text.extract("report.pdf", text_pdf(["Quarterly numbers\nare up", "Page two says hello"]), 100_000)
    assert "Quarterly numbers" in got.text and "Page two says hello" in got.text
    assert got.pages == 2 and got.cut_at is None and got.note == "2 pages"


def test_text_past_the_message_limit_is_cut_and_says_so():
    long_page = "\n".join(f"line {i} of a long report" for i in range(200))
    got = pdf_text.extract("long.pdf", text_pdf([long_page]), 3000)
    assert got.cut_at == 3000 - pdf_text.FRAME_ROOM and len(got.text) == got.cut_at
    assert got.note == f"1 page; cut at {got.cut_at:,} characters"


@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [
        ("scan.pdf", blank_pdf(2), "scan.pdf has no text to extract — it may be scanned images"),
        ("locked.pdf", encrypted_pdf(), "locked.pdf is protected with a password"),
        ("fake.pdf", b"PK\x03\x04 this is a zip file", "fake.pdf is not a PDF"),
        ("broken.pdf", b"%PDF-1.4\n1 0 obj << /Type /Catalog", "broken.pdf could not be read"),
    ],
)
def test_unreadable_pdfs_are_refused_in_a_persons_words(name, data, expected):
    with pytest.raises(pdf_text.PdfRefused) as refused:
        pdf_text.extract(name, data, 100_000)
    assert expected in str(refused.value)


def test_a_pdf_over_the_page_limit_is_refused():
    with pytest.raises(pdf_text.PdfRefused, match=f"has {pdf_text.MAX_PAGES + 1} pages; attached PDFs are limited"):
        pdf_text.extract("huge.pdf", blank_pdf(pdf_text.MAX_PAGES + 1), 100_000)


def test_a_pdfs_text_in_the_message_is_a_document_not_the_persons_words():
    # The page attaches it as any text file: "📎 name (note)" and the text in a fenced block.
    got = pdf_text.extract("cv.pdf", text_pdf(["I am allergic to penicillin"]), 100_000)
    message = f"please check this\n\n📎 **cv.pdf** ({got.note})\n\n```\n{got.text}\n```"
    said = statement_text(message)
    assert "please check this" in said and "penicillin" not in said
