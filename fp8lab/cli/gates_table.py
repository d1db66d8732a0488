"""What ``fp8lab gates`` shows and files: the table with its notes, and JUnit XML."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from fp8lab.cli.common import CliError

if TYPE_CHECKING:
    from fp8lab.gates import GateResult

__all__ = ["format_table", "write_junit"]


def format_table(results: list[GateResult]) -> str:
    """A plain-text table, one row per gate and kernel."""
    head = (
        "gate",
        "kernel",
        "status",
        "cases",
        "assertions",
        "failed",
        "words",
        "mismatches",
        "nan-code",
        "nan-policy",
    )
    rows = [head] + [
        (
            r.gate,
            r.kernel,
            r.status.value,
            str(r.cases),
            str(r.assertions),
            str(r.assertions_failed),
            str(r.words),
            str(r.mismatches),
            str(r.nan_code_mismatches),
            r.nan_policy or "-",
        )
        for r in results
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False)) for row in rows]
    for r in results:
        if r.reason:
            lines.append(f"{r.gate} {r.kernel}: {r.status.value}: {r.reason}")
        if r.scheme:
            lines.append(f"{r.gate} {r.kernel}: scheme {r.scheme}, rule {r.rule}")
        if r.fp_env_changed:
            lines.append(f"{r.gate} {r.kernel}: fp_env_changed: {r.fp_env_changed}")
        if r.measured.get("recipe"):
            d = r.measured
            lines.append(
                f"{r.gate} {r.kernel}: recipe {d['recipe']}: {d['standalone_bytes_differ']} bytes "
                f"differ from the standalone sequence {d['standalone_recipe']}; prefix steps "
                f"checked: {', '.join(d['prefix_steps_checked']) or 'none (no trace)'}"
            )
        elif r.measured:
            counts = ", ".join(f"{k}={v}" for k, v in r.measured.items())
            lines.append(f"{r.gate} {r.kernel}: measured: {counts}")
        for o in r.first_offenders[:4]:
            lines.append(f"  {o.case} {o.word_class} {o.where()} got {o.got} want {o.want}")
    return "\n".join(lines)


def write_junit(path: str, results: list[GateResult]) -> None:
    """``--junit-xml``: written whole or not at all, never over an existing file.

    Raises:
        CliError: if the path exists or cannot be written.
    """
    from fp8lab.gates.junit import junit_xml
    from fp8lab.runtime.atomic import write_atomic

    try:
        write_atomic(Path(path), junit_xml(results))
    except FileExistsError as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        raise CliError(f"cannot write --junit-xml {path}: {exc.strerror or exc}") from None
