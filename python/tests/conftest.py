# SPDX-License-Identifier: Apache-2.0
"""Fixtures: a store on each backend. Azurite (the repository's, pinned in
package.json) is started once per run on a free loopback port, in memory,
and stopped at the end; each test gets a container of its own there."""

from __future__ import annotations

import os
import socket
import subprocess
import time
import uuid
from pathlib import Path
from typing import Iterator

import pytest

import blobtable

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def azurite() -> Iterator[str]:
    """A connection string of an Azurite started for this run."""
    binary = Path(os.environ.get("BLOBTABLE_AZURITE", ROOT / "node_modules/.bin/azurite-blob"))
    if not binary.exists():
        pytest.fail(f"{binary} is missing: scripts/setup installs Azurite")
    port = _free_port()
    proc = subprocess.Popen(
        [str(binary), "--inMemoryPersistence", "--blobHost", "127.0.0.1", "--blobPort", str(port),
         "--silent", "--skipApiVersionCheck"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # Ready once it accepts a connection (polling a socket, not sleeping
        # for a guessed time); it fails the run if it never does.
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                pytest.fail(f"Azurite exited with {proc.returncode}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail("Azurite did not start within 60 s")
                time.sleep(0.05)
        yield ("UseDevelopmentStorage=true;"
               f"BlobEndpoint=http://127.0.0.1:{port}/devstoreaccount1")
    finally:
        proc.kill()
        proc.wait()


@pytest.fixture(params=["embedded", "azurite"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple]:
    """(location, options) of a fresh store on each backend."""
    if request.param == "embedded":
        yield str(tmp_path / "store"), {}
    else:
        conn = request.getfixturevalue("azurite")
        yield conn, {"container": "t" + uuid.uuid4().hex[:20], "cache_dir": str(tmp_path / "cache")}


@pytest.fixture
def store(location: tuple) -> Iterator[blobtable.Store]:
    where, options = location
    with blobtable.open(where, **options) as s:
        yield s


@pytest.fixture
def embedded(tmp_path: Path) -> Iterator[blobtable.Store]:
    with blobtable.open(tmp_path / "store") as s:
        yield s
