"""Generators of bad inputs for the ingest tests: damaged PDFs, odd encodings, hostile JSON, odd paths.

Everything is written by the tests into a temporary folder; nothing here is a committed binary.
"""

from __future__ import annotations

import ctypes
import gzip
import json
import os
import random
import subprocess
import sys
from pathlib import Path

from fpdf import FPDF

LIT3R = Path(sys.executable).parent / "lit3r"


def text_pdf(path: Path, title: str = "Sniffed Retrieval Paper", pages: int = 1) -> Path:
    """A small real PDF with a title, an abstract and body text."""
    pdf = FPDF()
    for number in range(pages):
        pdf.add_page()
        if number == 0:
            pdf.set_font("Helvetica", "B", 18)
            pdf.cell(0, 10, title, new_x="LMARGIN", new_y="NEXT")
            pdf.set_font("Helvetica", "B", 12)
            pdf.cell(0, 8, "Abstract", new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Times", "", 11)
        for line in range(8):
            pdf.cell(0, 6, f"Page {number + 1} line {line}: lexical retrieval finds the passages.")
            pdf.ln(6)
    pdf.output(str(path))
    return path


def encrypted_pdf(path: Path) -> Path:
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    pdf.cell(0, 10, "Secret text that needs a password to read.")
    pdf.set_encryption(owner_password="owner", user_password="secret")
    pdf.output(str(path))
    return path


def textless_pdf(path: Path) -> Path:
    """A page with drawings and no text layer, like a scan."""
    pdf = FPDF()
    pdf.add_page()
    pdf.rect(20, 20, 100, 100)
    pdf.output(str(path))
    return path


def zero_page_pdf(path: Path) -> Path:
    """A well-formed PDF whose page tree is empty."""
    path.write_bytes(
        b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n"
        b"2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
    )
    return path


def damaged_pdf(path: Path, good: Path) -> Path:
    """A real PDF with its middle overwritten by random bytes (header and trailer kept)."""
    data = bytearray(good.read_bytes())
    rng = random.Random(7)
    for index in range(len(data) // 4, 3 * len(data) // 4):
        data[index] = rng.randrange(256)
    path.write_bytes(bytes(data))
    return path


def random_bytes(path: Path, size: int = 4096, seed: int = 3) -> Path:
    path.write_bytes(random.Random(seed).randbytes(size))
    return path


def png_bytes(path: Path) -> Path:
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(64))
    return path


def records_jsonl(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def record(paper_id: str, title: str, **fields: object) -> str:
    return json.dumps({"id": paper_id, "title": title, "abstract": f"About {title.lower()}.", **fields})


def gzip_bomb(path: Path, unpacked_mb: int) -> Path:
    """A .json.gz whose content unpacks to ``unpacked_mb`` MB of spaces around one small paper."""
    with gzip.open(path, "wb", compresslevel=9) as handle:
        handle.write(b'{"id": "z", "title": "Zipped", "abstract": "x"}')
        block = b" " * (1 << 20)
        for _ in range(unpacked_mb):
            handle.write(block)
    return path


PR_CAPBSET_DROP = 24
CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 1, 2


def _drop_file_capabilities() -> None:
    """In the child before exec: give up root's right to ignore file modes, so chmod 000 binds root too."""
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
        if libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


def run_unprivileged(args: list[str], cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``lit3r ARGS`` where file permissions apply: as root, without the capabilities that bypass them."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return subprocess.run(
        [str(LIT3R), *args],
        cwd=cwd,
        env=env,
        preexec_fn=_drop_file_capabilities if os.geteuid() == 0 else None,  # noqa: PLW1509 - no threads here
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def run_lit3r(args: list[str], cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``lit3r ARGS`` in a child process, as the current user."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return subprocess.run(
        [str(LIT3R), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
