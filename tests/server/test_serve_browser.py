"""The web UI in a real browser: Debian's Chromium, headless, driven by Playwright, on loopback only.

A demo question is asked through the page; its steps must appear before the answer; a citation's card must show
the quote the API gives; clicking it must show the passage on its PDF page with the span highlighted (or, for a
Markdown paper, marked in its section); the trace tab must show the run's timeline and compare it with an earlier
run of the same question; the keyed server's page asks for the key, then uploads a paper with a progress bar; over a
library with collections, the ask form offers them and the answer comes from the chosen one only.
Screenshots go to ``test-output/browser/``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from lit3r.server.pages import fold
from lit3r.textutil import fold_space

from fakes.library import write_two_collections
from fakes.lit3r_server import KEY, ServeProcess
from fakes.pdfs import QUESTION as PDF_QUESTION

CHROMIUM = Path(os.environ.get("LIT3R_CHROMIUM", "/usr/bin/chromium"))
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SHOTS = Path(__file__).resolve().parents[2] / "test-output" / "browser"
DEMO_QUESTION = "How much did evidence verification reduce unsupported claims?"
TIMEOUT_MS = 60_000

sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM}: `make test` installs Debian's chromium with apt-get (needs root)")
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path=str(CHROMIUM),
            args=ARGS,
            headless=True,
            viewport={"width": 1280, "height": 800},
        )
        context.set_default_timeout(TIMEOUT_MS)
        yield context
        context.close()


@pytest.fixture
def page(browser, server):
    tab = browser.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.goto(server.base_url)
    tab.wait_for_selector("#status:has-text('papers')")
    yield tab
    tab.close()
    assert errors == [], errors


def ask(page, question: str) -> object:
    """Ask through the form; return the answer's message once its meta line (rendered last) is there."""
    page.evaluate(
        """() => {
          window.seen = {};
          new MutationObserver(() => {
            const now = performance.now();
            if (!window.seen.step && document.querySelector('.msg.bot:last-child .steps li')) window.seen.step = now;
            if (!window.seen.answer && document.querySelector('.msg.bot:last-child .chip')) window.seen.answer = now;
          }).observe(document.getElementById('messages'), {subtree: true, childList: true});
        }"""
    )
    page.fill("#question", question)
    page.keyboard.press("Enter")
    page.wait_for_selector(".msg.bot:last-child .meta")
    return page.locator(".msg.bot").last


def answer_of(server, message) -> dict:
    trace_id = message.get_attribute("data-trace")
    return httpx.get(f"{server.base_url}/v1/traces/{trace_id}", timeout=30).json()


def test_ask_hover_and_click_a_pdf_citation(page, server) -> None:
    message = ask(page, PDF_QUESTION)
    seen = page.evaluate("window.seen")
    assert seen["step"] < seen["answer"], "steps stream in before the answer"
    trace = answer_of(server, message)
    steps = message.locator(".steps li")
    assert steps.count() == len(trace["events"])
    citation = next(c for c in trace["answer"]["citations"] if c["paper_id"] == "glacier-radar")
    chip = message.locator(f".chip[data-n='{citation['number']}']").first
    chip.hover()
    card = page.locator("#card")
    card.wait_for(state="visible")
    assert fold_space(card.locator(".quote").inner_text()) == fold_space(citation["quote"])
    assert card.locator(".card-title").inner_text() == "Radar Interferometry of Alpine Glacier Flow"
    assert "p. 2" in card.locator(".card-where").inner_text() and "2 Results" in card.inner_text()
    page.screenshot(path=str(SHOTS / "1-card.png"))
    chip.click()
    figure = page.locator("#evidence .page")
    figure.wait_for()
    page.wait_for_function("() => document.querySelector('#evidence .page img').naturalWidth > 0")
    assert figure.get_attribute("data-found") == "exact"
    assert fold(figure.get_attribute("data-matched"))[0] == fold(citation["quote"])[0]
    boxes = figure.locator(".hl")
    assert boxes.count() >= 1
    image = figure.locator("img").bounding_box()
    for i in range(boxes.count()):
        box = boxes.nth(i).bounding_box()
        assert box["width"] > 10 and box["height"] > 2
        assert image["x"] <= box["x"] and box["x"] + box["width"] <= image["x"] + image["width"] + 1
    page.screenshot(path=str(SHOTS / "2-pdf-passage.png"))
    page.keyboard.press("Escape")
    assert page.locator("#evidence").is_hidden()


