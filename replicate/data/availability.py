"""Which data sets are at hand, before anything loads or trains: one line for all that are not.

``replicate book`` (and ``replicate sweep``) call :func:`require` with every data set the
chapters or runs they are about to execute need, before the first one starts: a data set
whose files are in the data directory (the same places :func:`replicate.data.load`
searches, nothing decoded) is *present*; one that is absent but may be downloaded (downloads
allowed: ``$REPLICATE_OFFLINE`` unset and not a generated data directory; and the
official host answers on its port within a few seconds) is *downloadable*; any other is
*missing*, and :func:`require` raises one ``FileNotFoundError`` naming all of them, what
to put where, and why they cannot be downloaded. ``missing`` never reads more than file
names, and opens a network connection only for a data set that is absent while downloads
are allowed.

    from replicate.data import availability
    availability.require({"cifar10": "exp_focal_loss: 3 runs to train"}, purpose="replicate book")
"""
from __future__ import annotations

import os
import socket
from pathlib import Path
from urllib.parse import urlsplit

from . import archives as ar

PRESENT, DOWNLOADABLE, MISSING = "present", "downloadable", "missing"
PROBE_TIMEOUT_S = 3.0


def _cifar10(root: Path, options: dict) -> tuple[bool, str, str]:
    from . import cifar

    source = options.get("source", "auto")
    official = cifar._have(ar.find_first(root, cifar.CIFAR10_DIR), cifar.CIFAR10_FILES)
    jpeg = ar.find_first(root, cifar.JPEG_ARCHIVE) is not None
    have = {"auto": official or jpeg, "official": official, "jpeg": jpeg}.get(source, official or jpeg)
    files = {"official": f"{cifar.CIFAR10_DIR}/", "jpeg": cifar.JPEG_ARCHIVE}.get(
        source, f"{cifar.CIFAR10_DIR}/ or {cifar.JPEG_ARCHIVE}")
    # the JPEG copy is never downloaded: only the official files are
    return have, files, cifar.CIFAR10_URL if source != "jpeg" else ""


def _cifar100(root: Path, options: dict):
    from . import cifar

    return (cifar._have(ar.find_first(root, cifar.CIFAR100_DIR), cifar.CIFAR100_FILES),
            f"{cifar.CIFAR100_DIR}/", cifar.CIFAR100_URL)


def _svhn(root: Path, options: dict):
    from . import svhn

    return svhn._folder(root) is not None, f"svhn/{{{','.join(svhn.SVHN_FILES)}}}", svhn.SVHN_URL


def _tiny(root: Path, options: dict):
    from . import tiny_imagenet as t

    folder = ar.find_first(root, t.TINY_DIR)
    have = ar.find_first(root, t.TINY_ZIP) is not None or (folder is not None and not ar.lacking_files(folder,
                                                                                                        t.TINY_FILES))
    return have, f"{t.TINY_ZIP} or {t.TINY_DIR}/", t.TINY_URL


def _news(root: Path, options: dict):
    from . import embeddings, text

    have = text._locate(root) is not None or ar.find_first(root, text.NEWS_ARCHIVE) is not None
    kind = options.get("embeddings", "auto")
    dim = int(options.get("embed_dim", 100))
    glove = have and kind in ("glove", "auto") and embeddings.find_glove(root, dim) is not None
    if have and kind == "glove" and not glove:
        return False, f"{embeddings.glove_name(dim)} or {embeddings.GLOVE_ZIP} (GloVe, asked for by " \
                      f"embeddings='glove')", ""
    if have and (kind == "word2vec" or (kind == "auto" and not glove)):
        import importlib.util

        if importlib.util.find_spec("gensim") is None:  # word2vec vectors are trained with gensim
            return False, f"{embeddings.glove_name(dim)} (GloVe) or the gensim package for word2vec vectors " \
                          f"(pip install 'focal-calibration[text]'; on a GPU machine, a carried wheel)", ""
    return have, f"{text.NEWS_ARCHIVE} or {{{','.join(text.NEWS_PARTS)}}}/", text.NEWS_URL


#: data set -> (display name, check(root, options) -> (present?, expected files, download URL or ""))
CHECKS = {"cifar10": ("CIFAR-10", _cifar10), "cifar10c": ("CIFAR-10 (for CIFAR-10-C)", _cifar10),
          "cifar100": ("CIFAR-100", _cifar100), "svhn": ("SVHN", _svhn),
          "tiny_imagenet": ("Tiny-ImageNet", _tiny), "20newsgroups": ("20 Newsgroups", _news)}


