"""``fp8lab bench --all`` at tiny sizes: every figure is there, with stable fields.

Nothing is timed against anything: the test checks fields, counts and that the
run refuses bad sizes, never a speed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fp8lab.bench.costs import _published, evidence_passes
from fp8lab.cli.main import main
from fp8lab.evidence.proofs import MX_PROOF_PLAN, PROOF_PLAN

TOP = {
    "schema",
    "stop",
    "sample",
    "n",
    "repeats",
    "seed",
    "format",
    "cpus",
    "brute",
    "encoders",
    "help",
    "evidence",
    "test",
    "host",
    "load_average_start",
    "load_average_end",
    "bench_seconds",
}
EVIDENCE = {
    "proof_pass",
    "plan_sample",
    "plan_seconds_per_2_32",
    "mx_plan_seconds_per_2_32",
    "plan_each_seconds_per_2_32",
    "recheck_cpu_seconds_per_2_32",
    "brute_cpu_seconds_per_2_32",
    "passes",
    "components",
    "modelled_seconds",
    "published",
    "published_seconds",
    "target_seconds",
    "modelled_over_target",
}
TEST = {
    "interpreter_seconds",
    "numeric_import_seconds",
    "target_seconds",
    "test_files",
    "files_by_cost",
    "files_with_slow_tests",
    "notebook_kernel_seconds",
    "cluster_start_seconds",
    "collect_seconds",
    "tests_collected",
    "startup_measured",
}


@pytest.mark.slow
def test_bench_all_at_tiny_sizes_writes_every_figure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "all.json"
    argv = ["bench", "--all", "--stop", "0x10000", "--sample", "0x400", "-n", "1024"]
    argv += [
        "--repeats",
        "1",
        "--workers",
        "1",
        "--no-startup",
        "--results",
        str(tmp_path),
        "--json",
        str(out),
    ]
    assert main(argv) == 0
    p = json.loads(out.read_text())
    assert set(p) == TOP and p["schema"] == "fp8lab-bench-all/1"
    assert p["stop"] == 0x10000 and p["sample"] == 0x400
    b = p["brute"]
    assert b["records_equal"] and b["stop"] == 0x10000 and b["target_seconds"] == 3.0
    assert b["fused_seconds_per_2_32"] == pytest.approx(b["fused_seconds"] * 2**16)
    names = [r["name"] for r in p["encoders"]]
    assert "ml_dtypes+clip" in names and "float32->uint8 cast (memory ceiling)" in names
    torch = next(r for r in p["encoders"] if r["name"].startswith("torch"))
    assert torch["absent"] == ("seconds" not in torch)
    for row in p["encoders"]:
        assert row["absent"] or {"vs_ml_dtypes_clip", "vs_copy_ceiling"} <= set(row)
    assert [h["command"] for h in p["help"]] == [
        "python -c pass (interpreter start)",
        "fp8lab --help",
        "fp8lab bench --help",
    ]
    assert p["help"][0]["vs_interpreter"] == 1.0
    ev = p["evidence"]
    assert set(ev) == EVIDENCE
    assert ev["proof_pass"]["examined"] == 0x10000
    assert [r["proof"] for r in ev["plan_sample"]] == [q.slug for q in PROOF_PLAN]
    assert all(r["examined"] == 0x400 for r in ev["plan_sample"])
    assert len(ev["components"]) == 5 and ev["published"] == []
    t = p["test"]
    assert set(t) == TEST and t["startup_measured"] is False
    assert t["notebook_kernel_seconds"] is None and t["test_files"] > 0
    printed = capsys.readouterr().out
    assert "brute force" in printed and "copy ceiling" in printed and "modelled" in printed


def test_the_pass_counts_come_from_their_sources() -> None:
    passes = evidence_passes()
    assert passes["prove_plan_proofs"] == len(PROOF_PLAN)
    assert passes["prove_mx_plan_proofs"] == len(MX_PROOF_PLAN)  # make evidence runs both
    # codec_atlas shows the fresh prove run's records (make evidence runs prove first);
    # divide_vs_reciprocal brute-forces its check scales; the mutation notebook
    # re-checks the justified mutants (notebooks/*.ipynb).
    assert passes["codec_atlas_plan_proofs"] == 0
    assert passes["divide_vs_reciprocal_brute_scales"] > 0
    assert passes["mutation_recheck_comparisons"] > 0


def _manifest(root: Path, kind: str, run: str, **fields: object) -> None:
    (root / kind / run).mkdir(parents=True)
    body = {"kind": kind, "run_id": run, "status": "complete", "params": {"smoke": False}}
    body |= {"started": "2026-12-03T10:00:00+00:00", "finished": f"2026-12-03T10:0{run}:00+00:00"}
    (root / kind / run / "manifest.json").write_text(json.dumps(body | fields))


def test_published_reads_the_newest_complete_default_run_of_each_kind(tmp_path: Path) -> None:
    _manifest(tmp_path, "codec_atlas", "1", seconds=10.0)
    _manifest(tmp_path, "codec_atlas", "2", seconds=20.0)
    _manifest(tmp_path, "codec_atlas", "3", seconds=1.0, params={"smoke": True})
    _manifest(tmp_path, "codec_atlas", "4", seconds=2.0, status="failed")
    _manifest(tmp_path, "proofs", "5")  # no seconds: finished - started
    _manifest(tmp_path, "proofs-mx", "6", seconds=99.0)  # make evidence's MX plan
    rows = _published(tmp_path)
    assert [(r["kind"], r["run_id"], r["seconds"]) for r in rows] == [
        ("codec_atlas", "2", 20.0),
        ("proofs", "5", 300.0),
        ("proofs-mx", "6", 99.0),
    ]


@pytest.mark.parametrize(
    "argv",
    [
        ["bench", "--stop", "0x100"],
        ["bench", "--no-startup"],
        ["bench", "--workers", "1"],
        ["bench", "--all", "--brute"],
        ["bench", "--all", "--sample", "8"],
        ["bench", "--all", "--stop", "0"],
    ],
)
def test_bad_bench_all_input_is_one_line_and_exit_2(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        status = main(argv)
    except SystemExit as exc:  # argparse refusals
        status = exc.code if isinstance(exc.code, int) else 1
    assert status == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0]


def test_the_sample_draws_one_seeded_window_inside_each_stratum() -> None:
    from fp8lab.bench.costs import WINDOWS, _windows

    width, starts = _windows(1 << 24)
    stratum = (1 << 32) // WINDOWS
    assert width * WINDOWS == 1 << 24 and len(starts) == WINDOWS
    assert all(i * stratum <= lo and lo + width <= (i + 1) * stratum for i, lo in enumerate(starts))
    assert _windows(1 << 24) == (width, starts)  # seeded: the same windows every run
    assert sum(lo % stratum == 0 for lo in starts) <= 1  # not the strata's first patterns
