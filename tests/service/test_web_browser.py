"""The web pages in a real browser: headless Chromium (Debian's, via chromium-driver) driven by
Selenium against a real ``neardup serve`` process with a token.

One server and one browser for the module (starting them is the slow part); each test opens
the page afresh with the tab's sessionStorage cleared, and saves a screenshot under its pytest
tmp dir (the path is printed: ``pytest -s`` shows it).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.wait import WebDriverWait

from tests.service.test_service import AUTH, TOKEN, Server, make_collection, serving

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1280,1600",
)  # fmt: skip
WAIT = 60  # seconds; the first compare compiles the kernels in the server

# One passage, shared by the texts below with other case, punctuation and line breaks.
PASSAGE = (
    "The river keeper walked along the northern bank every morning, counting the herons "
    "that nested in the willows, noting the height of the water on the old stone gauge, "
    "and writing both figures in a ledger that his grandfather had started seventy years "
    "before, when the mill still turned and the town was half its present size"
)
TAIL = (
    "Violet umbrellas crowded the quay when the ferry came in late, and the harbour master, "
    "who had waited since noon, refused to sign for cargo he could not see in the fog"
)
SHOUTED = PASSAGE.upper().replace(", ", ";\n")


def _driver(profile: str) -> WebDriver:
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    return webdriver.Chrome(options=options, service=Service(str(CHROMEDRIVER)))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("web")
    db = make_collection(tmp / "c.db")
    with serving(str(db), tmp / "server.log", "--token", TOKEN) as running:
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.fail("chromium or chromedriver missing: run scripts/install-chromium.sh")
    profile = tempfile.mkdtemp(prefix="neardup-chromium-")
    driver = _driver(profile)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def fresh(browser: WebDriver, server: Server, hash_: str = "") -> None:
    """The page loaded in a tab that holds no token."""
    browser.get(f"{server.url}/")
    browser.execute_script("sessionStorage.clear()")
    browser.get(f"{server.url}/{hash_}")
    visible(browser, "unlock")


def visible(browser: WebDriver, element_id: str) -> WebElement:
    return WebDriverWait(browser, WAIT).until(ec.visibility_of_element_located((By.ID, element_id)))


def text_in(browser: WebDriver, element_id: str, text: str) -> None:
    WebDriverWait(browser, WAIT).until(ec.text_to_be_present_in_element((By.ID, element_id), text))


def tab_to(browser: WebDriver, element_id: str, presses: int = 40) -> WebElement:
    """Press Tab until ``element_id`` has the focus (keyboard only); fail if it never does."""
    for _ in range(presses):
        active = browser.switch_to.active_element
        if active.get_attribute("id") == element_id:
            return active
        ActionChains(browser).send_keys(Keys.TAB).perform()  # not to a file input: a path
    pytest.fail(f"Tab never reached #{element_id}")


def unlock(browser: WebDriver, token: str = TOKEN) -> None:
    """Type the token into the form the page shows, by keyboard."""
    field = visible(browser, "token")
    assert browser.switch_to.active_element == field  # the page puts the focus there
    field.send_keys(token, Keys.ENTER)


def screenshot(browser: WebDriver, tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.png"
    browser.save_screenshot(str(path))
    print(f"screenshot: {path}")


def marks(element: WebElement) -> list[str]:
    return [m.text for m in element.find_elements(By.TAG_NAME, "mark")]


def test_wrong_token_is_refused_and_nothing_shows(browser, server, tmp_path):
    fresh(browser, server)
    unlock(browser, "not-the-token")
    text_in(browser, "unlock-message", "refused")
    screenshot(browser, tmp_path, "wrong-token")
    assert not browser.find_element(By.ID, "app").is_displayed()
    assert not browser.find_element(By.ID, "pages").is_displayed()
    assert browser.execute_script("return sessionStorage.length") == 0
    # the fragments themselves refuse without the token; only the page shell and /health open
    assert httpx.get(f"{server.url}/web/collection").status_code == 401
    assert httpx.get(f"{server.url}/health").status_code == 200


def test_compare_by_keyboard_marks_the_shared_passage_as_written(browser, server, tmp_path):
    a = f"Zebra yak xylophone.\n{PASSAGE}. {TAIL}"
    b = f"Sun moon, star comet: {SHOUTED}! Rain snow hail sleet."
    fresh(browser, server)
    unlock(browser)
    visible(browser, "app")
    text_in(browser, "collection-result", "Documents")
    unlabelled = browser.execute_script(
        "return [...document.querySelectorAll('textarea, input')]"
        ".filter(e => e.labels.length === 0).map(e => e.id)"
    )
    assert unlabelled == []
    tab_to(browser, "text-a").send_keys(a)
    focused = browser.switch_to.active_element
    outline = browser.execute_script("return getComputedStyle(arguments[0]).outlineStyle", focused)
    assert outline != "none"  # the focus is visible
    tab_to(browser, "text-b").send_keys(b)
    tab_to(browser, "compare-button").send_keys(Keys.ENTER)
    text_in(browser, "compare-result", "holds")
    screenshot(browser, tmp_path, "compare")

    shown_a = browser.find_element(By.ID, "shown-a")
    shown_b = browser.find_element(By.ID, "shown-b")
    body_a = shown_a.find_element(By.CLASS_NAME, "body")
    body_b = shown_b.find_element(By.CLASS_NAME, "body")
    # the texts as written, the passage marked exactly: nothing before or after it
    assert body_a.get_attribute("textContent") == a
    assert body_b.get_attribute("textContent") == b
    assert [m.replace("\n", " ") for m in marks(body_a)] == [PASSAGE]
    assert [m.get_attribute("textContent") for m in body_b.find_elements(By.TAG_NAME, "mark")] == [
        SHOUTED
    ]
    verdict = browser.find_element(By.ID, "verdict").text
    assert verdict.startswith("B is contained in A")  # the lossless rule: B may go, A not
    holds = browser.find_element(By.CSS_SELECTOR, "#compare-result .holds").text
    assert "B holds" in holds
    assert "of A" in holds


def test_search_opens_a_document_and_adds_a_text(browser, server, tmp_path):
    stored = f"Archive note.\n\n{PASSAGE}."
    query = f"From the editor — {SHOUTED}"
    with httpx.Client(base_url=server.url, headers=AUTH, timeout=120) as client:
        docs = [{"id": "ledger/1", "text": stored, "meta": {"text": stored, "by": "archive"}}]
        assert client.post("/documents", json={"documents": docs}).status_code == 200
    fresh(browser, server)
    unlock(browser)
    visible(browser, "app")
    browser.find_element(By.ID, "search-text").send_keys(query)
    browser.find_element(By.ID, "search-button").click()
    text_in(browser, "search-result", "best first")
    screenshot(browser, tmp_path, "search")

    match = browser.find_element(By.CSS_SELECTOR, "#search-result li.match")
    assert match.get_attribute("data-id") == "ledger/1"
    stored_body = match.find_element(By.CSS_SELECTOR, "#stored-1 .body")
    assert stored_body.get_attribute("textContent") == stored
    assert [m.replace("\n", " ") for m in marks(stored_body)] == [PASSAGE]
    assert "may go" in match.find_element(By.CLASS_NAME, "verdict").text

    match.find_element(By.LINK_TEXT, "ledger/1").send_keys(Keys.ENTER)  # open it, by keyboard
    text_in(browser, "document-result", "Its near-duplicates")
    assert browser.find_element(By.ID, "document-text").get_attribute("textContent") == stored
    assert "archive" in browser.find_element(By.ID, "document-result").text  # its meta
    screenshot(browser, tmp_path, "document")

    before = int(browser.find_element(By.CSS_SELECTOR, "[data-key=documents] dd").text)
    browser.find_element(By.ID, "add-id").send_keys("editor/1")
    browser.find_element(By.ID, "add-button").click()
    text_in(browser, "search-result", "Added editor/1")
    WebDriverWait(browser, WAIT).until(
        lambda b: b.find_element(By.CSS_SELECTOR, "[data-key=documents] dd").text == str(before + 1)
    )
    assert "ledger/1" in browser.find_element(By.ID, "search-result").text
    screenshot(browser, tmp_path, "added")


def test_a_file_opened_for_a_fills_its_box(browser, server, tmp_path):
    path = tmp_path / "a.txt"
    path.write_text(f"Ünïcode stays. {PASSAGE}\n", encoding="utf-8")
    fresh(browser, server)
    unlock(browser)
    visible(browser, "app")
    browser.find_element(By.ID, "file-a").send_keys(str(path))  # what choosing a file does
    WebDriverWait(browser, WAIT).until(
        lambda b: b.find_element(By.ID, "text-a").get_attribute("value") == path.read_text()
    )
    screenshot(browser, tmp_path, "file")
