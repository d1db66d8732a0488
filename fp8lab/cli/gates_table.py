"""What ``fp8lab gates`` shows and files: the table with its notes, and JUnit XML."""

from __future__ import annotations

from typing import TYPE_CHECKING

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
    from fp8lab.specs.static_rules import DEFAULT_STATIC_RULE

    for r in results:
        if r.reason:
            lines.append(f"{r.gate} {r.kernel}: {r.status.value}: {r.reason}")
        said = r.nan_policy_declared_by_kernel
        if said is not None and said != r.nan_policy and "declares NaN policy" not in r.reason:
            lines.append(
                f"{r.gate} {r.kernel}: the kernel declares NaN policy {said!r}; it was held to "
                f"{r.nan_policy} ({r.nan_policy_source})"
            )
        if r.scheme:
            lines.append(f"{r.gate} {r.kernel}: scheme {r.scheme}, rule {r.rule}")
        elif r.rule not in (None, DEFAULT_STATIC_RULE):  # a static rule other than the seed's
            lines.append(f"{r.gate} {r.kernel}: rule {r.rule}")
        if r.fp_env_changed:
            lines.append(f"{r.gate} {r.kernel}: fp_env_changed: {r.fp_env_changed}")
        if r.measured.get("recipe"):
            d = r.measured
            lines.append(
                f"{r.gate} {r.kernel}: recipe {d['recipe']}: {d['standalone_bytes_differ']} bytes "
                f"differ from the standalone sequence {d['standalone_recipe']}; prefix steps "
                f"checked: {', '.join(d['prefix_steps_checked']) or 'none (no trace)'}"
            )
        elif set(r.measured) - {"explained_by"}:  # G1's explanation is in its reason
            counts = ", ".join(f"{k}={v}" for k, v in r.measured.items() if k != "explained_by")
            lines.append(f"{r.gate} {r.kernel}: measured: {counts}")
        for o in r.first_offenders[:4]:
            lines.append(f"  {o.case} {o.word_class} {o.where()} got {o.got} want {o.want}")
    return "\n".join(lines)


def write_junit(path: str, results: list[GateResult]) -> None:
    """``--junit-xml``: written whole or not at all, over its reservation only.

    Raises:
        CliError: if the path exists or cannot be written.
    """
    from fp8lab.cli.record_paths import write_record
    from fp8lab.gates.junit import junit_xml

    write_record(path, junit_xml(results), "--junit-xml")
