"""``make docs``: the manual builds with MkDocs in strict mode, every link resolves, and it renders.

The build runs ``mkdocs build --strict`` as ``make docs`` does (the ``docs``
extra is part of ``test``), once for the module. Then: every page of the
navigation is in the site, the API pages came from the docstrings, every
relative link and anchor of every built page resolves (a link checker of
our own over the HTML), the README's links name files that exist, and
headless Chromium renders the home page and one page of each section with
every image loaded and nothing wider than the window. The meta tests plant a
link to a page that does not exist (the build fails naming it) and a dead
anchor (the link checker names it).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from tests.conftest import needs
from tests.evidence.chromium_probe import chromium, probe, reader_problems

pytestmark = [pytest.mark.process, needs("mkdocs", extra="docs")]

ROOT = Path(__file__).resolve().parents[2]
# the home page and one page of each part of the navigation
RENDERED = ("index", "getting-started", "gates/g1", "cli", "api", "records", "rules", "sources")


def _build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        capture_output=True,
        text=True,
        check=False,
        cwd=config.parent,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=600,
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("docs") / "site"
    proc = _build(ROOT / "mkdocs.yml", out)
    assert proc.returncode == 0, proc.stderr
    return out


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name == "id" and value:
                self.ids.add(value)
            if value and (name == "href" or (name == "src" and tag in ("img", "script"))):
                self.links.append(value)


def _parse(page: Path) -> _Links:
    parser = _Links()
    parser.feed(page.read_text())
    return parser


def _target(site: Path, page: Path, url: str) -> Path:
    base = site if url.startswith("/") else page.parent
    path = (base / unquote(url.lstrip("/"))).resolve() if url else page
    return path / "index.html" if path.is_dir() else path


def dead_links(site: Path) -> list[str]:
    """Every relative link or anchor of the built site that points at nothing."""
    dead: list[str] = []
    parsed = {p: _parse(p) for p in site.rglob("*.html")}
    for page, found in parsed.items():
        for link in found.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith(("mailto:", "data:")):
                continue
            target = _target(site, page, parts.path)
            where = f"{page.relative_to(site)}: {link}"
            if not target.exists():
                dead.append(where)
            elif parts.fragment and target.suffix == ".html":
                ids = parsed[target].ids if target in parsed else _parse(target).ids
                if unquote(parts.fragment) not in ids:
                    dead.append(where)
    return dead


def test_the_manual_builds_strictly(site: Path) -> None:
    api = (site / "api" / "index.html").read_text()
    assert "run_g1" in api and "assert_gate" in api  # the API pages came from the docstrings
    nav = (ROOT / "mkdocs.yml").read_text().split("nav:", 1)[1].split("\nhooks:", 1)[0]
    pages = re.findall(r":\s*([a-z0-9/_-]+)\.md\s*$", nav, re.M)
    assert len(pages) >= 20
    for page in pages:
        built = site / ("index.html" if page == "index" else f"{page}/index.html")
        assert built.exists(), page
    assert "{{ fp8lab:" not in "".join(p.read_text() for p in site.rglob("*.html"))


def test_every_link_of_the_site_resolves(site: Path) -> None:
    assert dead_links(site) == []


def test_the_readme_links_resolve() -> None:
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", (ROOT / "README.md").read_text())
    local = [link for link in links if not urlsplit(link).scheme]
    assert len(local) >= 10
    assert [link for link in local if not (ROOT / link).exists()] == []


def test_the_link_checker_finds_a_dead_anchor_and_page(site: Path, tmp_path: Path) -> None:
    copy = tmp_path / "site"
    shutil.copytree(site, copy)
    page = copy / "cli" / "index.html"
    page.write_text(
        page.read_text()
        + '<a href="../gates/g1/#no-such-anchor">x</a><a href="../no-such-page/">y</a>'
    )
    assert dead_links(copy) == [
        "cli/index.html: ../gates/g1/#no-such-anchor",
        "cli/index.html: ../no-such-page/",
    ]


@pytest.mark.skipif(chromium() is None, reason="headless Chromium is not installed")
@pytest.mark.parametrize("page", RENDERED)
def test_chromium_renders_the_page(site: Path, page: str, tmp_path: Path) -> None:
    html = site / ("index.html" if page == "index" else f"{page}/index.html")
    measured = probe(html, tmp_path / "profile")
    assert reader_problems(measured) == []


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    config = (ROOT / "mkdocs.yml").read_text().replace("paths: [.]", f"paths: [{ROOT}]")
    config = config.replace("- docs/hooks.py", f"- {ROOT / 'docs' / 'hooks.py'}")
    (tmp_path / "mkdocs.yml").write_text(config)
    index = tmp_path / "docs" / "index.md"
    index.write_text(index.read_text() + "\nSee [the gone page](no-such-page.md).\n")
    proc = _build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert proc.returncode != 0 and "no-such-page.md" in proc.stderr, proc.stderr
