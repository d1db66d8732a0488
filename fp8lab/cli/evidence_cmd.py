"""``fp8lab evidence``: run notebooks into run directories, or check published runs."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import yaml

from fp8lab.cli.common import CliError
from fp8lab.evidence.notebooks import (
    DEFAULT_TIMEOUT,
    NOTEBOOKS_DIR,
    NotebookRunError,
    discover,
    run_notebook,
    validate_parameters,
)
from fp8lab.evidence.staging import recover_orphans
from fp8lab.evidence.staleness import check_published
from fp8lab.gates import EXIT_CODES

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register the subcommand."""
    p = sub.add_parser(
        "evidence",
        help="run notebooks with papermill and file the evidence",
        description="Exit status: 0 every run complete (or, with --check, every "
        "published run fresh), 1 a run failed or is stale, 2 usage error.",
    )
    p.add_argument("names", nargs="*", help="notebooks to run (default: all)")
    p.add_argument(
        "-p",
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a parameter (YAML value), for every selected notebook",
    )
    p.add_argument("--params", help="YAML file: {param: value} or {notebook: {param: value}}")
    p.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        help=f"outer limit per notebook in seconds (default {DEFAULT_TIMEOUT:g})",
    )
    p.add_argument("--results", default="results", help="results root (default: results)")
    p.add_argument("--notebooks", default=str(NOTEBOOKS_DIR), help="notebook folder")
    p.add_argument(
        "--check",
        action="store_true",
        help="only report whether published runs are stale against the source",
    )
    p.set_defaults(run=run)


def _overrides(args: argparse.Namespace, names: list[str]) -> dict[str, dict[str, Any]]:
    common: dict[str, Any] = {}
    per_notebook: dict[str, dict[str, Any]] = {name: {} for name in names}
    if args.params:
        try:
            loaded = yaml.safe_load(Path(args.params).read_text()) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise CliError(f"cannot read --params {args.params}: {exc}") from None
        if not isinstance(loaded, dict):
            raise CliError(f"--params {args.params} must hold a mapping")
        for key, value in loaded.items():
            if key in per_notebook and isinstance(value, dict):
                per_notebook[key].update(value)
            else:
                common[key] = value
    for item in args.param:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise CliError(f"-p wants KEY=VALUE, got {item!r}")
        common[key] = yaml.safe_load(text)
    return {name: {**common, **per_notebook[name]} for name in names}


def _check(results: Path, notebooks: dict[str, Path]) -> int:
    rows = check_published(results, notebooks)
    for row in rows:
        print(f"{row.notebook}: {row.status} {row.run} {row.reason}".rstrip())
    fresh = all(r.status == "fresh" for r in rows)
    return EXIT_CODES["pass"] if fresh and rows else EXIT_CODES["fail"]


def run(args: argparse.Namespace) -> int:
    """Run the selected notebooks in order; stop at the first failure."""
    available = discover(Path(args.notebooks))
    names = args.names or list(available)
    unknown = [n for n in names if n not in available]
    if unknown or not names:
        raise CliError(f"unknown or no notebooks {unknown}; available: {sorted(available)}")
    results = Path(args.results)
    if args.check:
        return _check(results, {n: available[n] for n in names})
    overrides = _overrides(args, names)
    for name in names:
        try:
            validate_parameters(available[name], overrides[name])
        except ValueError as exc:
            raise CliError(str(exc)) from None
    for filed in recover_orphans(results):
        print(f"orphaned run (its runner was killed) filed as failed: {filed}", file=sys.stderr)
    for i, name in enumerate(names, 1):
        print(f"[{i}/{len(names)}] {name}: running", flush=True)

        def beat(seconds: float, name: str = name, i: int = i) -> None:
            print(f"[{i}/{len(names)}] {name}: still running, {seconds:.0f} s", flush=True)

        try:
            done = run_notebook(
                available[name], results, overrides[name], timeout=args.timeout, heartbeat=beat
            )
        except NotebookRunError as exc:
            print(f"[{i}/{len(names)}] {name}: FAILED: {exc}", file=sys.stderr)
            print(f"index: {results / 'index.html'}")
            return EXIT_CODES["fail"]
        print(
            f"[{i}/{len(names)}] {name}: complete in {done.seconds:.1f} s -> "
            f"{done.directory / 'report.html'}",
            flush=True,
        )
    print(f"index: {results / 'index.html'}")
    return EXIT_CODES["pass"]
