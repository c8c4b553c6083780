"""The plan report at 500 nodes / 5,000 pods (upstream's `5000pods_500nodes`, issue #20): page
size and the time headless chromium takes to open it and draw every figure.

    .venv/bin/python -m benchmarks.report_html

Why measured: the page must stay under 10 MB and open in under 3 s at this size (the map is
aggregated per node class above `MAP_NODES` nodes); prints the numbers for docs/benchmarks.md.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from benchmarks.workloads import upstream_5000
from dra_solver import Cluster, Options, plan
from dra_solver.output.report import write_report
from dra_solver.planning.resolve import resolve_nodes


def main(runs: int = 3) -> None:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    cluster = Cluster.from_objects(upstream_5000(template=True))
    options = Options()
    started = time.perf_counter()
    outcome = plan(cluster, options=options)
    seconds = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        page = write_report(
            Path(tmp) / "report.html", cluster, outcome, resolve_nodes(cluster, None), options.feature_gates,
            seconds=seconds,
        )  # fmt: skip
        written = time.perf_counter() - started
        chrome = webdriver.ChromeOptions()
        chrome.binary_location = shutil.which("chromium") or "chromium"
        for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,1600"):
            chrome.add_argument(arg)
        driver = webdriver.Chrome(options=chrome, service=Service(shutil.which("chromedriver")))
        opens = []
        try:
            for _ in range(runs):
                started = time.perf_counter()
                driver.get(page.as_uri())
                while driver.find_element("tag name", "body").get_attribute("data-rendered") != "true":
                    time.sleep(0.02)
                opens.append(time.perf_counter() - started)
        finally:
            driver.quit()
        print(f"plan: {outcome.placed} of {len(outcome.pods)} pods, {seconds:.1f} s ({outcome.allocator})")
        print(f"report: {page.stat().st_size / 1e6:.2f} MB, written in {written:.2f} s")
        print("open (navigation to every figure drawn): " + ", ".join(f"{s:.2f} s" for s in opens))


if __name__ == "__main__":
    main()
