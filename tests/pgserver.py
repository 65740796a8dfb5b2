"""A throwaway PostgreSQL server for the tests, run from the installed server binaries.

:func:`running_server` makes a cluster in a temporary directory (``initdb``, trust
authentication, fsync off), starts it on a free loopback port with its unix socket in that
directory, yields a :class:`PostgresServer` and, at the end, stops it (``pg_ctl stop -m fast``)
and deletes the directory. :meth:`PostgresServer.create_database` gives each test an empty
database of its own.

The binaries are ``initdb``/``pg_ctl`` on PATH, else those of the highest version under
``/usr/lib/postgresql/*/bin`` (Debian's layout). When they are missing the tests fail with
:class:`PostgresMissingError` (install them with ``scripts/install-postgres.sh``); they never
skip. initdb refuses to run as root, so as root the binaries run as the ``postgres`` system
user (``runuser -u postgres --``; the user is created when missing) and the directory is
given to that user.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

SUPERUSER = "postgres"  # the database superuser initdb creates (trust auth: no password)
_SYSTEM_USER = "postgres"  # the OS user the server runs as when the tests run as root
_SETTINGS = {  # speed over durability: the cluster is thrown away
    "listen_addresses": "'127.0.0.1'",
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "shared_buffers": "'16MB'",
    "max_wal_size": "'64MB'",  # checkpoints often: the log stays small on a small disk
    "min_wal_size": "'32MB'",
    "max_connections": "200",
}
_START_ATTEMPTS = 3  # a free port can be taken by someone else before the server binds it
_names = itertools.count()


class PostgresMissingError(RuntimeError):
    """The PostgreSQL server binaries are not installed."""


class PostgresServerError(RuntimeError):
    """A server binary failed; the message holds its output and the server log."""


def find_binaries() -> Path:
    """The directory holding ``initdb`` and ``pg_ctl``: PATH first, then the highest
    ``/usr/lib/postgresql/<version>/bin``."""
    on_path = shutil.which("initdb")
    if on_path and shutil.which("pg_ctl"):
        return Path(on_path).parent
    versions = [p for p in Path("/usr/lib/postgresql").glob("*/bin") if (p / "initdb").exists()]
    if versions:
        return max(versions, key=lambda p: _version_key(p.parent.name))
    raise PostgresMissingError(
        "the PostgreSQL server binaries (initdb, pg_ctl) are not installed; "
        "run scripts/install-postgres.sh"
    )


def _version_key(name: str) -> tuple[int, ...]:
    """``"15"`` → (15,), ``"9.6"`` → (9, 6); non-numbers sort first."""
    return tuple(int(part) if part.isdigit() else -1 for part in name.split("."))


def free_port() -> int:
    """A loopback TCP port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _as_root() -> bool:
    return os.name == "posix" and os.geteuid() == 0


def _ensure_system_user() -> None:
    """Create the ``postgres`` system user when it does not exist (root only)."""
    if subprocess.run(["id", "-u", _SYSTEM_USER], capture_output=True).returncode != 0:
        subprocess.run(["useradd", "--system", "--no-create-home", _SYSTEM_USER], check=True)


class PostgresServer:
    """One PostgreSQL cluster under ``root`` (data in ``root/data``, log in ``root/log``)."""

    def __init__(self, binaries: Path, root: Path) -> None:
        self.binaries = binaries
        self.root = root
        self.data = root / "data"
        self.log = root / "log"
        self.port = 0
        self._prefix = ["runuser", "-u", _SYSTEM_USER, "--"] if _as_root() else []

    @property
    def url(self) -> str:
        """The URL of the ``postgres`` maintenance database."""
        return self.database_url("postgres")

    def database_url(self, name: str) -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{name}"

    def init(self) -> None:
        """initdb the cluster with trust authentication and the fast settings."""
        if self._prefix:
            _ensure_system_user()
            shutil.chown(self.root, _SYSTEM_USER, _SYSTEM_USER)
        self._run(
            "initdb", "-D", str(self.data), "-U", SUPERUSER, "--auth=trust",
            "-E", "UTF8", "--locale=C", "--no-sync",
        )  # fmt: skip
        settings = dict(_SETTINGS, unix_socket_directories=f"'{self.root}'")
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.writelines(f"{name} = {value}\n" for name, value in settings.items())

    def start(self) -> None:
        """Start on a free port, waiting until it accepts connections (retried on a port race)."""
        for attempt in range(_START_ATTEMPTS):
            self.port = free_port()
            try:
                self._pg_ctl("start", "-w", "-l", str(self.log), "-o", f"-p {self.port}")
                return
            except PostgresServerError:
                if attempt == _START_ATTEMPTS - 1:
                    raise

    def stop(self) -> None:
        """Stop at once (``-m fast``: open sessions are ended)."""
        self._pg_ctl("stop", "-w", "-m", "fast")

    def create_database(self, name: str | None = None) -> str:
        """Create an empty database (a fresh name unless given) and return its URL."""
        import psycopg

        name = name or f"test_{os.getpid()}_{next(_names)}"
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.database_url(name)

    def drop_database(self, url: str) -> None:
        """Drop the database of ``url`` (its open sessions ended): its files leave the disk."""
        import psycopg

        name = url.rsplit("/", 1)[1]
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def _pg_ctl(self, *args: str) -> None:
        self._run("pg_ctl", "-D", str(self.data), *args)

    def _run(self, program: str, *args: str) -> None:
        """Run a server binary (as the system user when root), raising with its output."""
        command = [*self._prefix, str(self.binaries / program), *args]
        done = subprocess.run(command, cwd=self.root, capture_output=True, text=True)
        if done.returncode != 0:
            log = self.log.read_text(errors="replace")[-4000:] if self.log.exists() else ""
            raise PostgresServerError(
                f"{' '.join(command)} exited with {done.returncode}:\n"
                f"{done.stdout}{done.stderr}\nserver log:\n{log}"
            )


@contextlib.contextmanager
def running_server() -> Iterator[PostgresServer]:
    """A started throwaway server; stopped and deleted on exit."""
    binaries = find_binaries()
    root = Path(tempfile.mkdtemp(prefix="neardup-pg-"))
    server = PostgresServer(binaries, root)
    try:
        server.init()
        server.start()
        try:
            yield server
        finally:
            server.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)
