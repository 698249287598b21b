"""Ingest: unchanged files do no work, bad files are named and skipped, ids stay unique, references resolve."""

from __future__ import annotations

import json
from pathlib import Path

from lit3r.corpus.ingest import ingest
from lit3r.corpus.store import CorpusStore

from fakes.qasper import qasper_paper, write_qasper


def _corpus(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    write_qasper(folder / "a.json", {"p1": qasper_paper("Alpha Retrieval Methods", [("Intro", ["Alpha text."])])})
    (folder / "b.jsonl").write_text(
        json.dumps(
            {
                "id": "p2",
                "title": "Beta Rerankers",
                "abstract": "Beta.",
                "references": [
                    "Quill, M. 2023. Alpha Retrieval Methods. In ACL.",
                    "Nobody, N. 2020. A Paper Outside The Corpus. In EMNLP.",
                ],
            }
        )
    )
    (folder / "nested").mkdir(exist_ok=True)
    (folder / "nested" / "c.txt").write_text("Gamma Title\n\nAbstract: gamma things.\n\nBody paragraph.")
    (folder / "broken.pdf").write_bytes(b"%PDF-1.7\n\x00\x01garbage without objects")
    (folder / "empty.md").write_text("")
    (folder / ".hidden.json").write_text("{}")
    (folder / "notes.csv").write_text("a,b")
    return folder


def test_folder_ingest_skips_bad_files_and_keeps_the_rest(tmp_path: Path) -> None:
    folder = _corpus(tmp_path / "papers")
    with CorpusStore(tmp_path / "home") as store:
        report = ingest([folder], store)
        assert sorted(Path(p).name for p in report.added) == ["a.json", "b.jsonl", "c.txt"]
        failed = {Path(p).name: problem for p, problem in report.failed}
        assert set(failed) == {"broken.pdf", "empty.md"}  # hidden and unsupported files are not even tried
        assert all(problem for problem in failed.values())
        assert store.count_papers() == 3
        beta = store.get("p2")
        assert beta is not None
        assert [r.resolved_id for r in beta.paper.references] == ["p1", None]
        assert report.references_resolved == 1


def test_second_ingest_of_unchanged_files_does_no_work(tmp_path: Path, monkeypatch) -> None:
    folder = _corpus(tmp_path / "papers")
    with CorpusStore(tmp_path / "home") as store:
        ingest([folder], store)
        calls = []
        import lit3r.corpus.ingest as module

        monkeypatch.setattr(module, "read_file", lambda path, *_a, **_k: calls.append(path))
        report = ingest([folder], store)
        assert calls == []
        assert report.added == [] and len(report.unchanged) == 3
        assert not report.did_work


def test_changed_file_replaces_its_papers(tmp_path: Path) -> None:
    folder = tmp_path / "p"
    folder.mkdir()
    path = write_qasper(folder / "a.json", {"p1": qasper_paper("One", [("S", ["x"])])})
    with CorpusStore(tmp_path / "home") as store:
        ingest([path], store)
        write_qasper(path, {"p9": qasper_paper("Nine", [("S", ["y"])])})
        report = ingest([path], store)
        assert report.papers_added == 1
        assert store.get("p1") is None and store.get("p9") is not None


def test_same_id_from_two_files_is_renamed_not_overwritten(tmp_path: Path) -> None:
    one = write_qasper(tmp_path / "one.json", {"p1": qasper_paper("One", [("S", ["x"])])})
    two = write_qasper(tmp_path / "two.json", {"p1": qasper_paper("Two", [("S", ["y"])])})
    with CorpusStore(tmp_path / "home") as store:
        ingest([one], store)
        report = ingest([two], store)
        assert store.count_papers() == 2
        [(old, new)] = report.renamed
        assert old == "p1" and new.startswith("p1-")
        assert store.get("p1").paper.title == "One"


def test_missing_path_is_reported(tmp_path: Path) -> None:
    with CorpusStore(tmp_path / "home") as store:
        report = ingest([tmp_path / "nope"], store)
    assert report.failed == [(str(tmp_path / "nope"), "no such file or folder")]
