"""The documentation keeps up with the contracts it describes.

Every command and long option of the ``lit3r`` command line (read from the Typer application itself) is shown
in a synopsis or example of that command in README.md or docs/*.md; every ``make`` target the documentation
names exists in the Makefile; the README stays a front page (at most 300 lines, no figures that go stale);
every relative link points at a file that exists and, for a Markdown file, at a heading it has.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer

from lit3r.cli import app

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
README_MAX_LINES = 300
GLOBAL_VALUE_OPTIONS = {"--home", "--preset"}
"""Options that come before the command and take a value (skipped when reading a synopsis)."""

FLAG = re.compile(r"(?<![\w-])--[a-z][\w-]*")
LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


# ------------------------------------------------------------ reading Markdown


def split_markdown(text: str) -> tuple[list[str], list[str]]:
    """The lines inside fenced code blocks, and the other lines (prose, tables, headings)."""
    code, prose, fence = [], [], None
    for line in text.splitlines():
        marker = re.match(r"^\s*(```+|~~~+)", line)
        if marker and (fence is None or marker.group(1)[0] == fence[0] and len(marker.group(1)) >= len(fence)):
            fence = marker.group(1) if fence is None else None
            continue
        (code if fence else prose).append(line)
    return code, prose


def code_snippets(text: str) -> list[str]:
    """Every line of a fenced block and every inline code span: where commands are written."""
    code, prose = split_markdown(text)
    spans = [span for line in prose for span in re.findall(r"(`+)(.+?)\1", line)]
    return code + [span for _, span in spans]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: the rendered text lowercased, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link renders as its text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """The anchors of a page's headings, with GitHub's -1, -2 ... suffixes for repeated ones."""
    seen: dict[str, int] = {}
    found = set()
    for line in split_markdown(text)[1]:
        match = HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def broken_links(page: Path) -> list[str]:
    """Relative links of ``page`` whose file does not exist, or whose #anchor is no heading of that file."""
    problems = []
    for line in split_markdown(page.read_text(encoding="utf-8"))[1]:
        line = re.sub(r"(`+).+?\1", "", line)  # a link written inside code is not a link
        for target in LINK.findall(line):
            if re.match(r"^[a-z][\w+.-]*:", target):  # https:, mailto: ...
                continue
            path_part, _, anchor = target.partition("#")
            linked = (page.parent / path_part).resolve() if path_part else page
            if not linked.exists():
                problems.append(f"{page.name}: {target}: no file {linked}")
            elif anchor and linked.suffix == ".md" and anchor not in anchors(linked.read_text(encoding="utf-8")):
                problems.append(f"{page.name}: {target}: no heading #{anchor} in {linked.name}")
    return problems


# ------------------------------------------------------------ the command line


def command_tree() -> dict[tuple[str, ...], set[str]]:
    """Every command path of the ``lit3r`` application (root: ``()``) and the long options it defines."""
    tree: dict[tuple[str, ...], set[str]] = {}

    def walk(command, path: tuple[str, ...]) -> None:
        names = [name for param in command.params for name in (*param.opts, *param.secondary_opts)]
        tree[path] = {name for name in names if name.startswith("--")}
        for name, sub in getattr(command, "commands", {}).items():
            if not getattr(sub, "hidden", False):
                walk(sub, (*path, name))

    walk(typer.main.get_command(app), ())
    return tree


def synopses(text: str, paths: set[tuple[str, ...]]) -> dict[tuple[str, ...], set[str]]:
    """The long options written after each command in every ``lit3r ...`` snippet (its synopsis or example)."""
    shown: dict[tuple[str, ...], set[str]] = {}
    for snippet in code_snippets(text):
        for match in re.finditer(r"(?:^|(?<=[\s(|;&]))lit3r\s+(.*)", snippet):
            rest = re.split(r"\s#|\s&&\s|;", match.group(1))[0]
            words = rest.split()
            while words and (words[0] in GLOBAL_VALUE_OPTIONS or words[0] in ("-v", "--verbose")):
                words = words[2:] if words[0] in GLOBAL_VALUE_OPTIONS else words[1:]
            path: tuple[str, ...] = ()
            while len(words) > len(path) and (*path, words[len(path)]) in paths:
                path = (*path, words[len(path)])
            if path:
                shown.setdefault(path, set()).update(FLAG.findall(" ".join(words[len(path) :])))
    return shown


def documentation() -> str:
    return "\n".join(page.read_text(encoding="utf-8") for page in PAGES)