def test_markdown_citation_shows_the_section_with_the_quote_marked(page, server) -> None:
    message = ask(page, DEMO_QUESTION)
    trace = answer_of(server, message)
    citation = trace["answer"]["citations"][0]
    chip = message.locator(".chip").first
    chip.focus()  # keyboard: focus shows the card, Enter opens the passage
    page.locator("#card").wait_for(state="visible")
    page.keyboard.press("Enter")
    mark = page.locator("#evidence .section-text .cited mark")
    mark.wait_for()
    assert fold_space(mark.inner_text()) == fold_space(citation["quote"])
    assert page.locator("#evidence .section-text h3").inner_text() == citation["locator"]["section"]
    page.screenshot(path=str(SHOTS / "3-section-passage.png"))
    page.keyboard.press("Escape")
    assert page.evaluate("document.activeElement.classList.contains('chip')"), "focus returns to the chip"


def test_trace_tab_shows_the_timeline(page, server) -> None:
    message = ask(page, DEMO_QUESTION)
    trace = answer_of(server, message)
    message.locator(".open-trace").click()
    page.locator("#trace-question").wait_for()
    assert page.locator("#trace-question").inner_text() == trace["question"]
    rows = page.locator(".timeline tbody tr[data-type]")
    assert rows.count() == len(trace["events"])
    assert page.locator(".timeline tr.round").filter(has_text="round 1").count() == 1
    types = set(page.locator(".timeline td.type").all_inner_texts())
    assert {"tool", "ranking", "verdict", "node"} <= types
    page.locator(".filters input[value='node']").uncheck()
    assert page.locator(".timeline tbody tr[data-type='node']").first.is_hidden()
    page.screenshot(path=str(SHOTS / "4-trace.png"), full_page=True)
    earlier = page.locator("#diff-other optgroup[label='same question'] option").first  # the same question, earlier
    page.select_option("#diff-other", earlier.get_attribute("value"))
    page.click("#diff-form button")
    verdict = page.locator("#diff-verdict")
    verdict.wait_for()
    api = httpx.get(f"{server.base_url}/v1/traces/{trace['trace_id']}/diff/{earlier.get_attribute('value')}").json()
    assert ("identical" in verdict.inner_text()) == api["identical"]
    page.screenshot(path=str(SHOTS / "5-diff.png"), full_page=True)


def test_phone_width(page) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    ask(page, DEMO_QUESTION)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 391, f"the page scrolls sideways at phone width ({width}px)"
    page.screenshot(path=str(SHOTS / "6-phone.png"))


def test_keyed_page_asks_for_the_key_then_uploads_with_progress(browser, keyed_server, tmp_path: Path) -> None:
    tab = browser.new_page()
    tab.goto(keyed_server.base_url)
    dialog = tab.locator("#key-dialog")
    dialog.wait_for(state="visible")
    tab.fill("#key-input", KEY)
    tab.click("#key-dialog button[value='save']")
    tab.wait_for_selector("#status:has-text('papers')")
    tab.click("#tab-corpus")
    tab.wait_for_selector("#papers tbody tr")
    before = tab.locator("#papers tbody tr").count()
    paper = tmp_path / "ocean-acoustics.md"
    paper.write_text(
        "---\nid: ocean-acoustics\ntitle: Ocean Acoustics of Humpback Song\nyear: 2025\n---\n\n## Abstract\n\n"
        "We record humpback whale song with hydrophones.\n\n## 1 Results\n\nSongs lasted 14 minutes on average.\n",
        encoding="utf-8",
    )
    tab.set_input_files("#upload-files", str(paper))
    tab.click("#upload-button")
    tab.locator("#upload-progress").wait_for(state="visible")
    tab.wait_for_selector("#upload-stage:has-text('Done')")
    assert "Added: ocean-acoustics.md" in tab.locator("#upload-report").inner_text()
    tab.wait_for_function(f"() => document.querySelectorAll('#papers tbody tr').length === {before + 1}")
    assert tab.locator("#papers tbody").filter(has_text="Ocean Acoustics of Humpback Song").count() == 1
    tab.screenshot(path=str(SHOTS / "7-upload.png"))
    tab.close()


