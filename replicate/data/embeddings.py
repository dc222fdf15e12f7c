"""Word embeddings for the 20 Newsgroups CNN: GloVe files, or word2vec trained offline.

Mukhoti et al. (2020), Appendix D: "We used Glove word embeddings (Pennington et al.,
2014) to train the network". Their code (``NewsGroup/ng_loader.py``,
``20newsgroup_train.py``) reads ``glove.6B/glove.6B.100d.txt`` into an ``nn.Embedding``
that the optimiser never sees, so the vectors stay frozen; words GloVe lacks, and the
padding index 0, keep all-zero rows. GloVe files cannot be downloaded here, so the
offline substitute is word2vec (Mikolov et al. 2013, skip-gram with negative sampling,
as implemented by gensim) trained on the **training documents only** - the training
split less its validation documents, labels unused - and frozen in the same way.

``embeddings`` (a 20 Newsgroups data option) chooses:

``"glove"``     ``glove.6B.<embed_dim>d.txt`` from the data directory (also inside
                ``glove.6B/`` or the official ``glove.6B.zip``); never downloaded;
``"word2vec"``  gensim word2vec on the training documents, settings :data:`WORD2VEC`;
``"random"``    no pre-trained vectors: the network learns its embedding from scratch;
``"auto"``      ``"glove"`` when such a file is in the data directory, else
                ``"word2vec"``; resolved before training, so a run records the choice.

Reproducibility: gensim seeds its initial vectors and its sampling from ``seed``; with one
worker thread (``workers=1``, used here) the result is deterministic on one machine and
library version (a test trains twice and compares bit for bit). Other CPUs or gensim/BLAS
versions may differ in the last bits; the matrix is therefore cached beside the decoded
arrays, keyed by the training documents, the vocabulary, the settings and the gensim
version, so that every run of a chapter uses the same vectors.
"""
from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path

import numpy as np

from ..checks import positive_int
from . import archives as ar

EMBEDDINGS = ("auto", "word2vec", "glove", "random")
GLOVE_URL = "https://nlp.stanford.edu/projects/glove/ (glove.6B.zip)"
GLOVE_ZIP = "glove.6B.zip"
#: gensim ``Word2Vec`` settings (its defaults except ``sg=1``: skip-gram) and the seed.
WORD2VEC = {"sg": 1, "window": 5, "negative": 5, "epochs": 5, "sample": 1e-3,
            "alpha": 0.025, "min_alpha": 1e-4, "seed": 1}
_INT_KEYS = ("sg", "window", "negative", "epochs", "seed")
MAX_SENTENCE = 10000  # gensim silently truncates longer "sentences"; longer documents are cut into pieces


def glove_name(embed_dim: int) -> str:
    return f"glove.6B.{embed_dim}d.txt"


def find_glove(root: Path, embed_dim: int) -> Path | None:
    """The GloVe 6B file of width ``embed_dim`` in the data directory (plain, in ``glove.6B/``, or the zip)."""
    name = glove_name(embed_dim)
    found = ar.find_first(root, name, f"glove.6B/{name}")
    if found is not None:
        return found
    archive = ar.find_first(root, GLOVE_ZIP, f"glove.6B/{GLOVE_ZIP}")
    if archive is not None:
        try:
            with zipfile.ZipFile(archive) as z:
                if name in z.namelist():
                    return archive
        except (zipfile.BadZipFile, OSError) as exc:
            raise ar.archive_error(archive, exc, GLOVE_URL) from exc
    return None


def check_options(embeddings, embed_dim, word2vec) -> dict:
    """ValueError naming a bad option; returns the word2vec settings with defaults filled in."""
    if embeddings not in EMBEDDINGS:
        raise ValueError(f"embeddings must be one of {', '.join(EMBEDDINGS)}; got {embeddings!r}")
    positive_int("embed_dim", embed_dim)
    if not isinstance(word2vec, dict) or set(word2vec) - set(WORD2VEC):
        raise ValueError(f"word2vec must be a dict with keys among {', '.join(WORD2VEC)}; got {word2vec!r}")
    params = {**WORD2VEC, **word2vec}
    for k, v in params.items():
        ok = not isinstance(v, bool) and isinstance(v, (int, float, np.integer, np.floating))
        if not ok or v < 0 or (k in _INT_KEYS and float(v) != int(v)) or (k == "sg" and v not in (0, 1)):
            raise ValueError(f"word2vec[{k!r}] must be a non-negative {'integer' if k in _INT_KEYS else 'number'}"
                             f"{' (0 or 1)' if k == 'sg' else ''}; got {v!r}")
    return {k: (int(v) if k in _INT_KEYS else float(v)) for k, v in params.items()}


def resolve(embeddings: str, embed_dim: int, root: Path) -> str:
    """``embeddings`` with ``"auto"`` replaced by ``"glove"`` (file present) or ``"word2vec"``."""
    if embeddings != "auto":
        return embeddings
    return "glove" if find_glove(root, embed_dim) is not None else "word2vec"


def describe(options: dict) -> str:
    """The word embeddings of a run in words, from its resolved 20 Newsgroups data options."""
    kind, dim = options.get("embeddings"), options.get("embed_dim")
    if kind == "word2vec":
        w = check_options(kind, dim, options.get("word2vec", {}))
        return (f"frozen word2vec embeddings ({dim}-d, {'skip-gram' if w['sg'] else 'CBOW'}, "
                f"{w['epochs']} epochs, seed {w['seed']}) pre-trained on the training documents only")
    if kind == "glove":
        return f"frozen GloVe 6B embeddings ({dim}-d)"
    if kind == "random":
        return f"word embeddings ({dim}-d) learned from scratch with the network"
    raise ValueError(f"options['embeddings'] must be a resolved choice (word2vec, glove, random); got {kind!r}")


