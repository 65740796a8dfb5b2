"""Shared fixtures: a throwaway PostgreSQL server per test session (per xdist worker), and a
spy on the files flushed to disk."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pgserver import PostgresServer, running_server


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One PostgreSQL server for the session, started on first use (fails if not installed)."""
    with running_server() as server:
        yield server


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """The URL of a new, empty database on the session's server."""
    return postgres_server.create_database()


@pytest.fixture
def flushed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths ``os.fsync`` is called on, in order (a spy: the disk is flushed for real)."""
    import os

    paths: list[str] = []
    real = os.fsync

    def spy(fd: int) -> None:
        paths.append(os.readlink(f"/proc/self/fd/{fd}"))
        real(fd)

    monkeypatch.setattr(os, "fsync", spy)
    return paths