# The web UI items of the surface probe (RELIABILITY, web UI): the card after the panel closes, Markdown and
# sources, step lines in words, the sidebar after a failed first question, reopened threads' steps, the paper
# count while the server is down.


def test_the_card_stays_closed_after_the_panel_closes(page) -> None:
    message = ask(page, DEMO_QUESTION)
    chip = message.locator(".chip").first
    chip.focus()
    page.locator("#card").wait_for(state="visible")
    page.keyboard.press("Enter")
    page.locator("#evidence").wait_for(state="visible")
    page.keyboard.press("Escape")
    assert page.evaluate("document.activeElement.classList.contains('chip')")
    page.wait_for_timeout(200)
    assert page.locator("#card").is_hidden(), "focus returning to the chip does not reopen the card"
    assert page.evaluate("getComputedStyle(document.getElementById('card')).pointerEvents") == "none"


def test_answers_have_sources_and_steps_in_words(page, server) -> None:
    message = ask(page, DEMO_QUESTION)
    chips = message.locator(".chip").count()
    sources = message.locator("ol.sources > li")
    assert sources.count() >= 1 and chips >= 1
    numbers = {int(n) for n in message.locator(".chip").evaluate_all("cs => cs.map(c => c.dataset.n)")}
    assert {int(v) for v in sources.evaluate_all("ls => ls.map(l => l.value)")} == numbers
    sources.first.locator("button").click()
    page.locator("#evidence").wait_for(state="visible")
    page.keyboard.press("Escape")
    steps = message.locator(".steps li").all_inner_texts()
    assert steps and not any('{"' in s or "[{" in s for s in steps), steps
    # how sure the answer is, apart from the claim check: it supplies what was asked, with the reader's confidence
    assert re.search(
        r"(answers|may not answer) the question · confidence 0\.\d\d", message.locator(".meta").inner_text()
    )


def test_a_no_resting_on_a_technical_word_no_paper_mentions_says_so(page, server) -> None:
    message = ask(page, "Did they train the reranker with LoRA adapters?")  # the demo papers never mention LoRA
    assert "No — " in message.inner_text()
    assert "no paper read mentions LoRA" in message.locator(".meta").inner_text()
    assert answer_of(server, message)["answer"]["unmentioned"] == ["LoRA"]


def test_an_abstention_on_a_name_no_paper_mentions_says_which(page, server) -> None:
    message = ask(page, "Which optimizer was used to train AlphaGo?")  # the demo papers never name AlphaGo
    assert "no paper read mentions AlphaGo" in message.locator(".meta").inner_text()
    assert answer_of(server, message)["answer"]["unmentioned"] == ["AlphaGo"]


def test_markdown_is_rendered_and_html_is_not(page) -> None:
    html = page.evaluate(
        """async () => {
          const { markdownHtml } = await import('/static/js/markdown.js');
          return markdownHtml('Two results:\\n- **BM25** with *k1* 0.9 [1]\\n'
            + '- `dense` <img src=x onerror=alert(1)>\\n\\n'
            + '| method | recall |\\n| --- | --- |\\n| BM25 | 0.61 |\\n\\n<script>alert(1)</script>');
        }"""
    )
    assert "<ul><li><strong>BM25</strong> with <em>k1</em> 0.9 [1]</li>" in html
    assert "<code>dense</code>" in html and "<table" in html and "<td>0.61</td>" in html
    assert "<img" not in html and "<script" not in html and "&lt;script&gt;" in html


