"""The built-in chat page in headless Chromium: a streamed reply appears, and Stop ends a long one."""
import shutil
import time

import pytest

selenium = pytest.importorskip("selenium")
from selenium import webdriver  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from conftest import Server  # noqa: E402


@pytest.fixture(scope="module")
def browser():
    driver_path = shutil.which("chromedriver")
    if not driver_path:
        pytest.skip("chromium-driver is not installed (scripts/setup.sh installs it)")
    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=webdriver.ChromeService(executable_path=driver_path), options=options)
    yield driver
    driver.quit()


def test_streams_a_reply_and_stop_cancels(browser):
    # The oracle backend: the tiny model's replies often end by a sampled end token within a few hundred
    # tokens, which the cpu backend finishes before a click can land, so Stop would have nothing to stop.
    server = Server("--parallel", "2", "--ctx-size", "8192", "--max-tokens", "2000", "--backend", "ref")
    try:
        browser.get(server.url + "/")
        box = browser.find_element(By.ID, "input")
        box.send_keys("Hello!")
        browser.find_element(By.ID, "send").click()
        wait = WebDriverWait(browser, 60)
        reply = wait.until(lambda d: d.find_element(By.ID, "reply-1"))
        wait.until(lambda d: reply.get_attribute("data-done"))
        assert reply.get_attribute("data-done") == "true"
        text = reply.find_element(By.CLASS_NAME, "content").text + reply.find_element(By.CLASS_NAME, "reasoning").get_attribute("textContent")
        assert text.strip()

        # A long reply is stopped. The tiny model's thinking usually runs to max_tokens, but a sampled end
        # token can finish a reply before Stop is clicked; such a reply proves nothing, so ask again. On a
        # loaded host a click can take long enough that five such replies came in a row (11-30), so up to
        # twenty tries, with the context sized for their history.
        for attempt in range(20):
            box.send_keys("Tell me more.")
            browser.find_element(By.ID, "send").click()
            second = wait.until(lambda d: d.find_element(By.ID, f"reply-{3 + 2 * attempt}"))
            wait.until(lambda d: second.find_element(By.CLASS_NAME, "reasoning").get_attribute("textContent"))
            browser.find_element(By.ID, "stop").click()
            wait.until(lambda d: second.get_attribute("data-done"))
            if second.get_attribute("data-done") != "true":
                break
        assert second.get_attribute("data-done") == "stopped"
        for _ in range(100):
            if server.metric("tern:num_requests_running") == 0:
                break
            time.sleep(0.05)
        assert server.metric("tern:num_requests_running") == 0
        assert server.metric('tern:request_success_total') >= 2
    finally:
        assert server.stop() == 0
