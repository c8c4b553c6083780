"""The plan report (`plan --report`, issue #20) opened in a real browser: headless Debian
chromium through selenium, with networking off.

Why a browser and not an HTML parser: the page is plotly figures drawn by script; only a
browser says whether the charts render (their SVG exists), whether the page works offline
(nothing fetched) and whether the console stays clean. The bundled example's page is also the
screenshot in docs/examples.md (`DRA_SOLVER_SCREENSHOT=1` rewrites docs/img/plan-report.png).

The browser: `apt-get install -y chromium chromium-driver` (the README's test command does it
when root). Where it is missing the tests fail under CI (`CI` set: `.ci/run` sets it) and
skip elsewhere, so a CI run can never pass without having looked at the page.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dra_solver import Cluster, Options, plan
from dra_solver.cli.main import app
from dra_solver.output.report import MAP_NODES, write_report
from dra_solver.planning.resolve import resolve_nodes

ROOT = Path(__file__).resolve().parents[1]
SCREENSHOT = ROOT / "docs" / "img" / "plan-report.png"
POLL_SECONDS = 0.05
RENDER_POLLS = 6000
"""Looks at the page (one every `POLL_SECONDS`) after which it is taken for broken (its figures
never drawn): a guard against a hang counted in looks, not a clock reading, and not a
measurement — the open time is measured in benchmarks/report_html.py."""


def _chromium() -> tuple[str, str] | None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    found = _chromium()
    if found is None:
        message = "chromium and chromedriver not found: apt-get install -y chromium chromium-driver"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = found[0]
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1280,1600",
        # networking off: every host unresolvable, every connection to a dead proxy
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--proxy-server=http://127.0.0.1:9",
        "--proxy-bypass-list=<-loopback>",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(found[1]))
    try:
        driver.set_network_conditions(offline=True, latency=0, download_throughput=0, upload_throughput=0)
        yield driver
    finally:
        driver.quit()


def _open(driver: object, page: Path) -> None:
    """Open the page and wait until every figure is drawn: at most `RENDER_POLLS` looks, a bound
    on the waiting that reads no clock (how long the page takes is measured in
    benchmarks/report_html.py, not asserted here)."""
    driver.get(page.as_uri())  # type: ignore[attr-defined]
    for _ in range(RENDER_POLLS):
        if driver.find_element("tag name", "body").get_attribute("data-rendered") == "true":  # type: ignore[attr-defined]
            return
        time.sleep(POLL_SECONDS)
    raise AssertionError(f"the report's figures did not render after {RENDER_POLLS} looks")


def _errors(driver: object) -> list[dict[str, object]]:
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]  # type: ignore[attr-defined]


def _cell(driver: object, key: str, attr: str = "data-key") -> str:
    return driver.find_element("css selector", f'td[{attr}="{key}"]').text  # type: ignore[attr-defined]


def test_the_bundled_example_report_renders_offline_with_the_plans_numbers(
    browser: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    page = tmp_path / "report.html"
    args = ["plan", "docs/examples/cluster-dump.yaml", "-o", "json", "--report", str(page), "--compare"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.stderr[-2000:]  # 7 of 8 pods placed
    assert "placed 7 of 8 pods" in result.stderr
    assert "<script src" not in page.read_text()  # nothing to fetch: plotly.js is inline

    _open(browser, page)
    assert _errors(browser) == []
    svgs = browser.find_elements("css selector", "#fig-map svg.main-svg")  # type: ignore[attr-defined]
    assert svgs and browser.find_elements("css selector", "#fig-utilisation svg.main-svg")  # type: ignore[attr-defined]
    assert browser.find_elements("css selector", "#fig-map .hm, #fig-map image")  # type: ignore[attr-defined]
    assert _cell(browser, "pods placed") == "7 / 8"
    assert _cell(browser, "pods placed", "data-compare") == "7 / 8"  # first fit, side by side
    assert _cell(browser, "allocator") == "cpsat"
    assert _cell(browser, "allocator", "data-compare") == "reference"
    rows = browser.find_elements("css selector", "#unplaced-table tr")  # type: ignore[attr-defined]
    assert len(rows) == 2 and "dra-solver explain docs/examples/cluster-dump.yaml --pod" in rows[1].text

    shot = tmp_path / "report.png"
    browser.save_screenshot(str(shot))  # type: ignore[attr-defined]
    assert shot.stat().st_size > 10_000
    if os.environ.get("DRA_SOLVER_SCREENSHOT"):
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, SCREENSHOT)


def test_a_report_past_the_map_starts_aggregated_and_drills_down(browser: object, tmp_path: Path) -> None:
    """One node more than the map draws (`MAP_NODES`), two one-GPU pods each and 100 more
    pending: the page starts from the aggregated map and drills down in two pages. Upstream's
    500-node shape (ten GPUs a node) was used before; one node past the map with two GPUs each
    shows the same with a fifth of the pods: the number of nodes is what the map is about."""
    from benchmarks.workloads import upstream_5000

    count = MAP_NODES + 1
    gpus = 2
    cluster = Cluster.from_objects(
        upstream_5000(nodes=count, devices=gpus, pods=gpus * count + 100, template=True)
    )
    options = Options(allocator="reference")
    outcome = plan(cluster, options=options)
    assert outcome.placed == gpus * count
    nodes = resolve_nodes(cluster, None)
    assert len(nodes) > MAP_NODES
    page = write_report(tmp_path / "big.html", cluster, outcome, nodes, options.feature_gates, seconds=1.0)
    assert page.stat().st_size < 10_000_000

    _open(browser, page)
    assert _errors(browser) == []
    assert _cell(browser, "pods placed") == f"{gpus * count} / {gpus * count + 100}"
    assert browser.find_elements("css selector", "#fig-map svg.main-svg")  # type: ignore[attr-defined]
    assert browser.find_elements("css selector", "#fig-drill .hm, #fig-drill image")  # type: ignore[attr-defined]
    options_shown = browser.find_elements("css selector", "#drill option")  # type: ignore[attr-defined]
    assert len(options_shown) == 2  # one class of MAP_NODES + 1 nodes, in pages of at most MAP_NODES
    assert len(browser.find_elements("css selector", "#unplaced-table tr")) == 101  # type: ignore[attr-defined]