def test_a_failed_first_question_lists_its_thread_and_reopened_threads_show_steps(page, server) -> None:
    page.route("**/messages/stream", lambda route: route.fulfill(status=500, body="{}"))
    page.fill("#question", "Which reranker budget is recommended?")
    page.keyboard.press("Enter")
    page.locator(".msg.bot.error").wait_for()
    page.locator("#thread-list button").first.wait_for()
    assert page.locator("#threads-empty").is_hidden()
    page.unroute("**/messages/stream")
    page.click("#new-thread")
    message = ask(page, DEMO_QUESTION)
    live_steps = message.locator(".steps li").count()
    page.click("#new-thread")
    page.locator("#thread-list button[aria-current='false']").first.wait_for()
    page.locator("#thread-list button").first.click()  # the newest thread: the one just answered
    reopened = page.locator(".msg.bot").last
    reopened.locator(".meta").wait_for()
    assert reopened.locator(".steps .count").inner_text() == str(live_steps) and live_steps > 0


def test_the_paper_count_is_not_shown_while_the_server_is_down(browser, server) -> None:
    tab = browser.new_page()
    tab.clock.install()
    tab.goto(server.base_url)
    tab.wait_for_selector("#status:has-text('papers')")
    tab.route("**/v1/status", lambda route: route.abort())
    tab.clock.fast_forward(20_000)
    tab.wait_for_selector("#status:has-text('server unreachable')")
    tab.unroute("**/v1/status")
    tab.clock.fast_forward(20_000)
    tab.wait_for_selector("#status:has-text('papers')")
    tab.close()


def check(page, claim: str) -> object:
    """Check a claim in the Check tab; return the table once its rows are there."""
    page.click("#tab-check")
    page.fill("#claim", claim)
    page.click("#check-button")
    table = page.locator("#check-table")
    table.locator("tbody tr").first.wait_for()
    return table


def test_check_mode_shows_verdicts_and_opens_a_quote_on_its_pdf_page(page, server) -> None:
    claim = "The median surface velocity of the Aletsch glacier tongue was 250 metres per year."
    table = check(page, claim)
    api = httpx.post(f"{server.base_url}/v1/check", json={"claim": claim}, timeout=120).json()
    rows = table.locator("tbody tr")
    assert rows.count() == len(api["papers"])
    assert [rows.nth(i).get_attribute("data-verdict") for i in range(rows.count())] == [
        p["verdict"] for p in api["papers"]
    ]
    row = table.locator("tbody tr[data-paper='glacier-radar']")
    assert row.get_attribute("data-verdict") == "contradicts"
    assert page.locator("#check-summary").inner_text() == api["summary"]["message"]
    quote = next(p for p in api["papers"] if p["paper_id"] == "glacier-radar")["quotes"][0]
    button = row.locator(".check-quote").first
    assert fold_space(button.locator("q").inner_text()) == fold_space(quote["quote"])
    page.screenshot(path=str(SHOTS / "7-check.png"), full_page=True)
    button.click()
    figure = page.locator("#view-check #evidence .page")
    figure.wait_for()
    page.wait_for_function("() => document.querySelector('#evidence .page img').naturalWidth > 0")
    assert figure.get_attribute("data-found") in ("exact", "partial")
    assert figure.locator(".hl").count() >= 1
    page.screenshot(path=str(SHOTS / "8-check-page.png"))
    page.keyboard.press("Escape")
    page.click("#tab-chat")
    assert page.locator("#view-chat #evidence").count() == 1, "the passage panel goes back to the chat"


def test_check_mode_says_when_the_library_does_not_address_a_claim(page) -> None:
    check(page, "Penguins migrate north to breed on coastal cliffs.")
    assert "does not address" in page.locator("#check-summary").inner_text()
    assert page.locator("#check-table .check-quote").count() == 0


