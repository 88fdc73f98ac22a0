# SPDX-License-Identifier: Apache-2.0
"""The type information a user's checker reads: the extension's stub
(_blobtable.pyi) matches the built module (mypy's stubtest), the package
passes mypy --strict, and so does the complete program of docs/python.md."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import blobtable

PACKAGE_PARENT = Path(blobtable.__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
DOC = HERE.parents[1] / "docs" / "python.md"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=PACKAGE_PARENT, text=True,
                          capture_output=True, env={"MYPYPATH": str(PACKAGE_PARENT),
                                                    "PYTHONPATH": str(PACKAGE_PARENT),
                                                    "MYPY_CACHE_DIR": "/dev/null"})


def test_the_stub_matches_the_extension() -> None:
    r = run("mypy.stubtest", "--allowlist", str(HERE / "stubtest_allowlist.txt"),
            "blobtable._blobtable")
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_package_and_the_documented_program_type_check(tmp_path: Path) -> None:
    assert (PACKAGE_PARENT / "blobtable" / "py.typed").exists()
    program = re.search(r"```python docs/python.md#a-complete-program\n(.*?)```",
                        DOC.read_text(), re.S)
    assert program is not None, "docs/python.md has no complete program"
    (tmp_path / "program.py").write_text(program.group(1))
    r = run("mypy", "--strict", str(PACKAGE_PARENT / "blobtable"), str(tmp_path / "program.py"))
    assert r.returncode == 0, r.stdout + r.stderr
