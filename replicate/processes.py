"""The environment of worker processes run side by side (:func:`worker_env`).

``replicate claims`` builds the chapters' claims in worker processes and ``replicate book``
executes chapters in them, one per core. Each worker inherits this process's environment
when it starts, so the settings below are placed in ``os.environ`` for the time the workers
start and restored after; a setting the user has made already is kept.

- **One compute thread each** (:data:`THREAD_ENV`): two workers with a thread per core each
  would fight over the cores.
- **glibc's allocator keeps freed memory** (:data:`MALLOC_ENV`): the numerical code makes
  and drops arrays of 0.1 to 30 MB many thousand times (a block of the focal temperature
  grid, a resampled bin sum). By default glibc maps each such array anew from the kernel,
  which zero-fills its pages, and hands freed memory back at once; with these settings
  arrays under 32 MiB come from the process's heap, and up to 1 GiB of freed heap is kept
  for reuse. Same results, fewer page faults: ``replicate claims`` cold spent 7.8 s of
  system time on 2 cores, 4.6 s with them (3 % less wall time, paired runs,
  ``benchmarks/README.md``). Other C libraries ignore these names (glibc's ``mallopt``
  variables, documented in ``man 3 mallopt``).
"""
from __future__ import annotations

import contextlib
import os

__all__ = ["THREAD_ENV", "MALLOC_ENV", "worker_env"]

#: The thread counts of torch and the BLAS libraries, set to 1 for workers run side by side.
THREAD_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
#: glibc's allocator: arrays under 32 MiB from the heap, up to 1 GiB of freed heap kept, the
#: heap grown 256 MiB at a time (``M_MMAP_THRESHOLD``, ``M_TRIM_THRESHOLD``, ``M_TOP_PAD``).
MALLOC_ENV = {"MALLOC_MMAP_THRESHOLD_": str(32 << 20), "MALLOC_TRIM_THRESHOLD_": str(1 << 30),
              "MALLOC_TOP_PAD_": str(256 << 20)}


@contextlib.contextmanager
def worker_env():
    """:data:`THREAD_ENV` and :data:`MALLOC_ENV` in ``os.environ`` (each unless set already)
    while the block runs, for the worker processes it starts; ``os.environ`` as before after.

    Example
    -------
    >>> import os
    >>> from replicate.processes import MALLOC_ENV, THREAD_ENV, worker_env
    >>> before = dict(os.environ)
    >>> with worker_env():
    ...     all(k in os.environ for k in {**THREAD_ENV, **MALLOC_ENV})
    True
    >>> dict(os.environ) == before
    True
    """
    wanted = {**THREAD_ENV, **MALLOC_ENV}
    saved = {k: os.environ.get(k) for k in wanted}
    for k, v in wanted.items():
        os.environ.setdefault(k, v)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
