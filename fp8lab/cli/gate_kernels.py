"""A user's kernel under the gates: in a process of its own, one per run, started early.

:func:`run_foreign` runs a gate on ``--kernel`` through
:class:`fp8lab.kernels.sources.isolated.KernelHost`: the gate (populations,
references, comparisons, the verdict) runs in this process, the kernel in the
child. A kernel whose process ended before a case ran gives a FAIL that examined
nothing; one that ended mid-run FAILs with the reason first; a change it left in
the floating-point environment is named in the record (``fp_env_changed``) and,
with ``--strict-env``, FAILs.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
from typing import TYPE_CHECKING, Any

from fp8lab.cli.common import CliError
from fp8lab.cli.kernel_args import gate_kernel_kind

if TYPE_CHECKING:
    from fp8lab.gates import GateResult

__all__ = ["prestart", "run_foreign"]


def prestart(args: argparse.Namespace, stack: contextlib.ExitStack) -> dict[Any, Any]:
    """Start the kernel's process before the gates load, so the two imports overlap."""
    from fp8lab.cli.names import GATE_NAMES

    first = args.gate.split(",")[0].strip()
    if not args.kernel or args.outputs or first not in GATE_NAMES or args.kernel_timeout <= 0:
        return {}
    from fp8lab.kernels.sources.isolated import KernelHost

    kind = gate_kernel_kind(first)
    host = KernelHost(
        kind,
        args.kernel,
        nan_policy=args.nan_policy,
        scheme=args.scheme,
        timeout=args.kernel_timeout,
        arrays=getattr(args, "arrays", None),
        device=getattr(args, "device", None),
    )
    stack.enter_context(host)
    return {(kind, args.scheme): host}


def _fault_result(gate: str, kernel: str, reason: str) -> GateResult:
    """The FAIL of a gate whose kernel ended before it ran a case: it examined nothing."""
    from fp8lab.gates import GateResult, GateStatus

    return GateResult(gate, kernel, GateStatus.FAIL, reason, 0, 0, 0, 0, 0, 0)


def run_foreign(name: str, args: argparse.Namespace, options: list[dict[str, Any]]) -> list[Any]:
    """``GATES[name]`` on the user's kernel, run in a process of its own, once per options.

    The gates (populations, references, comparisons, verdicts) run here; the
    kernel's process only calls the kernel (:mod:`fp8lab.kernels.sources.isolated`).
    """
    from fp8lab.gates import GATES, GateStatus
    from fp8lab.kernels.sources.isolated import KernelHost, KernelLoadError

    if not args.kernel_timeout > 0:
        raise CliError(f"--kernel-timeout must be positive, got {args.kernel_timeout}")
    results = []
    for scheme in dict.fromkeys(o.get("scheme") for o in options):  # a library's layout
        kind = gate_kernel_kind(name)
        host = getattr(args, "hosts", {}).pop((kind, scheme), None) or KernelHost(
            kind,
            args.kernel,
            nan_policy=args.nan_policy,
            scheme=scheme,
            timeout=args.kernel_timeout,
            arrays=getattr(args, "arrays", None),
            device=getattr(args, "device", None),
        )
        batch = []
        with host:
            try:
                kernel = host.kernel()
            except KernelLoadError as exc:
                raise CliError(str(exc)) from None
            for o in (o for o in options if o.get("scheme") == scheme):
                if host.dead and host.calls == 0:
                    batch.append(_fault_result(name, args.kernel, host.dead))
                    continue
                held = {"nan_policy": kernel.nan_policy} if name == "G1" else {}
                result = GATES[name](kernel, **o, **held)
                if host.dead:
                    reason = f"{host.dead}; {result.reason}" if result.reason else host.dead
                    result = dataclasses.replace(result, status=GateStatus.FAIL, reason=reason)
                batch.append(result)
            changed = "; ".join(host.env_changes)
        results += [_env_finding(r, changed, args.strict_env) for r in batch]
    return results


def _env_finding(result: Any, changed: str, strict: bool) -> Any:
    """``result`` with the environment change named; with ``--strict-env``, a FAIL."""
    from fp8lab.gates import GateStatus

    if not changed:
        return result
    result = dataclasses.replace(result, fp_env_changed=changed)
    if not strict:
        return result
    reason = "; ".join(r for r in (result.reason, f"--strict-env: {changed}") if r)
    return dataclasses.replace(result, status=GateStatus.FAIL, reason=reason)
