"""Test session set-up: the data directory every test and chapter smoke run uses.

* A real data directory (``$REPLICATE_DATA``, else ``<repo>/data``, existing and not
  empty) is used as it is.
* Without one, a session fixture writes small data sets in the official formats
  (:func:`replicate.data.generated.write_data_dir`: what the chapters use) to a temporary
  folder and points ``REPLICATE_DATA`` there; the loaders label that data
  "(generated test data)", so the chapters say so in their output. The run cache moves
  to a temporary folder too, so that runs trained on generated data never reach the
  user's cache (a run key names the data set, not the copy of it).
* Downloads are off in every test (``REPLICATE_OFFLINE``), and computed results are not
  kept on disk (``REPLICATE_REPORT_CACHE=0``; tests of the cache turn it on).

The settings go into ``os.environ`` for the whole session, so the kernels that execute
the chapters (``tests/test_book.py``) inherit them. ``pytest`` prints which data is used
in its header and at the end.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from replicate import config as rconfig

ENV_KEYS = (rconfig.DATA_ENV, rconfig.CACHE_ENV, "REPLICATE_OFFLINE", "REPLICATE_REPORT_CACHE")


def real_data_dir() -> Path | None:
    """The real data directory if there is one (existing, not empty, not generated), else None."""
    from replicate.data import archives

    root = rconfig.data_dir()
    if root.is_dir() and not archives.is_generated(root) and any(root.iterdir()):
        return root
    return None


def data_line() -> str:
    root = real_data_dir()
    if root is not None:
        return f"data: real data directory {root}"
    return (f"data: no real data directory ({rconfig.DATA_ENV} unset, or {rconfig.data_dir()} missing or empty): "
            f"tests and chapter smoke runs use generated test data in the official formats")


def pytest_report_header(config):
    return data_line()


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(data_line())


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    """No downloads, a run and data cache in the test's own tmp folder, one torch thread
    (restored afterwards): for tests that decode data or train small models."""
    import torch

    monkeypatch.setenv("REPLICATE_OFFLINE", "1")
    monkeypatch.setenv(rconfig.CACHE_ENV, str(tmp_path / "cache"))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    """An empty data directory and a run cache of this test's own (restored afterwards); no
    downloads. The cache's ``data/`` folder is searched for data too, so it must be the
    test's own: a real data directory's extractions may sit in the shared one."""
    data = tmp_path / "data"
    data.mkdir()
    monkeypatch.setenv("REPLICATE_DATA", str(data))
    monkeypatch.setenv(rconfig.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv("REPLICATE_OFFLINE", "1")
    return data


@pytest.fixture(scope="session", autouse=True)
def data_directory(tmp_path_factory) -> Path:
    """The data directory of this session: the real one, else a generated one (see module docstring)."""
    from replicate.data import generated

    saved = {k: os.environ.get(k) for k in ENV_KEYS}
    os.environ["REPLICATE_OFFLINE"] = "1"
    # Computed results are not kept on disk in tests: a test that replaces a function would
    # otherwise read what the unpatched code kept (the cache's key is the code's source).
    # The tests of the cache, and the smoke book (real code only), turn it on for themselves.
    os.environ["REPLICATE_REPORT_CACHE"] = "0"
    root = real_data_dir()
    if root is None:
        root = generated.write_data_dir(tmp_path_factory.mktemp("generated-data"))
        os.environ[rconfig.DATA_ENV] = str(root)
        os.environ[rconfig.CACHE_ENV] = str(tmp_path_factory.mktemp("cache"))
    yield root
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
