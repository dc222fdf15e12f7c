"""Where the library writes (issue #31, item 3): inside its own checkout the book's layout
(``data/``, ``.cache/``, ``results/`` at the root); installed anywhere else, a per-user cache
folder from platformdirs, and never the folder it is run from.

"Installed elsewhere" is simulated by replacing the checkout detection
(:func:`replicate.config.checkout`) with None, and platformdirs' user cache folder with one in
the test's tmp folder; the test then does what an installed user does (loads a data set,
trains and lists a run, keeps a report) from an empty working directory.
"""
from __future__ import annotations

from pathlib import Path

import platformdirs
import pytest

import replicate as rp
from replicate import config

REPO = Path(__file__).resolve().parent.parent
ENVS = (config.DATA_ENV, config.CACHE_ENV, config.RESULTS_ENV)


@pytest.fixture
def no_env(monkeypatch):
    for name in ENVS:
        monkeypatch.delenv(name, raising=False)


def test_inside_the_checkout_the_book_layout_is_unchanged(no_env):
    assert config.checkout() == REPO and config.repo_root() == REPO
    assert (config.data_dir(), config.cache_dir(), config.results_dir()) == \
        (REPO / "data", REPO / ".cache", REPO / "results")
    assert rp.runs.store_dir("results") == REPO / "results" / "runs"


def test_the_environment_variables_still_come_first(tmp_path, monkeypatch):
    monkeypatch.setattr(config, "checkout", lambda: None)
    for name, sub in zip(ENVS, ("d", "c", "r")):
        monkeypatch.setenv(name, str(tmp_path / sub))
    assert (config.data_dir(), config.cache_dir(), config.results_dir()) == \
        (tmp_path / "d", tmp_path / "c", tmp_path / "r")
    assert config.data_dir(tmp_path / "given") == tmp_path / "given"


def test_the_user_folder_is_platformdirs_user_cache_folder_of_the_distribution():
    assert config.user_dir() == Path(platformdirs.user_cache_path("focal-calibration", appauthor=False))
    with pytest.raises(ValueError, match="what must be one of data, cache, results; got 'logs'"):
        config.default_dir("logs")


@pytest.fixture
def installed(tmp_path, monkeypatch, no_env):
    """The package as if installed outside its checkout, run from the empty folder ``cwd``;
    platformdirs' user cache folder in ``user``. Yields ``(cwd, user)``."""
    user_root = tmp_path / "user-cache"
    asked = []

    def user_cache_path(appname=None, appauthor=None, *args, **kw):
        asked.append((appname, appauthor))
        return user_root / appname

    monkeypatch.setattr(config, "checkout", lambda: None)
    monkeypatch.setattr(platformdirs, "user_cache_path", user_cache_path)
    monkeypatch.setenv("REPLICATE_OFFLINE", "1")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    yield cwd, user_root / "focal-calibration"
    assert set(asked) == {("focal-calibration", False)}


@pytest.mark.slow          # trains one smoke run
def test_installed_elsewhere_everything_goes_to_the_user_folder_and_nothing_to_the_cwd(installed, monkeypatch):
    import torch

    from replicate import data, runs
    from replicate.claims import cache
    from generated_data import generated_splits

    cwd, user = installed
    assert config.repo_root() == cwd                       # what the book's commands would read
    assert (config.data_dir(), config.cache_dir(), config.results_dir()) == \
        (user / "data", user / "cache", user / "results")
    assert runs.store_dir("cache") == user / "cache" / "runs"
    assert cache.folder() == user / "cache" / "reports"

    # a data set loaded through the default data directory (written there first, as a user would)
    data.generated.write_data_dir(config.data_dir(), datasets=("cifar10",))
    splits = data.load("cifar10", val_size=100)
    assert splits.info.generated and len(splits.train[1]) > 0

    # a run trained and listed through the default stores (data replaced: no decoding needed)
    monkeypatch.setattr(data, "load", lambda name, **kw: generated_splits(name))
    runs.clear_data_cache()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        run = runs.get_or_train(runs.RunConfig("cifar10", "cross_entropy", profile="smoke"), progress="none")
    finally:
        torch.set_num_threads(threads)
        runs.clear_data_cache()
    assert run.path == user / "cache" / "runs" / run.key and (run.path / "logits.npz").is_file()
    assert list(runs.list_runs().key) == [run.key]

    assert list(cwd.iterdir()) == []                       # nothing written where it was run from
    assert {p.name for p in user.iterdir()} == {"data", "cache"}
