"""benchmarks/claims_speed.py runs (its --smoke mode: the smoke profile, no book): the timing
script of issue #30's targets stays runnable; its numbers are measured by hand, never here."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_claims_speed_script_runs_and_checks_its_ledgers(tmp_path):
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "claims_speed.py"), "--smoke"], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.splitlines()
    assert "profile smoke" in lines[0] and "cold and warm ledgers identical: True" in lines[0]
    assert lines[1].startswith("reference workload")
    assert [ln.split()[0] + " " + ln.split()[1] for ln in lines[3:]] == ["claims cold", "claims warm"]


def test_the_script_refuses_a_repeat_below_one():
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "claims_speed.py"), "--repeat", "0"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "--repeat must be a whole number >= 1; got 0" in out.stderr
