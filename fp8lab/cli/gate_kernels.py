"""A user's kernel under the gates: in a process of its own, one per run, started early.

:func:`run_foreign` runs a gate on ``--kernel`` through
:class:`fp8lab.kernels.sources.isolated.KernelHost`: the gate (populations,
references, comparisons, the verdict) runs in this process, the kernel in the
child. A kernel whose process ended before a case ran gives a FAIL that examined
nothing; one that ended mid-run FAILs with the reason first; a change it left in
the floating-point environment is named in the record (``fp_env_changed``) and,
with ``--strict-env``, FAILs. What the kernel declares of its NaN policy is
recorded beside the policy it is held to, never used to pick it.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
from typing import TYPE_CHECKING, Any

from fp8lab.cli.common import CliError
from fp8lab.specs.gates import GATES, Gate, load

if TYPE_CHECKING:
    from fp8lab.gates import GateResult
    from fp8lab.specs.gate_options import GateRun

__all__ = ["prestart", "run_foreign"]


def _host(args: argparse.Namespace, kind: str, scheme: str | None) -> Any:
    from fp8lab.kernels.sources.isolated import KernelHost

    return KernelHost(
        kind,
        args.kernel,
        scheme=scheme,
        timeout=args.kernel_timeout,
        arrays=getattr(args, "arrays", None),
        device=getattr(args, "device", None),
    )


def prestart(args: argparse.Namespace, stack: contextlib.ExitStack) -> dict[Any, Any]:
    """Start the kernel's process before the gates load, so the two imports overlap."""
    first = GATES.get(args.gate.split(",")[0].strip())
    if not args.kernel or args.outputs or first is None:
        return {}
    host = stack.enter_context(_host(args, first.kind, args.scheme))
    return {(first.kind, args.scheme): host}


def _fault_result(gate: str, kernel: str, reason: str, record: dict[str, Any]) -> GateResult:
    """The FAIL of a gate whose kernel ended before it ran a case: it examined nothing."""
    from fp8lab.gates import GateResult, GateStatus

    return GateResult(gate, kernel, GateStatus.FAIL, reason, 0, 0, 0, 0, 0, 0, **record)


def _declared(options: dict[str, Any], said: Any) -> dict[str, Any]:
    """``options`` with what the kernel declared of its NaN policy noted beside the policy held."""
    held = options.get("nan_policy")
    if held is None:
        return options
    return {**options, "nan_policy": dataclasses.replace(held, declared_by_kernel=said)}


def run_foreign(gate: Gate, args: argparse.Namespace, runs: list[GateRun]) -> list[Any]:
    """``gate`` on the user's kernel, run in a process of its own, once per run.

    The gates (populations, references, comparisons, verdicts) run here; the
    kernel's process only calls the kernel (:mod:`fp8lab.kernels.sources.isolated`).
    """
    from fp8lab.gates import GateStatus
    from fp8lab.kernels.sources.loaders import KernelLoadError

    runner = load(gate.runner)
    results = []
    for scheme in dict.fromkeys(r.options.get("scheme") for r in runs):  # a library's layout
        host = getattr(args, "hosts", {}).pop((gate.kind, scheme), None)
        host = host or _host(args, gate.kind, scheme)
        batch = []
        with host:
            try:
                kernel = host.kernel()
            except KernelLoadError as exc:
                raise CliError(str(exc)) from None
            said = host.declared.get("nan_policy")
            for run in (r for r in runs if r.options.get("scheme") == scheme):
                if host.dead and host.calls == 0:
                    batch.append(_fault_result(gate.name, args.kernel, host.dead, run.record))
                    continue
                result = runner(kernel, **_declared(run.options, said))
                if host.dead:
                    reason = f"{host.dead}; {result.reason}" if result.reason else host.dead
                    result = dataclasses.replace(result, status=GateStatus.FAIL, reason=reason)
                batch.append(result)
            changed = "; ".join(host.env_changes)
        seen = {"isolation": host.isolation, "fp_env_read": host.fp_env_read}
        results += [_env_finding(r, changed, args.strict_env, seen) for r in batch]
    return results


def _env_finding(result: Any, changed: str, strict: bool, seen: dict[str, str]) -> Any:
    """``result`` with its isolation and the environment change named; strict: a FAIL."""
    from fp8lab.gates import GateStatus

    result = dataclasses.replace(result, **seen)
    if not changed:
        return result
    result = dataclasses.replace(result, fp_env_changed=changed)
    if not strict:
        return result
    reason = "; ".join(r for r in (result.reason, f"--strict-env: {changed}") if r)
    return dataclasses.replace(result, status=GateStatus.FAIL, reason=reason)
