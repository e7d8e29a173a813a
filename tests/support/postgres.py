"""A throwaway PostgreSQL for tests: Debian's `postgresql` package (scripts/setup.sh installs
it), `initdb` and `pg_ctl` on a temporary folder and a free port, stopped at the end.

initdb refuses to run as root, so as root the cluster belongs to `nobody` (`runuser`).
Each test takes a database of its own (`fresh_database`), so tests never see each other's
rows; the server is started once per session.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest
from tests.support.real_servers import free_port

USER = "farmhand"


def postgres_bin(name: str) -> str | None:
    """`initdb`/`pg_ctl` on PATH, or in Debian's /usr/lib/postgresql/<version>/bin."""
    found = shutil.which(name)
    if found:
        return found
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: p.parent.name)
    candidates = [v / name for v in reversed(versions) if (v / name).is_file()]
    return str(candidates[0]) if candidates else None


def _as_postgres_user(command: list[str]) -> list[str]:
    return ["runuser", "-u", "nobody", "--", *command] if os.geteuid() == 0 else command


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """The URL of a running throwaway server's `postgres` database (user `farmhand`)."""
    if postgres_bin("initdb") is None or postgres_bin("pg_ctl") is None:
        pytest.skip(
            "PostgreSQL's initdb/pg_ctl are not installed: scripts/setup.sh installs Debian's"
            " postgresql package (apt-get install postgresql)"
        )
    with throwaway_postgres() as url:
        yield url


@contextmanager
def throwaway_postgres() -> Iterator[str]:
    """Start a PostgreSQL server in a temporary folder (fsync off: nothing in it is kept)
    and yield its `postgres` database's URL; stopped and removed at the end."""
    initdb, pg_ctl = postgres_bin("initdb"), postgres_bin("pg_ctl")
    assert initdb is not None and pg_ctl is not None, "PostgreSQL is not installed"
    folder = Path(tempfile.mkdtemp(prefix="farmhand-pg-"))
    folder.chmod(0o777)  # the cluster's owner may be `nobody`
    data, port = folder / "data", free_port()
    subprocess.run(
        _as_postgres_user(
            [initdb, "-D", str(data), "-A", "trust", "-U", USER, "-E", "UTF8", "--no-sync"]
        ),
        check=True,
        capture_output=True,
    )
    options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -F"
    start = [pg_ctl, "-D", str(data), "-o", options, "-l", str(folder / "log"), "-w", "start"]
    subprocess.run(_as_postgres_user(start), check=True, capture_output=True)
    try:
        yield f"postgresql://{USER}@127.0.0.1:{port}/postgres"
    finally:
        stop = [pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop"]
        subprocess.run(_as_postgres_user(stop), capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


def fresh_database(server_url: str) -> str:
    """A new empty database on the server; its URL."""
    name = "t_" + uuid.uuid4().hex[:16]
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return server_url.rsplit("/", 1)[0] + "/" + name
