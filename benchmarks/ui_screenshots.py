"""The web UI's screenshots (README.md, docs/server.md): a demo question answered, its citation opened in its
section, and a citation of the tests' PDF paper opened on its page with the quoted span highlighted.

Run from the repository root (needs Debian's chromium, as the browser tests do)::

    python benchmarks/ui_screenshots.py --out docs
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the test builders: home and server
from fakes.lit3r_server import ServeProcess, served_home  # noqa: E402
from fakes.pdfs import QUESTION as PDF_QUESTION  # noqa: E402

DEMO_QUESTION = "How many questions does LocatorQA contain?"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]  # fmt: skip


def answer(page, question: str):
    page.fill("#question", question)
    page.keyboard.press("Enter")
    page.wait_for_selector(".msg.bot:last-child .meta", timeout=60_000)
    return page.locator(".msg.bot").last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("docs"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lit3r-shots-") as tmp, sync_playwright() as playwright:
        home = served_home(Path(tmp))
        with ServeProcess(home) as server:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS, headless=True)
            page = browser.new_page(viewport={"width": 1280, "height": 760})
            page.goto(server.base_url)
            page.wait_for_selector("#status:has-text('papers')")
            message = answer(page, DEMO_QUESTION)
            chips = message.locator(".chip")
            chips.last.click()
            page.wait_for_selector("#evidence .section-text mark")
            page.screenshot(path=str(args.out / "ui-answer.png"))
            page.keyboard.press("Escape")
            page.click("#new-thread")
            message = answer(page, PDF_QUESTION)
            message.locator(".chip").first.click()
            page.wait_for_function("() => document.querySelector('#evidence .page img')?.naturalWidth > 0")
            page.wait_for_timeout(300)
            page.screenshot(path=str(args.out / "ui-pdf-page.png"))
            browser.close()


if __name__ == "__main__":
    main()
