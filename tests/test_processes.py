"""replicate.processes.worker_env: the settings reach the worker processes, a user's own
setting wins, and the environment is restored, also after an error."""
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor

import pytest

from replicate.processes import MALLOC_ENV, THREAD_ENV, worker_env


def _env_of_worker(names):
    return {k: os.environ.get(k) for k in names}


def test_spawned_workers_inherit_the_settings_and_a_users_own_wins(monkeypatch):
    for k in {**THREAD_ENV, **MALLOC_ENV}:
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "3")                     # the user's choice
    names = [*THREAD_ENV, *MALLOC_ENV]
    with worker_env(), ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        seen = pool.submit(_env_of_worker, names).result()
    assert seen == {**THREAD_ENV, **MALLOC_ENV, "OMP_NUM_THREADS": "3"}
    assert all(k not in os.environ for k in names if k != "OMP_NUM_THREADS")
    assert os.environ["OMP_NUM_THREADS"] == "3"


def test_restored_after_an_error(monkeypatch):
    for k in MALLOC_ENV:
        monkeypatch.delenv(k, raising=False)
    with pytest.raises(RuntimeError, match="boom"):
        with worker_env():
            assert os.environ["MALLOC_TOP_PAD_"] == MALLOC_ENV["MALLOC_TOP_PAD_"]
            raise RuntimeError("boom")
    assert all(k not in os.environ for k in MALLOC_ENV)


def test_mmap_threshold_within_glibcs_limit():
    # glibc ignores an M_MMAP_THRESHOLD above HEAP_MAX_SIZE / 2 (32 MiB on 64-bit builds):
    # a larger value would silently leave the default in place
    assert 0 < int(MALLOC_ENV["MALLOC_MMAP_THRESHOLD_"]) <= 32 << 20
