"""The Python workers' daemon: what it imports before it forks them (no Spark started)."""

from __future__ import annotations

import subprocess
import sys

from neardup.engines.spark import daemon


def test_the_stages_modules_are_imported_before_any_fork():
    code = (
        "import sys; from neardup.engines.spark import daemon; "
        "failed = daemon.preload(); "
        "print(failed, all(name in sys.modules for name in daemon.PRELOADED))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["[]", "True"]


def test_a_module_that_fails_is_left_to_the_worker_and_the_others_still_load():
    code = (
        "import sys; from neardup.engines.spark import daemon; "
        "print(daemon.preload(('no_such_module_here', 'neardup.engines.spark.batches')), "
        "'neardup.engines.spark.batches' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["['no_such_module_here']", "True"]


def test_numpy_s_blas_gets_one_thread_unless_the_user_chose():
    code = (
        "import os; os.environ.pop('OPENBLAS_NUM_THREADS', None); "
        "from neardup.engines.spark import daemon; daemon.preload(()); "
        "print(os.environ['OPENBLAS_NUM_THREADS'])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "1"


def test_the_module_spark_is_told_to_run_is_this_one():
    assert daemon.__name__ == daemon.MODULE
