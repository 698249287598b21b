"""The fuzz targets in the default run: every seed and every input that once crashed a target is replayed,
then a short coverage-guided run of all targets together. The long run is ``make fuzz``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from fuzz.run import generated_pdf_seeds
from fuzz.targets import TARGETS

from lit3r.corpus.parsers import ParseError
from lit3r.corpus.parsers.qasper import qasper_records_from_text
from lit3r.corpus.references import parse_reference

FUZZ = Path(__file__).parents[1] / "fuzz"
CASES = sorted(
    (kind, target, path)
    for kind in ("seeds", "regressions")
    for target in TARGETS
    for path in (FUZZ / kind / target).glob("*")
    if path.is_file()
)


@pytest.mark.parametrize(("kind", "target", "path"), CASES, ids=[f"{k}/{t}/{p.name}" for k, t, p in CASES])
def test_replay(kind: str, target: str, path: Path) -> None:
    TARGETS[target](path.read_bytes())


def test_every_target_has_seeds_and_the_pdf_seeds_parse(tmp_path: Path) -> None:
    assert {target for kind, target, _ in CASES if kind == "seeds"} == set(TARGETS) - {"pdf"}
    for pdf in sorted(generated_pdf_seeds(tmp_path).iterdir()):
        TARGETS["pdf"](pdf.read_bytes())


def test_regression_a_reference_entry_of_dots() -> None:
    """Found by the text and markdown targets: a sentence piece of only dots raised IndexError."""
    reference = parse_reference("[1]. A... B. . Something")
    assert reference.raw == "[1]. A... B. . Something"


def test_regression_hugging_face_questions_without_ids() -> None:
    """Found by the qasper target: a Hugging Face row whose qas column lacked question_id raised KeyError."""
    full_text = '{"section_name": ["S"], "paragraphs": [["x"]]}'
    row = f'{{"id": "p", "title": "T", "full_text": {full_text}, "qas": {{"question": ["Q?"]}}}}'
    with pytest.raises(ParseError, match="paper p: fewer question_id than question entries"):
        qasper_records_from_text(row, Path("rows.json"))
    typed = row.replace('{"question": ["Q?"]}', '{"question": "Q?"}')
    with pytest.raises(ParseError, match="paper p: qas: field 'question': Input should be a valid list"):
        qasper_records_from_text(typed, Path("rows.json"))


def test_a_short_fuzzing_run_finds_no_crash(tmp_path: Path) -> None:
    pytest.importorskip("atheris")
    done = subprocess.run(
        [sys.executable, str(FUZZ / "run.py"), "mixed", "--seconds", "2", "--work", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert done.stdout.rstrip().endswith("no crash")
