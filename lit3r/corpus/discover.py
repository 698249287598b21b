"""Which files an ingest reads: the paths named, and folders walked recursively, every problem named.

Named paths are taken as they are (any suffix: the content decides how to read
them). Inside folders, files with a supported suffix are taken and hidden
entries (a name starting with '.') are skipped. Nothing is passed over without a
word: a path that does not exist, a broken or looping symbolic link, a folder that
cannot be listed, and something that is not a regular file (a FIFO, a socket, a
device: reading one could block forever) are each reported with the reason. A
folder reached twice through symbolic links is walked once; a link back to a
folder being walked is reported as a loop.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from lit3r.corpus.parsers import SUPPORTED_SUFFIXES


@dataclass
class Discovery:
    """The files to read, in order, and the paths that could not be read, each with its reason."""

    files: list[Path] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)
    _seen_files: set[str] = field(default_factory=set, repr=False)
    _seen_folders: set[tuple[int, int]] = field(default_factory=set, repr=False)

    def add_file(self, path: Path) -> None:
        real = os.path.realpath(path)
        if real not in self._seen_files:
            self._seen_files.add(real)
            self.files.append(path)


def discover(paths: Iterable[Path]) -> Discovery:
    """The files under ``paths`` and every path that could not be read (see the module docstring)."""
    found = Discovery()
    for path in paths:
        info = _stat(path, found)
        if info is None:
            continue
        if stat.S_ISDIR(info.st_mode):
            _walk(path, info, found)
        elif stat.S_ISREG(info.st_mode):
            found.add_file(path)
        else:
            found.problems.append((str(path), not_regular(info.st_mode)))
    return found


def _walk(root: Path, info: os.stat_result, found: Discovery) -> None:
    """Depth-first, in name order, without recursion (deep trees do not exhaust the stack)."""
    stack: list[tuple[Path, dict[tuple[int, int], Path]]] = [(root, {(info.st_dev, info.st_ino): root})]
    found._seen_folders.add((info.st_dev, info.st_ino))
    while stack:
        folder, ancestors = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as exc:
            found.problems.append((str(folder), f"cannot list this folder ({_reason(exc)}); its files were not read"))
            continue
        subfolders = []
        for entry in entries:
            if entry.name.startswith("."):
                continue
            path = Path(entry.path)
            supported = entry.name.lower().endswith(SUPPORTED_SUFFIXES)
            child = _stat(path, found, report=supported or _is_dir_link(entry))
            if child is None:
                continue
            if stat.S_ISDIR(child.st_mode):
                key = (child.st_dev, child.st_ino)
                if key in ancestors:
                    loop = f"a symbolic link loop: this is the folder {ancestors[key]} again, which holds it"
                    found.problems.append((str(path), loop))
                elif key not in found._seen_folders:
                    found._seen_folders.add(key)
                    subfolders.append((path, {**ancestors, key: path}))
            elif supported and stat.S_ISREG(child.st_mode):
                found.add_file(path)
            elif supported:
                found.problems.append((str(path), not_regular(child.st_mode)))
        stack.extend(reversed(subfolders))


def _is_dir_link(entry: os.DirEntry) -> bool:
    """A symbolic link whose name has no supported suffix: it may point at a folder, so its problems count."""
    try:
        return entry.is_symlink()
    except OSError:
        return False


def _stat(path: Path, found: Discovery, report: bool = True) -> os.stat_result | None:
    """``os.stat`` (following links), or None after reporting why the path cannot be reached."""
    try:
        return os.stat(path)
    except OSError as exc:
        if report:
            found.problems.append((str(path), _missing(path, exc)))
        return None


def _missing(path: Path, exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "a symbolic link loop (the link leads back to itself)"
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        if os.path.islink(path):
            return f"a broken symbolic link (its target {os.readlink(path)} does not exist)"
        return "no such file or folder"
    return f"cannot reach it ({_reason(exc)})"


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def not_regular(mode: int) -> str:
    """Why a path that is not a regular file is not read."""
    what = (
        "a FIFO (named pipe)"
        if stat.S_ISFIFO(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "a device"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else "not a file"
    )
    return f"{what}, not a regular file; not read"
