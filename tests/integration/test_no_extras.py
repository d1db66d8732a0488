"""fp8lab installed without extras runs every notebook's smoke run from an empty folder.

The environment is a fresh virtual environment holding fp8lab as its wheel
installs it and, linked from this one, only the distributions its required
dependencies pull in (no extra's: no torch, triton, torchao, compressed-tensors,
dask, cupy, nor the CUDA header and NVRTC wheels), so no network is needed.
Parts that need an extra are PENDING or absent, naming the install line.

``make test`` runs the notebooks whose rows need an extra (their absent rows are
what this environment shows); the others' smoke runs are run with the extras by
tests/notebooks, and here their code is checked to name no extra's module.
``make test-bare`` runs every notebook here (``FP8LAB_BARE_ALL=1``): 182 s of test
time alone on 2 cores, the first run compiling every numba function of the
installed copy (mutation's 63 s the longest).
"""

from __future__ import annotations

import importlib.metadata as md
import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from fp8lab.runtime.extras import EXTRAS

pytestmark = [
    pytest.mark.process,
    pytest.mark.notebook,
    pytest.mark.slow(reason="a notebook smoke run in a fresh environment: 18 to 153 s each"),
]

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
EXTRA_MODULES = sorted({m for e in EXTRAS.values() for m in e.modules})
# the notebooks with rows an extra makes (torch, triton, the libraries, the CUDA headers)
WITH_EXTRAS = ("accumulation_order", "ecosystem", "gate_g1", "triton_interpreter")
BARE = NOTEBOOKS if os.environ.get("FP8LAB_BARE_ALL") == "1" else list(WITH_EXTRAS)


def required(name: str, extras: frozenset[str], seen: set[tuple[str, frozenset[str]]]) -> None:
    """Add ``name`` (with ``extras`` of its own) and all it requires to ``seen``."""
    key = name.lower().replace("_", "-")
    if (key, extras) in seen:
        return
    seen.add((key, extras))
    for text in md.requires(name) or []:
        req = Requirement(text)
        markers = [{"extra": e} for e in ("", *sorted(extras))]
        if req.marker is None or any(req.marker.evaluate(m) for m in markers):
            required(req.name, frozenset(req.extras), seen)


def link_distributions(names: set[str], site: Path, prefix: Path) -> None:
    """Link each distribution's files from this environment into ``site`` and ``prefix``.

    Top-level packages go into ``site``; data files under ``share/`` (nbconvert's
    templates, ipykernel's kernel spec) into the same place under ``prefix``.
    """
    here = Path(sys.prefix).resolve()
    for dist in md.distributions():
        if dist.metadata["Name"].lower().replace("_", "-") not in names or dist.files is None:
            continue
        base = Path(str(dist.locate_file("")))
        for top in {f.parts[0] for f in dist.files if f.parts[0] not in ("..", "__pycache__")}:
            if not (site / top).exists():
                (site / top).symlink_to(base / top)
        for f in dist.files:
            data = (base / f).resolve()
            if f.parts[0] == ".." and data.is_relative_to(here / "share"):
                target = prefix / data.relative_to(here)
                target.parent.mkdir(parents=True, exist_ok=True)
                if not target.exists():
                    target.symlink_to(data)


@pytest.fixture(scope="session")
def bare_python(installed: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    venv = tmp_path_factory.mktemp("bare") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)})
    site = Path(purelib)
    seen: set[tuple[str, frozenset[str]]] = set()
    required("fp8lab", frozenset(), seen)
    link_distributions({name for name, _ in seen} - {"fp8lab"}, site, venv)
    (site / "fp8lab-wheel.pth").write_text(f"{installed}\n")
    (venv / "home").mkdir()
    probe = (
        "import importlib.util as u, json, sys, pathlib; "
        f"print(json.dumps([[m for m in {EXTRA_MODULES!r} if u.find_spec(m)], "
        "[p for p in sys.path if (pathlib.Path(p or '.') / 'nvidia').is_dir()]]))"
    )
    done = subprocess.run([python, "-c", probe], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == [[], []], done.stdout  # no extra can be found there
    return python


def test_a_notebook_not_run_here_names_no_extra() -> None:
    """Every notebook left to make test-bare: its code names no module of an extra."""
    assert set(WITH_EXTRAS) <= set(NOTEBOOKS)
    for name in sorted(set(NOTEBOOKS) - set(WITH_EXTRAS)):
        cells = json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text())["cells"]
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        named = {m for m in EXTRA_MODULES if f"import {m}" in code or f"from {m}" in code}
        assert not named, f"{name} names {named}: run it without extras in make test"


@pytest.mark.parametrize("notebook", BARE)
def test_a_notebook_smoke_run_completes_without_extras(
    bare_python: Path, notebook: str, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "FP8LAB_"))}
    env["HOME"] = str(bare_python.parents[1] / "home")  # no cached cuda-host build, no user site
    done = subprocess.run(
        [bare_python, "-m", "fp8lab", "evidence", notebook, "-p", "smoke=true"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=1200,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    (run,) = (tmp_path / "results" / notebook).iterdir()
    assert json.loads((run / "manifest.json").read_text())["status"] == "complete"
