"""Page images against hostile PDFs (RELIABILITY, server): a one-page PDF that declares a 200-inch page is
drawn within :data:`pages.MAX_IMAGE_SIDE` pixels, and a PDF replaced by one of the same size with its
modification time set back is hashed again (the page image is then refused as changed, not shown as exact)."""

from __future__ import annotations

import io
import os
from pathlib import Path

from fpdf import FPDF
from PIL import Image

from lit3r.server import pages

from fakes.pdfs import write_glacier_pdf


def huge_page_pdf(path: Path, side_pt: float = 14_400.0) -> Path:
    pdf = FPDF(unit="pt", format=(side_pt, side_pt))
    pdf.add_page()
    pdf.set_font("Helvetica", size=400)
    pdf.text(200, 800, "A page of 200 inches")
    pdf.output(str(path))
    return path


def test_a_huge_page_is_drawn_within_the_pixel_bound(tmp_path: Path) -> None:
    path = huge_page_pdf(tmp_path / "huge.pdf")
    assert path.stat().st_size < 5_000
    png = pages.render(str(path), pages.file_hash(path), 1, (), 110)
    with Image.open(io.BytesIO(png)) as image:
        assert max(image.size) <= pages.MAX_IMAGE_SIDE
        assert max(image.size) >= pages.MAX_IMAGE_SIDE - 2  # bounded, not shrunk further
    assert pages.bounded_resolution(612, 792, 110) == 110  # a letter page keeps the configured resolution


def test_a_same_size_replacement_with_its_old_mtime_is_hashed_again(tmp_path: Path) -> None:
    path = write_glacier_pdf(tmp_path / "paper.pdf")
    before = pages.file_hash(path)
    stat = path.stat()
    data = bytearray(path.read_bytes())
    data[-20] = ord("x") if data[-20] != ord("x") else ord("y")  # same size, other bytes
    path.write_bytes(bytes(data))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # the modification time restored
    assert path.stat().st_size == stat.st_size and path.stat().st_mtime_ns == stat.st_mtime_ns
    assert pages.file_hash(path) != before
