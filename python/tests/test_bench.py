# SPDX-License-Identifier: Apache-2.0
"""The Python benchmark (python/bench/bench.py, docs/performance.md#python)
runs: a quick round, its table printed (figures are not checked here)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import blobtable

BENCH = Path(__file__).resolve().parents[1] / "bench" / "bench.py"


def test_the_benchmark_runs(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(Path(blobtable.__file__).resolve().parents[1]))
    r = subprocess.run([sys.executable, str(BENCH), "--quick", "--rounds", "1", str(tmp_path)],
                       text=True, capture_output=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert [line.split()[0] for line in lines[1:]] == ["get", "upsert", "query"], r.stdout
