"""20 Newsgroups (Lang 1995), "bydate" version, as padded token-id sequences.

Found as ``<data>/20news-bydate-train/`` + ``20news-bydate-test/`` (extracted), as a
previously extracted ``20news-bydate/`` folder, or as ``<data>/20news-bydate.tar.gz``
(extracted once, atomically, into the writable data folder). Documents are read with
``sklearn.datasets.load_files`` (latin-1), labels are the sorted newsgroup folder names.

Tokenisation follows the reference code (Mukhoti et al., ``NewsGroup/ng_loader.py``,
the Keras ``Tokenizer``/``pad_sequences`` defaults): optionally drop the header (text
before the first blank line), lowercase, split on whitespace and on the Keras filter
punctuation ``!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~`` (apostrophes stay inside words), rank words by
training-set frequency (ties: first occurrence), keep ids ``1 .. max_vocab - 1``
(0 = padding), drop out-of-vocabulary words, and pad/truncate to ``max_len`` at the
front (``"pre"``, Keras default) or the back (``"post"``). Unlike the reference, which
pools all documents and splits them at random, the vocabulary is built on the
training documents only (the by-date training split less the validation documents
that :func:`replicate.data.load` will hold out) and the official by-date test set is the
test set. Word embeddings (option ``embeddings``: GloVe files, or word2vec trained on
the same training documents; see :mod:`replicate.data.embeddings`) come back as the
``"embedding"`` array.
"""
from __future__ import annotations

import hashlib
import re
from collections import Counter
from pathlib import Path

import numpy as np

from . import archives as ar
from . import embeddings as emb
from .base import split_indices

#: The name of the one copy of 20 Newsgroups the package reads (the by-date archive).
DISPLAY_NAME = "20 Newsgroups (by date)"

NEWS_URL = "http://qwone.com/~jason/20Newsgroups/20news-bydate.tar.gz"
NEWS_ARCHIVE = "20news-bydate.tar.gz"
NEWS_PARTS = ("20news-bydate-train", "20news-bydate-test")
NEWS_WHAT = ("the 20 Newsgroups 'bydate' archive (gzip tar of 20news-bydate-train/<group>/<id> "
             "and 20news-bydate-test/<group>/<id>)")
TOKEN_RE = re.compile(r"[^\s!\"#$%&()*+,\-./:;<=>?@\[\\\]^_`{|}~]+")


def tokenize(text: str, strip_headers: bool = True) -> list[str]:
    """Lowercased word tokens of ``text`` (Keras ``Tokenizer`` rule), header dropped if asked."""
    if strip_headers:
        i = text.find("\n\n")
        if i > 0:
            text = text[i:]
    return TOKEN_RE.findall(text.lower())


def build_vocab(token_lists: list[list[str]], max_vocab: int) -> tuple[str, ...]:
    """``("<pad>", w1, w2, ...)``: the ``max_vocab - 1`` most frequent words, ties by first use."""
    if not isinstance(max_vocab, (int, np.integer)) or max_vocab < 2:
        raise ValueError(f"max_vocab must be an int >= 2, got {max_vocab!r}")
    counts = Counter()
    for toks in token_lists:
        counts.update(toks)
    ranked = sorted(counts, key=counts.__getitem__, reverse=True)  # sorted() is stable
    return ("<pad>",) + tuple(ranked[: max_vocab - 1])


