"""Shared fixtures: a throwaway PostgreSQL server per test session (per xdist worker), a Spark
standalone cluster (its tests share one xdist group: one cluster per test run), and a spy on
the files flushed to disk."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from pgserver import PostgresServer, running_server
from sparkcluster import Cluster, bare_python, running_cluster

# Spark's JVMs start without a class archive, as on a fresh machine, and build none (each
# first run would start a dump): tests/engines/test_spark_class_archive.py turns it on
os.environ.setdefault("NEARDUP_SPARK_CLASS_ARCHIVE", "off")


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One PostgreSQL server for the session, started on first use (fails if not installed)."""
    with running_server() as server:
        yield server


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> Iterator[str]:
    """The URL of a new, empty database on the session's server, dropped after the test."""
    url = postgres_server.create_database()
    yield url
    postgres_server.drop_database(url)


@pytest.fixture(scope="session")
def bare_python_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory whose ``python3`` is a Python without neardup (first on a PATH)."""
    return bare_python(tmp_path_factory.mktemp("bare-python"))


@pytest.fixture(scope="session")
def spark_cluster_session(bare_python_bin: Path) -> Iterator[Cluster]:
    """A Spark standalone master and two workers (separate JVMs on 127.0.0.1) whose Python
    lacks neardup; started on first use, stopped at the end of the session."""
    with running_cluster(bare_python_bin) as cluster:
        yield cluster


@pytest.fixture
def spark_cluster(spark_cluster_session: Cluster) -> Iterator[Cluster]:
    """The session's cluster; the workers' directories of the test's applications (each
    holds the unpacked neardup archive) are removed after the test."""
    yield spark_cluster_session
    spark_cluster_session.remove_finished_applications()


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
