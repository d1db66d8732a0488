"""Issue 9 item 8: the README's numbers name the runs they came from, and those runs exist.

Every ``results/<kind>/<run_id>`` the README cites must be a run directory
with a readable manifest, complete unless it is filed under ``results/failed``;
and the "Published evidence" table names one run for every notebook and for
the proofs. (Whether those runs are fresh for the code is ``fp8lab evidence
--check``'s verdict, a release step: a test cannot require it of every commit.)
"""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "docs" / "manual.md").read_text()
CITED = sorted(set(re.findall(r"results/(?:failed/)?[a-z_0-9]+/\d{8}T\d{6}\d*Z-[^`\s)/]+", README)))


def test_the_readme_cites_runs() -> None:
    assert len(CITED) >= 9


def test_every_cited_run_exists_with_its_manifest() -> None:
    for cited in CITED:
        manifest = ROOT / cited / "manifest.json"
        assert manifest.is_file(), f"README cites {cited}, which has no manifest"
        data = json.loads(manifest.read_text())
        want = "failed" if "/failed/" in cited else "complete"
        assert data["status"] == want, f"{cited} is {data['status']}, cited as {want}"


def test_the_published_table_names_a_run_for_every_notebook_and_the_proofs() -> None:
    table = README.split("### Published evidence", 1)[1].split("###", 1)[0]
    named = dict(re.findall(r"^\| `([a-z_0-9]+)` \| `(results/[^`]+)` \|", table, re.M))
    notebooks = {p.stem for p in (ROOT / "notebooks").glob("*.ipynb")}
    assert set(named) == notebooks | {"proofs"}
    for kind, path in named.items():
        assert path.startswith(f"results/{kind}/"), (kind, path)