def reachable(url: str, timeout: float = PROBE_TIMEOUT_S) -> bool:
    """True when the host of ``url`` accepts a TCP connection on its port within ``timeout``."""
    parts = urlsplit(url.split(" ")[0])
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname, port), timeout=timeout):
            return True
    except OSError:
        return False


def status(name: str, data_dir=None, options: dict | None = None, probe=reachable) -> tuple[str, str]:
    """``(state, detail)`` of data set ``name``: :data:`PRESENT`, :data:`DOWNLOADABLE` or
    :data:`MISSING`; ``detail`` says what is expected where and, when missing, why it cannot
    be downloaded. ``options`` are the data set's options (e.g. CIFAR-10's ``source``);
    ``probe(url) -> bool`` tells whether the official host answers (default
    :func:`reachable`)."""
    if name not in CHECKS:
        raise ValueError(f"name must be one of {', '.join(CHECKS)}; got {name!r}")
    root = ar.root_dir(data_dir)
    display, check = CHECKS[name]
    have, files, url = check(root, dict(options or {}))
    if have:
        return PRESENT, f"{display} found in {root}"
    expected = f"{display}: expected {files} in {root}"
    if not url:
        return MISSING, f"{expected} (not downloadable)"
    if os.environ.get(ar.OFFLINE_ENV):
        return MISSING, f"{expected} (downloads are off: {ar.OFFLINE_ENV} is set)"
    if ar.is_generated(root):
        return MISSING, f"{expected} ({root} holds generated test data: nothing is downloaded into it)"
    if not probe(url):
        return MISSING, f"{expected} (cannot reach {urlsplit(url).hostname} to download it from {url})"
    return DOWNLOADABLE, f"{display}: not in {root}; it will be downloaded from {url}"


def _normalise(datasets) -> dict:
    """``{name: (options, why)}`` from names, ``{name: why}`` or ``{name: (options, why)}``."""
    if isinstance(datasets, str):
        datasets = [datasets]
    if not isinstance(datasets, dict):
        datasets = dict.fromkeys(datasets, "")
    out = {}
    for name, v in datasets.items():
        options, why = (v if isinstance(v, tuple) else ({}, v))
        if name not in CHECKS:
            raise ValueError(f"data set must be one of {', '.join(CHECKS)}; got {name!r}")
        out[name] = (dict(options or {}), str(why or ""))
    return out


def missing(datasets, data_dir=None, probe=reachable) -> dict:
    """``{name: detail}`` of the data sets of ``datasets`` that are missing and cannot be
    downloaded (:func:`status`). ``datasets``: names, ``{name: why needed}`` or ``{name:
    (options, why needed)}``; the reason a data set is needed is appended to its detail."""
    out = {}
    for name, (options, why) in _normalise(datasets).items():
        state, detail = status(name, data_dir, options, probe)
        if state == MISSING:
            out[name] = detail + (f", needed by {why}" if why else "")
    return out


def require(datasets, data_dir=None, purpose: str = "", probe=reachable) -> None:
    """Refuse, in one line for all of them, the data sets of ``datasets`` that are missing and
    cannot be downloaded (:func:`missing`): ``FileNotFoundError`` naming each, what to put
    where and why it is needed, before anything has loaded or trained. ``purpose`` names
    what would have run (e.g. "replicate book")."""
    gone = missing(datasets, data_dir, probe)
    if not gone:
        return
    root = ar.root_dir(data_dir)
    head = f"{purpose}: " if purpose else ""
    raise FileNotFoundError(ar.one_line(
        f"{head}{len(gone)} data set{'s' if len(gone) > 1 else ''} missing before anything ran: "
        + "; ".join(gone.values())
        + f". Put the files in the data directory {root} (or choose another folder with REPLICATE_DATA or "
          f"--data-dir), or allow the download (unset {ar.OFFLINE_ENV}, with network)"))


def needed_by_runs(configs, what: str = "") -> dict:
    """``{data set: (options, why)}`` for :func:`require` from run configurations that are
    about to train (:class:`replicate.runs.RunConfig`, or dicts of resolved configurations):
    each configuration's data set and data options, ``why`` counting the runs ("exp_fcl:
    4 runs to train"). A configuration's resolution errors propagate (bad input)."""
    counts: dict = {}
    for cfg in configs:
        r = cfg if isinstance(cfg, dict) else cfg.resolve()
        name = r["dataset"]
        options, n = counts.get(name, (dict(r.get("data", {})), 0))
        counts[name] = (options, n + 1)
    head = f"{what}: " if what else ""
    return {name: (options, f"{head}{n} run{'s' if n > 1 else ''} to train") for name, (options, n) in counts.items()}
