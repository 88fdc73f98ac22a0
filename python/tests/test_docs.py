# SPDX-License-Identifier: Apache-2.0
"""docs/python.md's programs run as they are written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import blobtable

DOC = Path(__file__).resolve().parents[2] / "docs" / "python.md"


def documented(anchor: str) -> str:
    block = re.search(r"```python docs/python.md#" + anchor + r"\n(.*?)```", DOC.read_text(), re.S)
    assert block is not None, f"docs/python.md has no {anchor} block"
    return block.group(1)


def run_program(source: str, tmp_path: Path, python: str = sys.executable) -> str:
    program = tmp_path / "program.py"
    program.write_text(source)
    env = {"PYTHONPATH": str(Path(blobtable.__file__).resolve().parents[1])}
    r = subprocess.run([python, str(program), str(tmp_path / "store")], text=True,
                       capture_output=True, env=env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


EXPECTED = """99.5 3 2026-11-30T09:30:00+00:00
already there: Conflict
big order: order-0001
north left: 7
"""


def test_the_complete_program_runs(tmp_path: Path) -> None:
    out = run_program(documented("a-complete-program"), tmp_path)
    assert out.startswith(EXPECTED), out
    assert re.fullmatch(r"lock held, token [1-9][0-9]*\n", out[len(EXPECTED):]), out


def test_the_transaction_block_runs(tmp_path: Path) -> None:
    with blobtable.open(tmp_path / "s") as store:
        accounts, log = store.table("accounts"), store.table("log")
        accounts.upsert(blobtable.Entity("acct", "a", n=100))
        namespace = {"store": store, "accounts": accounts, "log": log, "blobtable": blobtable}
        block = re.search(r"```python\n(with store\.transaction\(\).*?)```", DOC.read_text(),
                          re.S)
        assert block is not None
        exec(compile(block.group(1), "docs/python.md", "exec"), namespace)
        assert accounts.get("acct", "a")["n"] == 90
        assert log.get("log", "0001")["amount"] == 10
