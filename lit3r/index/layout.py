"""Where an index lives on disk, and how a new build replaces the old one safely.

``<home>/indexes/<key>/`` holds every generation of the index built with the
settings hashed into ``key``. A build writes a complete generation into a
temporary folder, renames it to ``gen-NNNN`` and only then points ``CURRENT``
at it with an atomic ``os.replace``: a build killed at any moment leaves the
previous generation in use. ``embed-cache/`` keeps vectors computed by an
unfinished build so that the next build resumes instead of starting over.
"""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

from lit3r.settings import Settings, index_key

CURRENT = "CURRENT"


class IndexLayout:
    """The folders of one index (one settings key) under a home directory."""

    def __init__(self, settings: Settings) -> None:
        self.key = index_key(settings)
        self.root = settings.home / "indexes" / self.key
        self.cache = self.root / "embed-cache"

    def current(self) -> Path | None:
        """The generation in use, or None before the first successful build."""
        pointer = self.root / CURRENT
        if not pointer.exists():
            return None
        generation = self.root / pointer.read_text(encoding="utf-8").strip()
        return generation if generation.is_dir() else None

    def scratch(self) -> Path:
        """A fresh temporary folder for a build in progress."""
        folder = self.root / f"tmp-{uuid.uuid4().hex[:8]}"
        folder.mkdir(parents=True)
        return folder

    def publish(self, scratch: Path) -> Path:
        """Turn a finished scratch folder into the current generation; remove older ones."""
        previous = self.current()
        number = 1 + max((int(p.name[4:]) for p in self.root.glob("gen-*") if p.name[4:].isdigit()), default=0)
        generation = self.root / f"gen-{number:04d}"
        os.replace(scratch, generation)
        pointer_tmp = self.root / f"{CURRENT}.tmp"
        pointer_tmp.write_text(generation.name, encoding="utf-8")
        _fsync(pointer_tmp)
        os.replace(pointer_tmp, self.root / CURRENT)
        for stale in self.root.glob("gen-*"):
            if stale != generation and stale != previous:
                shutil.rmtree(stale, ignore_errors=True)
        if previous is not None and previous != generation:
            shutil.rmtree(previous, ignore_errors=True)
        return generation

    def clean_scratch(self) -> None:
        """Remove folders left by killed builds: scratch folders, and generations no longer current (a build
        killed after it published, before it removed the one it replaced)."""
        for stale in self.root.glob("tmp-*"):
            shutil.rmtree(stale, ignore_errors=True)
        current = self.current()
        if current is not None:
            for stale in self.root.glob("gen-*"):
                if stale != current:
                    shutil.rmtree(stale, ignore_errors=True)


def _fsync(path: Path) -> None:
    with path.open("rb") as handle:
        os.fsync(handle.fileno())