def test_the_command_tree_is_read_from_the_application():
    tree = command_tree()
    assert {("ask",), ("eval", "qasper"), ("trace", "replay"), ("mcp", "config")} <= tree.keys()
    assert {"--json", "--steps", "--option"} <= tree[("ask",)]
    assert "--no-force" in tree[("ingest",)]  # a boolean's negative form is an option too


def test_every_command_is_shown_in_the_documentation():
    tree = command_tree()
    shown = synopses(documentation(), set(tree))
    missing = [
        "lit3r " + " ".join(path) for path in tree if path and not any(seen[: len(path)] == path for seen in shown)
    ]
    assert not missing, f"commands no README.md or docs/*.md snippet shows (add a synopsis to docs/cli.md): {missing}"


def test_every_long_option_is_shown_with_its_command():
    tree = command_tree()
    shown = synopses(documentation(), set(tree))
    missing = [
        f"lit3r {' '.join(path)} {flag}"
        for path, flags in tree.items()
        if path
        for flag in sorted(flags - shown.get(path, set()))
    ]
    assert not missing, (
        "options no `lit3r COMMAND ... --option` snippet in README.md or docs/*.md shows "
        f"(add them to the command's synopsis in docs/cli.md): {missing}"
    )


def test_the_global_options_are_documented():
    written = set(FLAG.findall(documentation()))
    assert command_tree()[()] - written == set()


def test_a_synopsis_is_read_past_global_options_and_comments():
    paths = set(command_tree())
    text = "```bash\nLIT3R_X=1 lit3r --home h --preset p -v eval gate DATA --limit 3  # not --save\n```\n"
    text += "`lit3r trace list [--limit N]` and `lit3r search Q [-k N\\|--top N]`\n"
    assert synopses(text, paths) == {
        ("eval", "gate"): {"--limit"},
        ("trace", "list"): {"--limit"},
        ("search",): {"--top"},
    }


# ------------------------------------------------------------ make targets


def make_targets() -> set[str]:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([A-Za-z][\w.-]*)\s*:(?!=)", makefile, flags=re.MULTILINE))


def test_every_make_target_the_documentation_names_exists():
    targets = make_targets()
    assert {"demo", "test", "install"} <= targets
    named = {
        (page.name, name)
        for page in PAGES
        for snippet in code_snippets(page.read_text(encoding="utf-8"))
        for name in re.findall(r"(?:^|(?<=\s))make\s+([a-z][\w-]*(?:\.\.\.)?)", snippet)
    }
    missing = [
        f"{page}: make {name}"
        for page, name in sorted(named)
        if not (any(t.startswith(name[:-3]) for t in targets) if name.endswith("...") else name in targets)
    ]
    assert not missing, f"make targets the documentation names but the Makefile lacks: {missing}"
    readme_names = {name for page, name in named if page == README.name}
    assert {"demo", "test"} <= readme_names, "the README's two commands are `make demo` and `make test`"


# ------------------------------------------------------------ the front page and the links


def test_the_readme_is_a_front_page():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; move detail into docs/"


def test_the_readme_carries_no_figures_that_go_stale():
    text = README.read_text(encoding="utf-8")
    counts = re.findall(r"\b\d[\d,]*\s+(?:tests|passed|skipped)\b", text)
    durations = re.findall(r"\b\d+(?:\.\d+)?\s*(?:s|ms|min|minutes|seconds|hours)\b", text)
    assert not counts + durations, f"test counts and timings belong in docs/BENCHMARKS.md: {counts + durations}"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_relative_links_point_at_files_and_headings_that_exist(page):
    assert broken_links(page) == []


def test_the_link_check_finds_a_missing_file_and_a_missing_heading(tmp_path):
    (tmp_path / "other.md").write_text("# Other page\n\n## A `code` heading: with punctuation\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](other.md#a-code-heading-with-punctuation) [ok](#here) `[not a link](gone.md)`\n\n## Here\n"
        "[gone](gone.md) [no heading](other.md#nowhere)\n```\n[in code](gone.md)\n```\n",
        encoding="utf-8",
    )
    problems = broken_links(page)
    assert len(problems) == 2
    assert "gone.md" in problems[0] and "#nowhere" in problems[1]


def test_heading_anchors_follow_githubs_rule():
    text = "# Grounding metrics (`--grounding`)\n## Retrieval settings: PRF, learned fusion\n## Tools\n## Tools\n"
    assert anchors(text) == {
        "grounding-metrics---grounding",
        "retrieval-settings-prf-learned-fusion",
        "tools",
        "tools-1",
    }
