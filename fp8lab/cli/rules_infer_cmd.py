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
from typing import TYPE_CHECKING, Any

from fp8lab.cli.common import CliError
from fp8lab.cli.isolation_args import add_isolation_arguments
from fp8lab.cli.names import KERNEL_ERROR, KERNEL_ERROR_EXIT
from fp8lab.cli.record_paths import write_json_output
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
        "global_scale) (docs/gates/gq.md); with --scheme static your G1 kernel, "
        "FUNC(x, scale) -> codes (docs/gates/g1.md); it runs in a process of its own",
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
        "that fp8lab gates --gate GQ --rule-file reads (static: --gate G1)",
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
    from fp8lab.gates.rule_candidates import STATIC_SCHEME, named_rules
    from fp8lab.kernels.sources.isolated import KernelHost, KernelLoadError
    from fp8lab.runtime.guard import KernelFaultError

    if args.name is not None or args.kernel is None or args.scheme is None:
        raise CliError("rules infer takes --scheme S and --kernel MODULE:FUNC, and no NAME")
    try:
        named_rules(args.scheme)
    except ValueError as exc:
        raise CliError(f"--scheme {args.scheme}: {exc}") from None
    for path in (args.write_rule,):  # --json is reserved before the command starts
        if path not in (None, "-") and Path(path).exists():
            raise CliError(f"{path} exists; fp8lab never overwrites a file")
    static = args.scheme == STATIC_SCHEME
    host = KernelHost(
        "quant" if static else "scheme",
        args.kernel,
        scheme=None if static else args.scheme,
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
            found = _search(args.scheme, args.kernel, kernel)
        changed = "; ".join(host.env_changes)
        seen = {"fp_env_read": host.fp_env_read, "isolation": host.isolation}
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
        args.json,
        {**found.to_dict(), "fp_env_changed": changed, "strict_env": args.strict_env, **seen},
    )
    if changed and args.strict_env:
        return EXIT_CODES["fail"]
    return EXIT_CODES["pass"] if found.status == "reproduced" else EXIT_CODES["fail"]


def _search(scheme: str, name: str, kernel: Any) -> Inference:
    """The kernel called on the scheme's calls, and the declarations searched on its outputs."""
    if scheme == "static":
        from fp8lab.gates.static_inference import (
            infer_static_rule,
            record_static_outputs,
            static_calls,
        )

        calls = static_calls()
        codes, element = record_static_outputs(kernel, calls)
        return infer_static_rule(name, calls, codes, element)
    from fp8lab.gates.gq import GQ_RULES, gq_calls
    from fp8lab.gates.rule_inference import infer_rule, record_outputs

    calls = gq_calls(scheme, GQ_RULES[scheme][0])  # GQ's calls depend on the scheme alone
    return infer_rule(scheme, name, calls, record_outputs(kernel, calls, scheme))


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
    if found.scheme == "static" and found.chosen is not None:
        from fp8lab.gates.g1_explain import what_it_does

        doing = [
            what_it_does(a, getattr(found.chosen, a))
            for a in ("element", "apply", "arithmetic", "element_rounding", "saturate")
        ]
        lines.append(f"the kernel {', '.join(doing)}")
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
        held = ", ".join(found.held_fixed)
        lines.append(f"held fixed (never searched): {held}")
        if found.first_unexplained:
            lines.append(f"first call no candidate explains: {found.first_unexplained}")
    return "\n".join(lines)


def _write_rule(path: Path, found: Inference) -> None:
    """The chosen declaration as a rule file, its source naming where it came from."""
    from dataclasses import replace

    from fp8lab.runtime.atomic import write_atomic
    from fp8lab.specs.nvfp4_rule_file import nvfp4_rule_text
    from fp8lab.specs.nvfp4_rules import Nvfp4ScaleRule
    from fp8lab.specs.scale_rules import rule_text

    assert found.chosen is not None
    words = "G1's static words" if found.scheme == "static" else f"GQ's {found.scheme} population"
    source = (
        f"inferred by fp8lab rules infer from {found.kernel} on {words} "
        f"({found.status}; nearest named rule {found.nearest_named})"
    )
    rule = replace(found.chosen, source=source)
    text = nvfp4_rule_text(rule) if isinstance(rule, Nvfp4ScaleRule) else rule_text(rule)
    try:
        write_atomic(path, text.encode())
    except OSError as exc:
        raise CliError(f"cannot write --write-rule {path}: {exc.strerror or exc}") from None
