"""Coverage-guided fuzzing of lit3r's input parsers and of answer validation (atheris, libFuzzer).

    python tests/fuzz/run.py [TARGET ...] [--seconds N] [--work DIR]

Targets are listed in ``tests/fuzz/targets.py``; ``mixed`` fuzzes all of them in one process
(the first byte picks the target). With no target every target runs in turn and the N seconds
(default 60) are shared among them. Each target starts from its seeds (``tests/fuzz/seeds/<target>``,
PDF seeds are generated) and its regressions (``tests/fuzz/regressions/<target>``), keeps the inputs
it finds in ``DIR/corpus/<target>`` (default ``bench-out/fuzz``) and writes an input that crashes it to
``DIR/crashes/<target>-crash-<sha1>``. A crash makes the exit code 1; its input belongs in
``tests/fuzz/regressions/<target>/`` once the bug is fixed.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
TARGET_NAMES = ("sniff", "records", "qasper", "markdown", "text", "pdf_layout", "pdf", "validate")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="*", help=f"targets: {', '.join(TARGET_NAMES)}, mixed (default: all)")
    parser.add_argument("--seconds", type=float, default=60.0, help="total fuzzing time, shared among targets")
    parser.add_argument("--work", type=Path, default=Path("bench-out/fuzz"), help="corpus and crash folder")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return _fuzz_one(args.child, args.seconds, args.work)
    targets = args.targets or list(TARGET_NAMES)
    unknown = sorted(set(targets) - {*TARGET_NAMES, "mixed"})
    if unknown:
        parser.error(f"unknown target(s) {', '.join(unknown)}; choose from {', '.join(TARGET_NAMES)}, mixed")
    share = max(1.0, args.seconds / len(targets))
    crashed = []
    for target in targets:
        print(f"fuzzing {target} for {share:.0f} s", flush=True)
        command = [sys.executable, __file__, "--child", target, "--seconds", str(share), "--work", str(args.work)]
        done = subprocess.run(command, check=False, capture_output=True, text=True)
        summary = [line for line in done.stderr.splitlines() if line.startswith(("Done", "#"))][-1:]
        print(f"  {summary[0] if summary else '(no summary)'}", flush=True)
        if done.returncode != 0:
            crashed.append(target)
            print(done.stderr[-4000:], file=sys.stderr)
    if crashed:
        print(f"crashed: {', '.join(crashed)}; inputs under {args.work / 'crashes'}", file=sys.stderr)
        return 1
    print("no crash")
    return 0


def _fuzz_one(target: str, seconds: float, work: Path) -> int:
    import atheris

    sys.path.insert(0, str(TESTS))
    with atheris.instrument_imports(include=["lit3r"]):
        from fuzz.targets import TARGETS, fuzz_mixed
    run = fuzz_mixed if target == "mixed" else TARGETS[target]
    corpus = work / "corpus" / target
    crashes = work / "crashes"
    corpus.mkdir(parents=True, exist_ok=True)
    crashes.mkdir(parents=True, exist_ok=True)
    folders = [corpus, *_seed_folders(target, work)]
    options = [f"-max_total_time={max(1, int(seconds))}", f"-artifact_prefix={crashes}/{target}-", "-timeout=30"]
    atheris.Setup([sys.argv[0], *map(str, folders), *options, "-rss_limit_mb=3072"], run)
    atheris.Fuzz()
    return 0


def _seed_folders(target: str, work: Path) -> list[Path]:
    names = TARGET_NAMES if target == "mixed" else (target,)
    folders = [HERE / kind / name for name in names for kind in ("seeds", "regressions")]
    if "pdf" in names:
        folders.append(generated_pdf_seeds(work / "generated-seeds" / "pdf"))
    return [f for f in folders if f.is_dir()]


def generated_pdf_seeds(folder: Path) -> Path:
    """Small real PDFs written by fpdf2 (none is committed): a paper, an encrypted one, one without text."""
    sys.path.insert(0, str(TESTS))
    from fakes.bad_inputs import encrypted_pdf, text_pdf, textless_pdf

    folder.mkdir(parents=True, exist_ok=True)
    text_pdf(folder / "paper.pdf", pages=2)
    encrypted_pdf(folder / "locked.pdf")
    textless_pdf(folder / "scan.pdf")
    return folder


if __name__ == "__main__":
    sys.exit(main())
