# SPDX-License-Identifier: Apache-2.0
"""The PEP 517 build backend of `pip install ./python` (docs/python.md#installing).

Standard library only (pip installs nothing for it): it configures the
checkout around this directory with CMake (a static library, Release,
BLOBTABLE_PYTHON=ON for the interpreter pip runs), builds the extension
target, and writes a wheel of the package (blobtable/*.py, its stubs and the
extension). Environment: BLOBTABLE_PIP_BUILD_DIR, the CMake build directory
to use and keep (default: a temporary one); BLOBTABLE_PIP_CMAKE_ARGS, more
arguments for the configure step; BLOBTABLE_PIP_JOBS, build jobs (default:
the processors)."""

from __future__ import annotations

import base64
import hashlib
import os
import re
import shlex
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from pathlib import Path
from typing import Dict, List, Optional

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
NAME = "blobtable"


def _version() -> str:
    text = (ROOT / "CMakeLists.txt").read_text()
    found = re.search(r"project\(blobtable VERSION ([0-9.]+)", text)
    if not found:
        raise RuntimeError("no version in CMakeLists.txt's project()")
    return found.group(1)


def _tag() -> str:
    """The wheel tag of this interpreter: cp311-cp311-linux_x86_64."""
    impl = f"cp{sys.version_info.major}{sys.version_info.minor}"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{impl}-{impl}-{platform}"


def _build_extension(build_dir: Path) -> Path:
    args = ["cmake", "-S", str(ROOT), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
            "-DBUILD_SHARED_LIBS=OFF", "-DBLOBTABLE_PYTHON=ON", "-DBLOBTABLE_BUILD_TESTS=OFF",
            "-DBLOBTABLE_BUILD_BENCH=OFF", "-DBLOBTABLE_BUILD_EXAMPLES=OFF",
            "-DBLOBTABLE_INSTALL=OFF", f"-DPython_EXECUTABLE={sys.executable}"]
    args += shlex.split(os.environ.get("BLOBTABLE_PIP_CMAKE_ARGS", ""))
    if not (build_dir / "CMakeCache.txt").exists() and _has_ninja():
        args += ["-G", "Ninja"]
    subprocess.run(args, check=True, stdout=sys.stderr)
    jobs = os.environ.get("BLOBTABLE_PIP_JOBS", str(os.cpu_count() or 1))
    subprocess.run(["cmake", "--build", str(build_dir), "--target", "blobtable_python",
                    "-j", jobs], check=True, stdout=sys.stderr)
    package = build_dir / "python" / NAME
    if not list(package.glob("_blobtable*.so")):
        raise RuntimeError(f"the build made no extension in {package}")
    return package


def _has_ninja() -> bool:
    return any((Path(p) / "ninja").exists() for p in os.environ.get("PATH", "").split(os.pathsep))


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _dist_info() -> Dict[str, bytes]:
    """The .dist-info files but RECORD, by name."""
    version, tag = _version(), _tag()
    return {
        "METADATA": (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {version}\n"
                     "Summary: An embedded table store on blob storage\nLicense: Apache-2.0\n"
                     "Requires-Python: >=3.9\n").encode(),
        "WHEEL": ("Wheel-Version: 1.0\nGenerator: blobtable _build_backend\n"
                  f"Root-Is-Purelib: false\nTag: {tag}\n").encode(),
    }


def _write_wheel(package: Path, wheel_directory: str) -> str:
    version, tag = _version(), _tag()
    dist_info = f"{NAME}-{version}.dist-info"
    wheel_name = f"{NAME}-{version}-{tag}.whl"
    files: Dict[str, bytes] = {}
    for path in sorted(package.iterdir()):
        if path.suffix in (".py", ".pyi") or path.name == "py.typed" or \
                (path.name.startswith("_blobtable") and path.suffix == ".so"):
            files[f"{NAME}/{path.name}"] = path.read_bytes()
    for name, data in _dist_info().items():
        files[f"{dist_info}/{name}"] = data
    record = [_record_line(n, d) for n, d in files.items()] + [f"{dist_info}/RECORD,,"]
    files[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()
    with zipfile.ZipFile(Path(wheel_directory) / wheel_name, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if name.endswith(".so") else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return wheel_name


# PEP 517 hooks.

def get_requires_for_build_wheel(config_settings: Optional[dict] = None) -> List[str]:
    return []


def prepare_metadata_for_build_wheel(metadata_directory: str,
                                     config_settings: Optional[dict] = None) -> str:
    """The metadata without a build (pip asks for it first)."""
    dist_info = Path(metadata_directory) / f"{NAME}-{_version()}.dist-info"
    dist_info.mkdir(parents=True, exist_ok=True)
    for name, data in _dist_info().items():
        (dist_info / name).write_bytes(data)
    return dist_info.name


def build_wheel(wheel_directory: str, config_settings: Optional[dict] = None,
                metadata_directory: Optional[str] = None) -> str:
    kept = os.environ.get("BLOBTABLE_PIP_BUILD_DIR")
    if kept:
        return _write_wheel(_build_extension(Path(kept).resolve()), wheel_directory)
    with tempfile.TemporaryDirectory(prefix="blobtable-pip-") as build_dir:
        return _write_wheel(_build_extension(Path(build_dir)), wheel_directory)


def build_sdist(sdist_directory: str, config_settings: Optional[dict] = None) -> str:
    raise RuntimeError("blobtable builds from its checkout: `pip install ./python` "
                       "(docs/python.md#installing); there is no source distribution")