def train_word2vec(token_lists: list[list[str]], embed_dim: int, keep=None, **settings):
    """gensim ``KeyedVectors`` trained on ``token_lists`` (one list per document).

    ``keep`` (a set of words) drops every other token first, so the model's vocabulary is
    exactly the kept words that occur; ``min_count=1`` and one worker thread (deterministic).
    """
    from gensim.models import Word2Vec

    params = {**WORD2VEC, **settings}
    docs = ([t for t in toks if t in keep] for toks in token_lists) if keep is not None else iter(token_lists)
    sentences = [d[i:i + MAX_SENTENCE] for d in docs for i in range(0, len(d), MAX_SENTENCE)]
    if not any(sentences):
        raise ValueError("word2vec needs at least one training token")
    model = Word2Vec(sentences=sentences, vector_size=int(embed_dim), min_count=1, workers=1,
                     **{k: params[k] for k in WORD2VEC})
    return model.wv


def word2vec_matrix(token_lists: list[list[str]], vocab: tuple[str, ...], embed_dim: int,
                    **settings) -> np.ndarray:
    """``len(vocab) x embed_dim`` float32: word2vec vector of each vocabulary word, row 0
    (padding) and words absent from ``token_lists`` zero."""
    wv = train_word2vec(token_lists, embed_dim, keep=set(vocab[1:]), **settings)
    out = np.zeros((len(vocab), embed_dim), np.float32)
    for i, w in enumerate(vocab[1:], 1):
        j = wv.key_to_index.get(w)
        if j is not None:
            out[i] = wv.vectors[j]
    return out


def read_glove(lines, vocab: tuple[str, ...], embed_dim: int) -> np.ndarray:
    """``len(vocab) x embed_dim`` float32 from GloVe text lines (``word v1 ... vD``, UTF-8).

    As the reference loader: rows of words GloVe lacks, and row 0 (padding), stay zero; a
    line whose vector is not ``embed_dim`` numbers raises ValueError naming its number.
    """
    index = {w: i for i, w in enumerate(vocab) if i > 0}
    out = np.zeros((len(vocab), embed_dim), np.float32)
    for n, line in enumerate(lines, 1):
        word, _, rest = line.rstrip("\n").partition(" ")
        i = index.get(word)
        if i is None:
            continue
        values = rest.split()
        if len(values) != embed_dim:
            raise ValueError(f"GloVe line {n} ({word!r}) has {len(values)} numbers, expected embed_dim={embed_dim}")
        out[i] = np.asarray(values, dtype=np.float32)
    return out


def glove_matrix(path: Path, vocab: tuple[str, ...], embed_dim: int) -> np.ndarray:
    """:func:`read_glove` of a ``.txt`` file or of the member ``glove.6B.<d>d.txt`` of the zip."""
    if path.suffix == ".zip":
        try:
            with zipfile.ZipFile(path) as z, z.open(glove_name(embed_dim)) as f:
                return read_glove(io.TextIOWrapper(f, encoding="utf-8"), vocab, embed_dim)
        except (zipfile.BadZipFile, EOFError, OSError) as exc:
            raise ar.archive_error(path, exc, GLOVE_URL) from exc
    with open(path, encoding="utf-8") as f:
        return read_glove(f, vocab, embed_dim)


def embedding_matrix(kind: str, root: Path, documents, vocab: tuple[str, ...], embed_dim: int,
                     word2vec: dict, documents_id: str) -> tuple[np.ndarray | None, str]:
    """(matrix or None for ``"random"``, a one-line note for the data set's provenance).

    ``documents()`` returns the training documents' token lists (never validation or test
    text); it is called only when the cache misses. The matrix is cached in the data
    cache under ``documents_id`` (which identifies those documents: source files,
    tokenisation, validation split), the vocabulary and the settings.
    """
    kind = resolve(kind, embed_dim, root)
    vocab_id = hashlib.sha256("\x1f".join(vocab).encode("utf-8", "surrogatepass")).hexdigest()
    if kind == "random":
        return None, f"word embeddings ({embed_dim}-d) learned from scratch with the network"
    if kind == "glove":
        path = find_glove(root, embed_dim)
        if path is None:
            raise ar.missing_data_error("GloVe embeddings", [glove_name(embed_dim), f"glove.6B/{GLOVE_ZIP}"],
                                        root, GLOVE_URL, "Or use embeddings='word2vec' (trained offline).")
        key = f"glove|{ar.fingerprint(path)}|{embed_dim}|{vocab_id}"
        note = f"frozen GloVe 6B {embed_dim}-d word embeddings ({path.name})"
    else:
        import gensim

        params = check_options("word2vec", embed_dim, word2vec)
        key = f"word2vec|{gensim.__version__}|{embed_dim}|{sorted(params.items())}|{vocab_id}|{documents_id}"
        note = (f"frozen word2vec word embeddings ({embed_dim}-d, {'skip-gram' if params['sg'] else 'CBOW'}, "
                f"gensim {gensim.__version__}, seed {params['seed']}) trained on the training documents "
                f"only, as an offline substitute for the papers' GloVe")
    fname = f"20news-emb-{hashlib.sha1(key.encode()).hexdigest()[:12]}.npz"
    cached = ar.load_cached(root, fname, key)
    if cached is not None:
        return cached["matrix"], note
    matrix = (glove_matrix(path, vocab, embed_dim) if kind == "glove"
              else word2vec_matrix(documents(), vocab, embed_dim, **params))
    ar.save_cached(root, fname, key, {"matrix": matrix})
    return matrix, note
