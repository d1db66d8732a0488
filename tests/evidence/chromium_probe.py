"""Render a page in headless Chromium at desktop width and report what a reader would see wrong.

A copy of the page gets a probe script that runs after the load event and
measures: images that did not load, text that is a raw JSON (or Python dict)
dump, whether the page is wider than the window, where the report's summary
(``.fp8lab-summary``) starts on the page, and how many folds
(``details.fp8lab-fold``) it has, closed. Chromium prints the DOM
(``--dump-dom``) and the probe's line is read back from it. Only the copy,
written beside the page so relative links resolve, carries the script.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

WIDTH, HEIGHT = 1366, 900  # a desktop window
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
PROBE = """<script>
addEventListener("load", () => {
  const root = document.documentElement;
  const broken = [...document.images]
    .filter((i) => !i.complete || i.naturalWidth === 0)
    .map((i) => i.getAttribute("src").slice(0, 80));
  const outputs = [...document.querySelectorAll(".jp-OutputArea-output")];
  const scope = outputs.length ? outputs : [document.body];
  const dump = /[\\[{]\\s*["'][^"'\\n]{1,80}["']\\s*:/;
  const json = scope.map((e) => e.innerText).filter((t) => dump.test(t))
    .map((t) => t.slice(0, 120));
  const summaries = [...document.querySelectorAll(".fp8lab-summary")];
  const summary_top = summaries.length
    ? summaries[0].getBoundingClientRect().top + scrollY : null;
  const folds = [...document.querySelectorAll("details.fp8lab-fold")];
  const probe = document.createElement("pre");
  probe.id = "fp8lab-probe";
  probe.textContent = JSON.stringify({
    client: root.clientWidth, scroll: root.scrollWidth, images: document.images.length,
    broken, json, height: innerHeight, summaries: summaries.length, summary_top,
    folds: folds.length, folds_open: folds.filter((d) => d.open).length,
  });
  document.body.appendChild(probe);
});
</script>"""
_RESULT = re.compile(r'<pre id="fp8lab-probe">(.*?)</pre>', re.DOTALL)


def chromium() -> str | None:
    """The headless browser's path, or None when none is installed."""
    return next((p for p in map(shutil.which, BROWSERS) if p), None)


def probe(page: Path, profile: Path) -> dict[str, Any]:
    """What the probe measured on ``page`` (see the module docstring).

    Raises:
        AssertionError: if Chromium printed no probe line.
    """
    browser = chromium()
    assert browser is not None
    copy = page.with_name(f".probe-{page.name}")
    text = page.read_text(encoding="utf-8")
    copy.write_text(text.replace("</body>", PROBE + "</body>", 1), encoding="utf-8")
    command = [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        f"--user-data-dir={profile}",
        f"--window-size={WIDTH},{HEIGHT}",
        "--virtual-time-budget=10000",
        "--dump-dom",
        copy.as_uri(),
    ]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    finally:
        copy.unlink()
    found = _RESULT.search(done.stdout)
    assert found, f"no probe line from {browser} (exit {done.returncode}): {done.stderr[-500:]}"
    result: dict[str, Any] = json.loads(html.unescape(found[1]))
    return result


def reader_problems(measured: dict[str, Any]) -> list[str]:
    """What a reader would see wrong, from :func:`probe`'s measurements."""
    problems = [f"image did not load: {src}" for src in measured["broken"]]
    problems += [f"raw JSON dump: {text!r}" for text in measured["json"]]
    if measured["scroll"] > measured["client"]:
        problems.append(f"horizontal overflow: {measured['scroll']} px > {measured['client']} px")
    return problems


def layout_problems(measured: dict[str, Any], *, long_tables: bool) -> list[str]:
    """What is wrong with a report's layout: the summary first, long tables folded.

    The report must have exactly one summary, starting within the first
    window height, and (when it has ``long_tables``) at least one fold, closed.
    """
    problems = []
    if measured["summaries"] != 1:
        problems.append(f"summaries: {measured['summaries']}, want exactly 1")
    elif measured["summary_top"] >= measured["height"]:
        problems.append(
            f"summary starts at {measured['summary_top']:.0f} px, below the first "
            f"{measured['height']} px"
        )
    if long_tables and measured["folds"] == 0:
        problems.append("no folded table")
    if measured["folds_open"]:
        problems.append(f"{measured['folds_open']} folds open")
    return problems
