import contextlib
import os
import signal
import subprocess
import sys

import pytest

from neardup.util import interrupt


@pytest.fixture
def installed():
    previous, hook = signal.getsignal(signal.SIGINT), sys.unraisablehook
    interrupt.install()
    yield
    signal.signal(signal.SIGINT, previous)
    sys.unraisablehook = hook
    interrupt._requested.clear()


def test_a_ctrl_c_swallowed_once_is_raised_again_by_check(installed):
    interrupt.check()  # nothing asked yet
    with contextlib.suppress(KeyboardInterrupt):  # as compiled code's callbacks swallow it
        os.kill(os.getpid(), signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        interrupt.check()


def test_a_ctrl_c_inside_a_finalizer_is_not_printed_but_raised_by_check(installed, capsys):
    """A finalizer's exception is printed as "ignored" and dropped: the interrupt waits for
    the next check instead of writing a traceback beside the command's one line."""
    seen = []

    class Compiled:  # as llvmlite's objects free their code when collected
        def __del__(self):
            try:
                os.kill(os.getpid(), signal.SIGINT)
                seen.append("went on")
            except KeyboardInterrupt:
                seen.append("raised inside")

    Compiled()
    assert seen == ["went on"]
    assert "ignored" not in capsys.readouterr().err
    with pytest.raises(KeyboardInterrupt):
        interrupt.check()
    with pytest.raises(KeyboardInterrupt):  # elsewhere it is raised at once
        os.kill(os.getpid(), signal.SIGINT)


def test_after_a_ctrl_c_a_half_built_objects_finalizer_prints_nothing():
    """The interrupt can leave an object half-built (llvmlite's, mid-compilation); its
    ``__del__`` then fails at exit. Before Ctrl-C such an error is printed as usual."""
    script = """
import os, signal
from neardup.util import interrupt

class HalfBuilt:
    def __del__(self):
        raise AttributeError("no _as_parameter_")

interrupt.install()
HalfBuilt()
print("before", flush=True)
try:
    os.kill(os.getpid(), signal.SIGINT)
except KeyboardInterrupt:
    pass
keep = HalfBuilt()
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "before\n"
    assert done.stderr.count("AttributeError") == 1  # the one before Ctrl-C only
