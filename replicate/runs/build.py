"""Turn a resolved run configuration into data, an initialised network and a loss."""
from __future__ import annotations

import torch

_LOADED: dict = {}


def load_data(resolved: dict, data_dir=None):
    """``data.load`` for a resolved configuration, remembering the last data set loaded.

    A chapter trains ten methods on the same data; keeping the decoded tensors of the
    last ``(dataset, options, data directory)`` in memory saves reloading them per run.
    """
    from .. import config, data
    from .spec import canonical_json

    key = (id(data.load), resolved["dataset"], canonical_json(resolved["data"]), str(config.data_dir(data_dir)))
    if key not in _LOADED:
        _LOADED.clear()
        _LOADED[key] = data.load(resolved["dataset"], data_dir=data_dir, **resolved["data"])
    return _LOADED[key]


def clear_data_cache() -> None:
    """Forget the data set kept in memory by :func:`load_data`.

    Example
    -------
    >>> from replicate.runs import clear_data_cache
    >>> clear_data_cache()
    """
    _LOADED.clear()


def model_arguments(resolved: dict, info) -> dict:
    """Keyword arguments of ``models.get_model``: the run's ``model_params`` plus, for text
    data, the vocabulary size of the loaded data set (index 0 is padding), its pre-trained
    word vectors (``info.embedding``, frozen by the network) and their width."""
    kw = dict(resolved["model_params"])
    if resolved["kind"] == "text" and getattr(info, "vocab", None) is not None:
        kw.setdefault("vocab_size", len(info.vocab))
        vectors = getattr(info, "embedding", None)
        if vectors is not None:
            kw.setdefault("embedding", torch.from_numpy(vectors))
            kw.setdefault("embed_dim", int(vectors.shape[1]))
        elif "embed_dim" in info.options:
            kw.setdefault("embed_dim", int(info.options["embed_dim"]))
    return kw


def build(resolved: dict, data_dir=None):
    """``(splits, model, loss)`` for a resolved configuration (:func:`replicate.runs.resolve`).

    The data subset is drawn with a fixed seed (``subset_seed``) so that runs with
    different seeds see the same images; the network is initialised under
    ``torch.manual_seed(seed)`` (Mukhoti et al.'s torch seed 1) without touching the
    caller's global random state.

    Parameters
    ----------
    resolved : dict
        A configuration as :func:`replicate.runs.resolve` completes it.
    data_dir : str or os.PathLike or None
        The data directory; None (default): :func:`replicate.config.data_dir`.

    Returns
    -------
    tuple
        The data splits (train, val, test), the initialised network and the loss.

    Example
    -------
    >>> from replicate import runs
    >>> splits, model, loss = runs.build(runs.resolve(runs.RunConfig('cifar10', 'focal', profile='smoke')))
    >>> len(splits.val[1]), type(model).__name__, loss.name
    (500, 'TinyCNN', 'focal')
    """
    from .. import losses, models

    splits = load_data(resolved, data_dir)
    sizes = [resolved[k] for k in ("n_train", "n_val", "n_test")]
    if any(n is not None for n in sizes):
        splits = splits.subset(*sizes, seed=resolved["subset_seed"])
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(resolved["train"]["seed"])
        model = models.get_model(resolved["model"], splits.info.num_classes, **model_arguments(resolved, splits.info))
    loss = losses.get_loss(resolved["loss"], **resolved["loss_params"])
    return splits, model, loss


def display_name(resolved: dict, data_dir=None) -> str:
    """The display name of the data copy a run of ``resolved`` reads (e.g. "CIFAR-10 (JPEG
    q75)"): 20 Newsgroups has one copy, named without loading it; any other data set is
    loaded (from the data cache) and named by its loader."""
    if resolved.get("dataset") == "20newsgroups":
        from ..data.text import DISPLAY_NAME

        return DISPLAY_NAME
    return load_data(resolved, data_dir).info.display_name
