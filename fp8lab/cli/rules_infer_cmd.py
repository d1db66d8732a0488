"""``fp8lab rules infer``: the scale rule declarations that reproduce a black-box GQ kernel.

The kernel runs in a process of its own under the watchdog (as under
``fp8lab gates``), once per GQ call of ``--scheme``; the search
(:mod:`fp8lab.gates.rule_inference`) runs here on what it returned. What the
kernel left changed in the floating-point environment is named
(``fp_env_changed``), and with ``--strict-env`` ends the run with exit 1.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from fp8lab.cli.common import CliError, write_json_output
from fp8lab.cli.isolation_args import add_isolation_arguments
from fp8lab.cli.names import KERNEL_ERROR, KERNEL_ERROR_EXIT
from fp8lab.runtime.exit_codes import EXIT_CODES

if TYPE_CHECKING:
    from fp8lab.gates.rule_inference import Inference

__all__ = ["add_infer_arguments", "run_infer"]


def add_infer_arguments(p: argparse.ArgumentParser) -> None:
    """``infer``'s flags: the kernel, how it is run, and where the result goes."""
    p.add_argument(
        "--kernel",
        "--kernels",
        dest="kernel",
        metavar="MODULE:FUNC",
        help="infer: your GQ kernel, FUNC(x) -> (codes, scales), for nvfp4 FUNC(x, "
        "global_scale) (docs/gates/gq.md); it runs in a process of its own",
    )
    p.add_argument(
        "--arrays",
        choices=("numpy", "torch", "triton"),
        default=None,
        help="infer: what your kernel takes and returns (as for fp8lab gates; default: the "
        "kernel's own arrays attribute, else numpy)",
    )
    p.add_argument(
        "--device",
        choices=("cpu", "cuda"),
        default="cpu",
        help="infer: with --arrays torch or triton, the device the tensors are on",
    )
    add_isolation_arguments(p)
    p.add_argument(
        "--write-rule",
        metavar="PATH",
        help="infer: write the inferred declaration as a rule file (named inferred-SCHEME) "
        "that fp8lab gates --gate GQ --rule-file reads",
    )
    p.add_argument(
        "--json",
        "--out",
        dest="json",
        metavar="PATH",
        help="infer: write the record here ('-' for stdout)",
    )


def run_infer(args: argparse.Namespace) -> int:
    """Call the kernel on GQ's population, search the declarations, print and write the result."""
    from fp8lab.gates.gq import gq_calls
    from fp8lab.gates.rule_candidates import rule_candidates
    from fp8lab.gates.rule_inference import infer_rule, record_outputs
    from fp8lab.kernels.sources.isolated import KernelHost, KernelLoadError
    from fp8lab.runtime.guard import KernelFaultError

    if args.name is not None or args.kernel is None or args.scheme is None:
        raise CliError("rules infer takes --scheme S and --kernel MODULE:FUNC, and no NAME")
    try:
        rule_candidates(args.scheme)
    except ValueError as exc:
        raise CliError(f"--scheme {args.scheme}: {exc}") from None
    for path in (args.write_rule, args.json):
        if path not in (None, "-") and Path(path).exists():
            raise CliError(f"{path} exists; fp8lab never overwrites a file")
    calls = gq_calls(args.scheme, _any_rule(args.scheme))
    host = KernelHost(
        "scheme",
        args.kernel,
        scheme=args.scheme,
        timeout=args.kernel_timeout,
        arrays=args.arrays,
        device=args.device,
    )
    try:
        with host:
            try:
                kernel = host.kernel()
            except KernelLoadError as exc:
                raise CliError(str(exc)) from None
            outputs = record_outputs(kernel, calls)
            found = infer_rule(args.scheme, args.kernel, calls, outputs)
        changed = "; ".join(host.env_changes)
    except KernelFaultError as exc:
        print(f"fp8lab rules infer: {KERNEL_ERROR}: {exc.reason}", file=sys.stderr)
        return KERNEL_ERROR_EXIT
    print(_summary(found))
    if changed:
        strict = " (a FAIL under --strict-env)" if args.strict_env else ""
        print(f"fp_env_changed: {changed}{strict}")
    if args.write_rule and found.chosen is not None:
        _write_rule(Path(args.write_rule), found)
    write_json_output(
        args.json, {**found.to_dict(), "fp_env_changed": changed, "strict_env": args.strict_env}
    )
    if changed and args.strict_env:
        return EXIT_CODES["fail"]
    return EXIT_CODES["pass"] if found.status == "reproduced" else EXIT_CODES["fail"]


def _any_rule(scheme: str) -> str:
    """A named rule of ``scheme``: GQ's calls depend on the scheme alone."""
    from fp8lab.gates.gq import GQ_RULES

    return GQ_RULES[scheme][0]


def _summary(found: Inference) -> str:
    """The lines ``rules infer`` prints."""
    lines = [
        f"{found.kernel} on {found.scheme}: {found.status}; {found.calls_examined} calls, "
        f"{found.candidates_examined} candidate declarations, {len(found.matching)} "
        "reproduce every call"
    ]
    what = "inferred" if found.status == "reproduced" else "nearest candidate"
    named, n = found.nearest_named, len(found.differing)
    changed = f"{n} axis changed" if n == 1 else f"{n} axes changed"
    own = f"{named}'s own declaration" if not n else f"{named} with {changed}"
    lines.append(f"{what}: {own}" + (":" if n else ""))
    lines += [f"  {k}: {named} -> {got}" for k, (named, got) in found.differing.items()]
    if len(found.matching) > 1:
        values = found.to_dict()["ambiguous_axes"]
        lines.append(
            f"the population cannot tell {len(found.matching)} declarations apart (reported: "
            f"the one closest to {found.nearest_named}); they differ on:"
        )
        lines += [f"  {k}: {', '.join(v)}" for k, v in values.items()]
    check = found.check
    if check is not None and found.status != "reproduced":
        lines.append(
            f"mismatches (exact reference): {check.mismatches + check.nan_code_mismatches} "
            f"words in {check.assertions_failed} of {check.assertions} calls"
        )
        lines += [f"  {cls}: {n}" for cls, n in check.mismatches_by_class.items() if n]
        lines += [
            f"  {o.case} {o.where()}: got {o.got} want {o.want}" for o in check.first_offenders[:4]
        ]
    return "\n".join(lines)


def _write_rule(path: Path, found: Inference) -> None:
    """The chosen declaration as a rule file, its source naming where it came from."""
    from dataclasses import replace

    from fp8lab.runtime.atomic import write_atomic
    from fp8lab.specs.nvfp4_rule_file import nvfp4_rule_text
    from fp8lab.specs.nvfp4_rules import Nvfp4ScaleRule
    from fp8lab.specs.scale_rules import rule_text

    assert found.chosen is not None
    source = (
        f"inferred by fp8lab rules infer from {found.kernel} on GQ's {found.scheme} "
        f"population ({found.status}; nearest named rule {found.nearest_named})"
    )
    rule = replace(found.chosen, source=source)
    text = nvfp4_rule_text(rule) if isinstance(rule, Nvfp4ScaleRule) else rule_text(rule)
    try:
        write_atomic(path, text.encode())
    except OSError as exc:
        raise CliError(f"cannot write --write-rule {path}: {exc.strerror or exc}") from None
