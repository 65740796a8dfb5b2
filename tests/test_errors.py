"""errors: weak-signature notes are a warning, or collected per thread inside weak_notes."""

import threading
import warnings

import pytest

from neardup.errors import WeakSignatureWarning, warn_weak, weak_notes


def test_a_weak_signature_is_a_warning_outside_weak_notes():
    with pytest.warns(WeakSignatureWarning, match="too short"):
        warn_weak("3 documents too short")


def test_each_thread_collects_only_its_own_notes():
    barrier = threading.Barrier(2)
    got: dict[str, list[str]] = {}

    def run(name: str) -> None:
        with weak_notes() as notes:
            barrier.wait()
            for k in range(50):
                warn_weak(f"{name} {k}")
            barrier.wait()
        got[name] = notes

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any note that became a warning fails the test
        threads = [threading.Thread(target=run, args=(name,)) for name in ("a", "b")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert got == {name: [f"{name} {k}" for k in range(50)] for name in ("a", "b")}


def test_weak_notes_nest_and_restore():
    with weak_notes() as outer:
        warn_weak("one")
        with weak_notes() as inner:
            warn_weak("two")
        warn_weak("three")
    assert (outer, inner) == (["one", "three"], ["two"])