def encode(token_lists: list[list[str]], vocab: tuple[str, ...], max_len: int,
           padding: str = "pre", truncating: str = "pre") -> np.ndarray:
    """N x ``max_len`` int64 ids (0 = padding), OOV words dropped, Keras ``pad_sequences`` rules."""
    for name, v in (("padding", padding), ("truncating", truncating)):
        if v not in ("pre", "post"):
            raise ValueError(f"{name} must be 'pre' or 'post', got {v!r}")
    if not isinstance(max_len, (int, np.integer)) or max_len < 1:
        raise ValueError(f"max_len must be a positive int, got {max_len!r}")
    index = {w: i for i, w in enumerate(vocab) if i > 0}
    seqs = [[index[t] for t in toks if t in index] for toks in token_lists]
    lengths = np.array([len(s) for s in seqs], dtype=np.int64)
    flat = np.fromiter((i for s in seqs for i in s), dtype=np.int64, count=int(lengths.sum()))
    doc = np.repeat(np.arange(len(seqs)), lengths)
    pos = np.arange(len(flat)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    keep_len = np.minimum(lengths, max_len)
    drop = lengths - keep_len                      # tokens cut per document
    start = drop if truncating == "pre" else np.zeros_like(drop)
    rel = pos - np.repeat(start, lengths)          # position inside the kept window
    ok = (rel >= 0) & (rel < np.repeat(keep_len, lengths))
    offset = (max_len - keep_len) if padding == "pre" else np.zeros_like(keep_len)
    col = rel + np.repeat(offset, lengths)
    out = np.zeros((len(seqs), max_len), dtype=np.int64)
    out[doc[ok], col[ok]] = flat[ok]
    return out


def _locate(root: Path) -> Path | None:
    for d in ar.search_dirs(root):
        for base in (d, d / "20news-bydate"):
            if all((base / p).is_dir() for p in NEWS_PARTS):
                return base
    return None


def find_or_extract(root: Path, download: bool) -> Path:
    """Folder holding both by-date parts, extracting (or downloading) the archive if needed."""
    base = _locate(root)
    if base is not None:
        return base
    archive = ar.find_first(root, NEWS_ARCHIVE)
    why = ""
    if archive is None and ar.download_allowed(download, root):
        from torchvision.datasets.utils import download_url
        try:
            download_url(NEWS_URL, str(ar.writable_dir(root)), NEWS_ARCHIVE)
        except (OSError, RuntimeError) as exc:
            why = f" (The download failed: {type(exc).__name__}: {exc})"
        archive = ar.find_first(root, NEWS_ARCHIVE)
    if archive is None:
        partial = [b for d in ar.search_dirs(root) for b in (d, d / "20news-bydate")
                   if any((b / p).is_dir() for p in NEWS_PARTS)]
        lacking = (f"{partial[0]} lacks {', '.join(p for p in NEWS_PARTS if not (partial[0] / p).is_dir())}/"
                   if partial else "")
        raise ar.missing_data_error("20 Newsgroups", [NEWS_ARCHIVE, f"{{{','.join(NEWS_PARTS)}}}/"],
                                    root, NEWS_URL, "Use the 'bydate' version" + why, lacking=lacking)
    return ar.extract_tar_atomic(archive, ar.writable_dir(root) / "20news-bydate", NEWS_PARTS, NEWS_URL,
                                 NEWS_WHAT)


def _read(base: Path, strip_headers: bool, fit_split: tuple):
    """(train bunch, test bunch, train token lists, indices of the training documents outside
    the validation set)."""
    from sklearn.datasets import load_files

    tr = load_files(str(base / NEWS_PARTS[0]), encoding="latin-1", shuffle=False)
    te = load_files(str(base / NEWS_PARTS[1]), encoding="latin-1", shuffle=False)
    if list(tr.target_names) != list(te.target_names):
        raise ValueError(f"{base}: train and test newsgroup folders differ")
    fit, _ = split_indices(np.asarray(tr.target), *fit_split)
    return tr, te, [tokenize(t, strip_headers) for t in tr.data], fit


def load_20newsgroups(root: Path, download: bool, max_len: int = 1000, max_vocab: int = 20000,
                      strip_headers: bool = True, padding: str = "pre", truncating: str = "pre",
                      embeddings: str = "auto", embed_dim: int = 100, word2vec: dict | None = None,
                      fit_split: tuple = ("none", 0, 1)) -> tuple[dict, dict]:
    """Arrays (token ids, labels, classes, vocab, embedding) and provenance of 20 Newsgroups by-date.

    ``fit_split`` = ``(split, val_size, split_seed)`` of :func:`~replicate.data.base.split_indices`
    names the validation documents that the vocabulary and the word2vec embeddings must
    not see (``("none", 0, 1)``: every training document). ``arrays["embedding"]`` is a
    ``len(vocab) x embed_dim`` float32 matrix, or absent for ``embeddings="random"``.
    """
    if not isinstance(strip_headers, bool):
        raise ValueError(f"strip_headers must be a bool, got {strip_headers!r}")
    w2v = emb.check_options(embeddings, embed_dim, {} if word2vec is None else word2vec)
    if fit_split[0] == "none":
        fit_split = ("none", 0, 0)
    base = find_or_extract(root, download)
    kind = emb.resolve(embeddings, int(embed_dim), root)
    opts = f"{max_len}-{max_vocab}-{int(strip_headers)}-{padding}-{truncating}-fit{'-'.join(map(str, fit_split))}"
    key = ar.fingerprint(*(base / p for p in NEWS_PARTS)) + "|" + opts
    # the documents word2vec learns from: the files, the header rule and the validation split
    docs_id = ar.fingerprint(*(base / p for p in NEWS_PARTS)) + f"|{int(strip_headers)}|{fit_split}"
    fname = f"20news-{hashlib.sha1(opts.encode()).hexdigest()[:10]}.npz"
    arrays = ar.load_cached(root, fname, key)
    read = []  # the documents, read at most once and only when a cache misses

    def documents():
        if not read:
            read.append(_read(base, strip_headers, fit_split))
        return read[0]

    if arrays is None:
        tr, te, tok_tr, fit = documents()
        tok_fit = [tok_tr[i] for i in fit]
        tok_te = [tokenize(t, strip_headers) for t in te.data]
        vocab = build_vocab(tok_fit, max_vocab)
        small = np.int32 if len(vocab) < 2**31 else np.int64  # halves the cache size
        arrays = {"x_train": encode(tok_tr, vocab, max_len, padding, truncating).astype(small),
                  "y_train": np.asarray(tr.target, np.int64),
                  "x_test": encode(tok_te, vocab, max_len, padding, truncating).astype(small),
                  "y_test": np.asarray(te.target, np.int64),
                  "classes": np.array(tr.target_names), "vocab": np.array(vocab)}
        ar.save_cached(root, fname, key, arrays)
    arrays["x_train"] = arrays["x_train"].astype(np.int64)
    arrays["x_test"] = arrays["x_test"].astype(np.int64)
    vocab = tuple(str(w) for w in arrays["vocab"])
    matrix, note = emb.embedding_matrix(kind, root, lambda: [documents()[2][i] for i in documents()[3]],
                                        vocab, int(embed_dim), w2v, docs_id)
    if matrix is not None:
        arrays["embedding"] = matrix
    return arrays, {"source": f"20news-bydate folders ({base}) read with sklearn load_files",
                    "display_name": DISPLAY_NAME, "notes": (note,), "embeddings": kind}