def test_the_sidebar_lists_the_ui_threads_and_searches_renames_and_deletes_them(page, server) -> None:
    api_thread = httpx.post(f"{server.base_url}/v1/threads", json={"title": "Made by a script"}, timeout=30).json()
    ask(page, DEMO_QUESTION)
    sidebar = page.locator("#thread-list")
    sidebar.locator("button[data-thread]").first.wait_for()
    ids = [b.get_attribute("data-thread") for b in sidebar.locator("button[data-thread]").all()]
    assert api_thread["thread_id"] not in ids, "threads of the API stay out of the sidebar"
    mine = ids[0]
    assert httpx.get(f"{server.base_url}/v1/threads/{mine}", timeout=30).json()["origin"] == "ui"
    page.once("dialog", lambda dialog: dialog.accept("Verification findings"))
    sidebar.locator(f"button[data-rename='{mine}']").click()
    page.wait_for_selector(f"#thread-list button[data-thread='{mine}']:has-text('Verification findings')")
    page.fill("#thread-search", "findings")
    page.wait_for_function("() => document.querySelectorAll('#thread-list button[data-thread]').length === 1")
    page.fill("#thread-search", "no thread is called this")
    page.locator("#threads-empty:has-text('No thread matches')").wait_for()
    page.fill("#thread-search", "findings")
    row = sidebar.locator(f"button[data-delete='{mine}']")
    row.wait_for()
    page.once("dialog", lambda dialog: dialog.dismiss())
    row.click()
    assert httpx.get(f"{server.base_url}/v1/threads/{mine}", timeout=30).status_code == 200, "cancel keeps it"
    page.once("dialog", lambda dialog: dialog.accept())
    row.click()
    page.locator("#threads-empty:has-text('No thread matches')").wait_for()
    assert httpx.get(f"{server.base_url}/v1/threads/{mine}", timeout=30).status_code == 404
    assert page.locator(".msg").count() == 0, "the open thread's messages go with it"


@pytest.fixture(scope="module")
def library_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    """``lit3r serve`` over a library of two collections (default settings, as the demo server's home)."""
    from lit3r.corpus.ingest import ingest
    from lit3r.corpus.store import CorpusStore
    from lit3r.index.build import build_index
    from lit3r.settings import Settings

    folder = tmp_path_factory.mktemp("library")
    home = folder / "home"
    with CorpusStore(home) as store:
        report = ingest([write_two_collections(folder)], store)
        assert not report.failed, report.failed
        build_index(Settings(home=home), store)
    with ServeProcess(home) as running:
        yield running


def test_the_ask_form_offers_the_collections_and_answers_from_the_chosen_one(page, browser, library_server) -> None:
    assert page.locator("#collection").is_hidden(), "the demo corpus has no collections: no picker"
    tab = browser.new_page()
    tab.goto(library_server.base_url)
    picker = tab.locator("#collection")
    picker.wait_for(state="visible")
    assert picker.locator("option").all_inner_texts() == ["All papers", "Reading", "Thesis"]
    tab.select_option("#collection", "Reading")
    message = ask(tab, "What was the median surface velocity of the Aletsch glacier tongue?")
    trace = answer_of(library_server, message)
    assert {c["paper_id"] for c in trace["answer"]["citations"]} == {"serac2019model"}
    text = message.locator(".text").first.inner_text()
    assert "150 metres" in text and "182" not in text
    tab.screenshot(path=str(SHOTS / "9-collection.png"))
    tab.close()


def test_the_check_form_offers_the_collections_and_judges_only_the_chosen_ones_papers(browser, library_server) -> None:
    tab = browser.new_page()
    tab.goto(library_server.base_url)
    tab.click("#tab-check")
    picker = tab.locator("#check-collection")
    picker.wait_for(state="visible")
    assert picker.locator("option").all_inner_texts() == ["All papers", "Reading", "Thesis"]
    tab.select_option("#check-collection", "Thesis")
    table = check(tab, "The Aletsch glacier tongue flows 182 metres per year.")
    papers = {
        table.locator("tbody tr").nth(i).get_attribute("data-paper") for i in range(table.locator("tbody tr").count())
    }
    assert papers == {"moraine2021radar"}
    tab.close()
