"""scripts/gpu-check without a GPU: G2 PENDING with its reason, the record written, exit 3."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "gpu-check"


def test_gpu_check_writes_a_pending_record_without_cupy(tmp_path: Path) -> None:
    blocker = (
        "import runpy, sys\n"
        "sys.modules['cupy'] = None\n"  # as on a machine without cupy, whatever is installed
        f"sys.argv = ['gpu-check', {str(tmp_path)!r}]\n"
        f"runpy.run_path({str(SCRIPT)!r}, run_name='__main__')\n"
    )
    done = subprocess.run([sys.executable, "-c", blocker], capture_output=True, text=True)
    assert done.returncode == 3, done.stderr
    record = json.loads((tmp_path / "gpu-check.json").read_text())
    assert record["schema"] == "fp8lab.gpu-check/1" and record["probe"]["missing"] == "cupy"
    assert record["g2"]["status"] == "PENDING" and record["g2"]["words"] == 0
    assert "missing cupy" in record["g2"]["reason"] and "g2_wall_s" in record["timing"]
