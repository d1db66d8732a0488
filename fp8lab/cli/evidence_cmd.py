"""``fp8lab evidence``: run notebooks into run directories, or check published runs."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fp8lab.cli.argtypes import bounded_int_arg, check_writable_dir, seconds_arg
from fp8lab.cli.common import CliError
from fp8lab.cli.executor_args import add_executor_args, open_executor
from fp8lab.cli.names import DEFAULT_NOTEBOOK_TIMEOUT as DEFAULT_TIMEOUT
from fp8lab.cli.names import NOTEBOOKS_DIR
from fp8lab.runtime.bounded import BoundedInputError, load_yaml, read_file
from fp8lab.runtime.cluster import SCHEDULER_ENV
from fp8lab.runtime.exit_codes import EXIT_CODES

if TYPE_CHECKING:
    from fp8lab.evidence.execute import CheckedParameters, Stop

PARAMS_BYTES = 1 << 20  # a parameters file is a few lines
jobs_arg = bounded_int_arg(1, 64, "a number of notebooks side by side")
DEFAULT_JOBS = 2  # side by side: a notebook's pools keep the cores busy only part of its time

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register the subcommand."""
    p = sub.add_parser(
        "evidence",
        help="run notebooks with papermill and file the evidence",
        description="Runs every selected notebook, even after one fails; a failed run "
        "is named with its folder under the results root.",
    )
    p.add_argument(
        "names",
        nargs="*",
        help="notebooks to run (default: all); with --check also 'proofs' and "
        "'proofs-mx' (default: all notebooks and proofs, and proofs-mx once a run "
        "of it over all 2^32 patterns exists)",
    )
    p.add_argument(
        "-p",
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a parameter (YAML value, checked against the notebook's declared type), "
        "for every selected notebook; run_dir is refused (the runner sets it)",
    )
    p.add_argument(
        "--params",
        help="YAML file: {param: value} for every notebook and/or {notebook: {param: value}} "
        "sections, each used only when that notebook runs; -p wins over the file",
    )
    p.add_argument(
        "--timeout",
        type=seconds_arg,
        default=DEFAULT_TIMEOUT,
        help=f"outer limit per notebook in seconds (default {DEFAULT_TIMEOUT:g})",
    )
    p.add_argument(
        "--jobs",
        type=jobs_arg,
        default=DEFAULT_JOBS,
        help=f"notebooks run side by side (default {DEFAULT_JOBS}; 1: one after another, "
        "in the order named); side by side, the one whose last complete run here took "
        "longest starts first, and those whose metadata gives fp8lab.precedence take "
        "the cores from the others, which run at nice +10",
    )
    p.add_argument("--results", default="results", help="results root (default: results)")
    p.add_argument("--notebooks", default=str(NOTEBOOKS_DIR), help="notebook folder")
    p.add_argument(
        "--check",
        action="store_true",
        help="run nothing; say of each notebook and proofs kind whether it is fresh, "
        "failed (its newest attempt at the current inputs did not complete; the "
        "last complete one is named), stale, missing, non-default or corrupt; "
        "one line each: NAME: STATUS FOLDER REASON, FOLDER under the results root",
    )
    p.add_argument(
        "--adopt",
        action="store_true",
        help="run nothing; start the attempts log (results/attempts.log) of a results root "
        "whose runs were filed before it had one: one line per run, marked adopted; "
        "refused once the log exists",
    )
    add_executor_args(p)
    p.set_defaults(run=run)


def _overrides(
    args: argparse.Namespace, names: list[str], available: dict[str, Path]
) -> dict[str, dict[str, Any]]:
    """Each selected notebook's values: --params common keys, then its section, then -p.

    A top-level key of --params that names a notebook is that notebook's section,
    used when that notebook runs and ignored otherwise.
    """
    common: dict[str, Any] = {}
    per_notebook: dict[str, dict[str, Any]] = {name: {} for name in available}
    if args.params:
        path = Path(args.params)
        try:
            raw = read_file(path, f"--params {args.params}", PARAMS_BYTES)
            loaded = load_yaml(raw, f"--params {args.params}") or {}
        except OSError as exc:
            raise CliError(f"cannot read --params {args.params}: {exc.strerror}") from None
        except BoundedInputError as exc:
            raise CliError(str(exc)) from None
        if not isinstance(loaded, dict):
            raise CliError(f"--params {args.params} must hold a mapping")
        for key, value in loaded.items():
            if key in per_notebook:
                if not isinstance(value, dict):
                    raise CliError(f"--params {args.params}: section {key} must hold a mapping")
                per_notebook[key].update(value)
            else:
                common[key] = value
    given: dict[str, Any] = {}
    for item in args.param:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise CliError(f"-p wants KEY=VALUE, got {item!r}")
        try:
            given[key] = load_yaml(text, "value", max_bytes=PARAMS_BYTES)
        except BoundedInputError as exc:
            raise CliError(f"-p {item!r}: not a plain YAML value: {exc}") from None
    return {name: {**common, **per_notebook[name], **given} for name in names}


def _check(results: Path, notebooks: dict[str, Path], proofs: bool | list[str]) -> int:
    """Print one line per kind (and per corrupt run); pass only when every line is fresh."""
    from fp8lab.evidence.staleness import check_published

    rows = check_published(results, notebooks, proofs=proofs)
    for row in rows:
        print(f"{row.notebook}: {row.status} {row.run} {row.reason}".rstrip())
    fresh = all(r.status == "fresh" for r in rows)
    return EXIT_CODES["pass"] if fresh and rows else EXIT_CODES["fail"]


def _adopt(args: argparse.Namespace, results: Path) -> int:
    """``--adopt``: log the runs filed before the attempts log existed, as adopted."""
    from fp8lab.evidence.attempts import adopt_runs

    if args.check or args.names or args.param or args.params:
        raise CliError("--adopt runs nothing: leave out --check, names and parameters")
    try:
        count = adopt_runs(results)
    except FileExistsError as exc:
        raise CliError(str(exc)) from None
    print(f"attempts log started with {count} adopted runs: {results / 'attempts.log'}")
    return EXIT_CODES["pass"]


@contextmanager
def _notebook_executor(args: argparse.Namespace) -> Iterator[str]:
    """Open the cluster the flags ask for, once, and name it to the notebook kernels.

    The kernels inherit ``$FP8LAB_SCHEDULER``; their sweeps and proofs that
    would start a local pool run their chunks on that scheduler's workers
    (:func:`fp8lab.runtime.cluster.ambient_cluster`). Yields the executor's name.
    """
    with open_executor(args) as cluster:
        if cluster is None:
            yield "local processes"
            return
        before = os.environ.get(SCHEDULER_ENV)
        os.environ[SCHEDULER_ENV] = cluster.address
        try:
            yield f"{cluster.name} ({cluster.workers} workers)"
        finally:
            if before is None:
                os.environ.pop(SCHEDULER_ENV, None)
            else:
                os.environ[SCHEDULER_ENV] = before


def run(args: argparse.Namespace) -> int:
    """Run every selected notebook in order, even after a failure; report each."""
    # papermill and nbconvert load here, not to build the parser.
    from fp8lab.evidence.execute import discover, precedence, validate_parameters
    from fp8lab.evidence.staging import recover_orphans
    from fp8lab.evidence.staleness import PROOF_KINDS

    available = discover(Path(args.notebooks))
    checkable = [*available, *PROOF_KINDS] if args.check else list(available)
    names = args.names or checkable
    unknown = [n for n in names if n not in checkable]
    if unknown or not names:
        made_by_prove = set(PROOF_KINDS) & set(unknown)
        hint = " (proofs are made by fp8lab prove)" if made_by_prove else ""
        raise CliError(f"unknown or no notebooks {unknown}; available: {sorted(available)}{hint}")
    results = Path(args.results)
    if args.adopt:
        return _adopt(args, results)
    if args.check and (args.scheduler or args.dask_local):
        raise CliError("--check runs nothing: --scheduler and --dask-local have nothing to run")
    if args.check:
        chosen = {n: available[n] for n in names if n in available}
        named = [n for n in names if n in PROOF_KINDS]
        return _check(results, chosen, named if args.names else True)
    reason = check_writable_dir(args.results, "--results")
    if reason:
        raise CliError(reason)
    overrides = _overrides(args, names, available)
    checked, first = {}, set()
    for name in names:
        try:
            checked[name] = validate_parameters(available[name], overrides[name])
            if precedence(available[name]):
                first.add(name)
        except ValueError as exc:
            raise CliError(str(exc)) from None
    for filed in recover_orphans(results):  # once, before the first notebook runs
        print(f"orphaned run (its runner was killed) filed as failed: {filed}", file=sys.stderr)
    with _notebook_executor(args) as executor:
        print(f"sweeps and proofs run on {executor}", flush=True)
        try:
            failed = _run_all(args, checked, results, first)
        finally:
            from fp8lab.evidence.index import write_index

            write_index(results)  # once for the batch (each run is filed as it ends)
    print(f"{len(names) - len(failed)} of {len(names)} complete", end="")
    print(f"; failed: {', '.join(failed)}" if failed else "")
    print(f"index: {results / 'index.html'}")
    return EXIT_CODES["fail"] if failed else EXIT_CODES["pass"]


def _run_all(
    args: argparse.Namespace,
    checked: dict[str, CheckedParameters],
    results: Path,
    first: set[str],
) -> list[str]:
    """Run each notebook, ``--jobs`` at a time, even after a failure; the names that failed.

    Side by side, the notebooks whose last complete run here took longest start
    first, and where ``first`` names any (they take precedence:
    :func:`fp8lab.evidence.execute.precedence`) every other runs at ``nice``
    +YIELD_NICE; a signal sets the shared stop, each run going on ends its tree
    and is filed as interrupted, and the signal is raised here once all have ended.
    """
    from fp8lab.evidence.execute import YIELD_NICE, Stop
    from fp8lab.runtime.parallel import each_done
    from fp8lab.runtime.proctree import SignalInterrupt, signals_deferred

    names = list(checked)
    if min(args.jobs, len(names)) <= 1:  # in the order named
        return [
            n
            for i, n in enumerate(names, 1)
            if not _run_one(args, checked[n], results, i, len(names))
        ]
    names = _longest_first(names, results)
    nice = {n: YIELD_NICE if first and n not in first else 0 for n in names}
    stop = Stop()
    with ThreadPoolExecutor(args.jobs, thread_name_prefix="notebook") as pool:
        futures = {
            n: pool.submit(_run_one, args, checked[n], results, i, len(names), stop, nice[n])
            for i, n in enumerate(names, 1)
        }
        name_of = {f: n for n, f in futures.items()}
        ok: dict[str, bool] = {}
        try:
            for future in each_done(futures.values()):
                with signals_deferred():  # it is done: result() does not wait
                    ok[name_of[future]] = future.result()
        except SignalInterrupt as exc:
            stop.signum = exc.signum
            for f in futures.values():
                f.cancel()
            wait(futures.values())  # every run going on ends its tree and is filed
            raise
    return [n for n in names if not ok[n]]


def _run_one(
    args: argparse.Namespace,
    checked: CheckedParameters,
    results: Path,
    i: int,
    count: int,
    stop: Stop | None = None,
    nice: int = 0,
) -> bool:
    """Run one notebook (its processes at ``nice``) and say how it ended; whether it completed."""
    from fp8lab.evidence import execute as runner
    from fp8lab.evidence.execute import NotebookRunError

    name = checked.path.stem
    print(f"[{i}/{count}] {name}: running", flush=True)

    def beat(seconds: float) -> None:
        print(f"[{i}/{count}] {name}: still running, {seconds:.0f} s", flush=True)

    try:
        done = runner.run_checked(
            checked,
            results,
            timeout=args.timeout,
            heartbeat=beat,
            index=False,
            stop=stop,
            nice=nice,
        )
    except NotebookRunError as exc:
        where = f" ({exc.folder})" if exc.folder else ""
        print(f"[{i}/{count}] {name}: FAILED{where}: {exc}", file=sys.stderr, flush=True)
        return False
    print(
        f"[{i}/{count}] {name}: complete in {done.seconds:.1f} s -> "
        f"{done.directory / 'report.html'}",
        flush=True,
    )
    return True


def _longest_first(names: list[str], results: Path) -> list[str]:
    """``names``, those whose newest complete run under ``results`` took longest first.

    A notebook with no complete run comes first (its time is unknown); ties keep
    their order. Only the order of the runs changes, never what they run.
    """
    from fp8lab.evidence.manifest import scan_runs

    took: dict[str, tuple[str, float]] = {}
    for record in scan_runs(results):
        m = record.manifest
        if record.corrupt or m.get("status") != "complete" or m.get("kind") not in names:
            continue
        seconds = m.get("seconds")
        if isinstance(seconds, (int, float)) and m["run_id"] > took.get(m["kind"], ("", 0.0))[0]:
            took[m["kind"]] = (m["run_id"], float(seconds))
    return sorted(names, key=lambda n: -took[n][1] if n in took else -float("inf"))
