"""Every subcommand refuses bad input with one line and exit status 2, before any
work starts; ``--json -`` keeps stdout pure JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fp8lab.cli.main import main

pytestmark = pytest.mark.process


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        status = main(argv)
    except SystemExit as exc:  # argparse refusals
        status = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return status, out, err


def _bad_cases(tmp: Path) -> list[list[str]]:
    existing = tmp / "exists.json"
    existing.write_text("{}")
    a_file = tmp / "a_file"
    a_file.write_text("")
    sysjson = "/sys/kernel/fp8lab-out.json"  # unwritable even for root
    under_a_file = str(a_file / "out.json")
    exh = ["exhaustive", "numpy", "numpy", "--policy", "sat", "--stop", "0x100", "--quiet"]
    return [
        ["gates", "--json", str(existing)],
        ["gates", "--json", sysjson],
        ["gates", "--json", under_a_file],
        ["gates", "--json", str(tmp)],
        [*exh, "--workers", "0"],
        [*exh, "--workers", "500"],
        [*exh, "--workers", "-1"],
        [*exh, "--start", "-1"],
        [*exh, "--json", str(existing)],
        [*exh, "--scheduler", "localhost:8786"],
        [*exh, "--scheduler", "tcp://host:99999"],
        [*exh, "--dask-local", "0"],
        [*exh, "--dask-local", "2", "--scheduler", "tcp://127.0.0.1:8786"],
        [*exh, "--dask-local", "2", "--workers", "2"],
        ["detect", "--scales", "1", "--dask-local", "2"],  # enumerate runs no chunks
        ["detect", "--scales", "1", "--workers", "0"],
        ["detect", "--scales", "1", "--stop", "-1"],
        ["detect", "--scales", "1", "--json", sysjson],
        ["sweep", "--workers", "500"],
        ["sweep", "-n", "0"],
        ["sweep", "--dask-local", "-1"],
        ["sweep", "--lo", "-1"],
        ["sweep", "--json", str(existing)],
        ["mutate", "--threshold", "-1"],
        ["mutate", "--json", sysjson],
        ["prove", "--stop", "-1"],
        ["prove", "--stop", "0"],
        ["prove", "--scheduler", "8786"],
        ["prove", "--results", str(a_file)],
        ["prove", "--results", "/sys/kernel"],
        ["evidence", "tie_sweep", "-p", "seed=[x", "--results", str(tmp)],
        [
            "evidence",
            "tie_sweep",
            "-p",
            "x=!!python/object/apply:os.getpid []",
            "--results",
            str(tmp),
        ],
        ["evidence", "tie_sweep", "--results", str(a_file)],
        ["evidence", "tie_sweep", "--results", "/sys/kernel"],
        ["evidence", "tie_sweep", "--timeout", "-1", "--results", str(tmp)],
        ["evidence", "tie_sweep", "--timeout", "nan", "--results", str(tmp)],
        ["bench", "--n", "-5"],
        ["bench", "--n", "0"],
        ["bench", "--repeats", "0"],
        ["bench", "--json", str(existing)],
        ["gemm-bench", "--k", "17"],
        ["gemm-bench", "--n", "8"],
        ["gemm-bench", "--m", "0"],
        ["gemm-bench", "--repeats", "0"],
        ["gemm-bench", "--json", sysjson],
        ["design", "--scales", "1", "--out", str(tmp / "d"), "--margin", "0"],
        ["design", "--scales", "1", "--out", str(tmp / "d"), "--budget", "-2"],
        *(
            [*cmd, "--kernel-timeout", bad]
            for bad in ("inf", "nan", "0", "-1", "abc")
            for cmd in (
                ["gates", "--gate", "G1", "--kernel", "fp8lab.kernels:quant_static"],
                ["order", "--kernel", "fp8lab.kernels:quant_static", "--as", "sum", "--k", "8"],
                exh,
                ["detect", "--scales", "1"],
                ["design", "--scales", "1", "--out", str(tmp / "d")],
            )
        ),
        ["gates", "--gate", "GQ", "--rule-file", str(a_file), "--rule", "x", "--kernel", "m:f"],
        ["gates", "--gate", "G1", "--kernel", "m:f", "--arrays", "jax"],
        ["gates", "--no-such-flag"],
        ["chains", "--diverge", "only-one-recipe"],
        ["rules", "show", "no-such-rule"],
        ["rules", "infer"],
        ["gates", "--gate", "GF", "--recipe", "no-such-recipe"],
        ["no-such-command"],
    ]


def test_every_subcommand_refuses_bad_input_with_one_line_and_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    failures = []
    for argv in _bad_cases(tmp_path):
        status, out, err = _run(argv, capsys)
        lines = err.strip().splitlines()
        if status != 2 or len(lines) != 1 or "Traceback" in err or out:
            failures.append(f"{argv}: status {status}, stderr {err!r}, stdout {out[:80]!r}")
    assert not failures, "\n".join(failures)


def test_bad_input_in_a_real_process_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    for argv in (["bench", "--n", "-5"], ["prove", "--stop", "-1", "--results", str(tmp_path)]):
        proc = subprocess.run(
            [sys.executable, "-m", "fp8lab", *argv], capture_output=True, text=True, check=False
        )
        assert proc.returncode == 2, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


def test_json_dash_keeps_stdout_pure_json_and_the_table_on_stderr(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, err = _run(["gates", "--json", "-"], capsys)
    assert status == 0
    rows = json.loads(out)  # nothing but JSON on stdout
    assert [r["status"] for r in rows] == ["PASS"] * len(rows) and rows
    assert "PASS" in err and "gate" in err.splitlines()[0]


def test_json_dash_in_a_real_process_for_bench(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "fp8lab", "bench", "--n", "4096", "--repeats", "1", "--json", "-"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["n"] == 4096
    assert "encoder" in proc.stderr


def test_existing_json_target_is_refused_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "out.json"
    target.write_text("keep me")
    status, out, err = _run(["gates", "--json", str(target)], capsys)
    assert status == 2 and out == ""  # no gate ran: no table
    assert "exists" in err and target.read_text() == "keep me"
