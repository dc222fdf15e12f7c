"""Word embeddings for the 20 Newsgroups CNN (replicate.data.embeddings): word2vec trained on
the training documents only, GloVe files in the official text format, frozen in the network."""
from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from replicate import runs
from replicate.data import embeddings as E
from replicate.data import load, resolve_options
from replicate.data.base import split_indices
from replicate.data.text import tokenize
from replicate.models import get_model
from replicate.training import TrainSettings, train

REPO = Path(__file__).resolve().parent.parent


# decoded data and vectors of these generated corpora never mix with a real cache
pytestmark = pytest.mark.usefixtures("private_cache")     # tests/conftest.py


# ---------------------------------------------------------------- word2vec on synthetic text
def topic_corpus(n_docs=300, length=40, seed=0):
    """Documents drawn from one of two disjoint word sets: words co-occur only within a topic."""
    rng = np.random.default_rng(seed)
    topics = [[f"a{i}" for i in range(8)], [f"b{i}" for i in range(8)]]
    return [list(rng.choice(topics[d % 2], size=length)) for d in range(n_docs)], topics


def cosine(u, v):
    return float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))


def test_words_that_cooccur_are_closer_than_words_that_never_do():
    docs, (a, b) = topic_corpus()
    wv = E.train_word2vec(docs, 16, epochs=20)
    same = [cosine(wv[x], wv[y]) for t in (a, b) for x in t for y in t if x < y]
    cross = [cosine(wv[x], wv[y]) for x in a for y in b]
    assert min(same) > max(cross)


def test_word2vec_vocabulary_is_the_training_vocabulary_and_training_is_deterministic():
    docs, _ = topic_corpus(n_docs=40)
    docs[0] = docs[0] + ["rare"]
    wv = E.train_word2vec(docs, 8)
    assert set(wv.index_to_key) == {w for d in docs for w in d}       # min_count 1: every training word
    kept = E.train_word2vec(docs, 8, keep={"a0", "a1", "b3"})
    assert set(kept.index_to_key) == {"a0", "a1", "b3"}
    again = E.train_word2vec(docs, 8)
    assert np.array_equal(wv.vectors, again.vectors)                  # one worker, fixed seed: bit for bit
    assert not np.array_equal(wv.vectors, E.train_word2vec(docs, 8, seed=2).vectors)


def test_word2vec_vectors_do_not_depend_on_the_string_hash_seed():
    """The cache key assumes that the same documents give the same vectors in any process."""
    code = ("import hashlib, numpy as np; from replicate.data import embeddings as E; "
            "rng = np.random.default_rng(0); "
            "docs = [list(rng.choice([f'w{i}' for i in range(30)], size=50)) for _ in range(100)]; "
            "m = E.word2vec_matrix(docs, tuple(['<pad>'] + [f'w{i}' for i in range(30)]), 8); "
            "print(hashlib.sha256(m.tobytes()).hexdigest())")
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300,
                           cwd=REPO, env={**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO)}).stdout for seed in ("1", "2")}
    assert len(outs) == 1 and len(outs.pop().strip()) == 64


def test_word2vec_matrix_rows_follow_the_vocabulary():
    docs, _ = topic_corpus(n_docs=40)
    vocab = ("<pad>", "a1", "never_seen", "b2")
    m = E.word2vec_matrix(docs, vocab, 8)
    wv = E.train_word2vec(docs, 8, keep=set(vocab[1:]))
    assert m.shape == (4, 8) and m.dtype == np.float32
    assert not m[0].any() and not m[2].any()                           # padding and unseen words: zero
    assert np.array_equal(m[1], wv["a1"]) and np.array_equal(m[3], wv["b2"])


def test_long_documents_are_not_truncated(monkeypatch):
    seen = []

    class Spy:
        def __init__(self, sentences, **kw):
            seen.extend(sentences)
            self.wv = None

    import gensim.models
    monkeypatch.setattr(gensim.models, "Word2Vec", Spy)
    E.train_word2vec([["w"] * (E.MAX_SENTENCE + 3)], 4)
    assert [len(s) for s in seen] == [E.MAX_SENTENCE, 3]


# ---------------------------------------------------------------- GloVe text format
def glove_text(words, dim, seed=0):
    rng = np.random.default_rng(seed)
    vecs = rng.normal(size=(len(words), dim)).astype(np.float32)
    lines = [w + " " + " ".join(f"{x:.6f}" for x in v) for w, v in zip(words, vecs)]
    return "\n".join(lines) + "\n", {w: np.array([float(f"{x:.6f}") for x in v], np.float32)
                                     for w, v in zip(words, vecs)}


def test_glove_reader_reads_the_official_format():
    text, vecs = glove_text(["the", ",", "café", "dog"], 5)
    vocab = ("<pad>", "dog", "missing", "the", "café")
    m = E.read_glove(io.StringIO(text), vocab, 5)
    assert m.shape == (5, 5) and m.dtype == np.float32
    assert not m[0].any() and not m[2].any()                           # as the reference: zeros
    for i, w in enumerate(vocab):
        if w in vecs:
            np.testing.assert_array_equal(m[i], vecs[w])
    with pytest.raises(ValueError, match="line 1 .* expected embed_dim=4"):
        E.read_glove(io.StringIO("dog 1 2 3 4 5\n"), vocab, 4)


def test_glove_found_as_text_in_a_folder_or_in_the_zip(tmp_path):
    text, vecs = glove_text(["the", "dog"], 3)
    vocab = ("<pad>", "the", "dog")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "glove.6B.3d.txt").write_text(text, encoding="utf-8")
    (tmp_path / "b" / "glove.6B").mkdir(parents=True)
    (tmp_path / "b" / "glove.6B" / "glove.6B.3d.txt").write_text(text, encoding="utf-8")
    (tmp_path / "c").mkdir()
    with zipfile.ZipFile(tmp_path / "c" / "glove.6B.zip", "w") as z:
        z.writestr("glove.6B.3d.txt", text)
    for d in "abc":
        path = E.find_glove(tmp_path / d, 3)
        assert path is not None and E.find_glove(tmp_path / d, 50) is None
        np.testing.assert_array_equal(E.glove_matrix(path, vocab, 3)[2], vecs["dog"])
        assert E.resolve("auto", 3, tmp_path / d) == "glove"
    (tmp_path / "d").mkdir()
    assert E.resolve("auto", 3, tmp_path / "d") == "word2vec"
    with pytest.raises(FileNotFoundError, match="glove.6B.3d.txt"):
        E.embedding_matrix("glove", tmp_path / "d", list, vocab, 3, {}, "docs")


# ---------------------------------------------------------------- through data.load
NEWS = {
    "train": {"comp.graphics": ["H: a\n\nrender the image pixel", "H: b\n\nthe pixel image render",
                                "H: c\n\nvalidationword image"],
              "alt.atheism": ["H: d\n\ngod the belief", "H: e\n\nbelief god the faith"]},
    "test": {"comp.graphics": ["H: f\n\ntestword pixel"], "alt.atheism": ["H: g\n\ngod testword"]},
}


def write_news(path: Path) -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for split, groups in NEWS.items():
            for g, docs in groups.items():
                for i, doc in enumerate(docs):
                    data = doc.encode("latin-1")
                    info = tarfile.TarInfo(f"20news-bydate-{split}/{g}/{51000 + i}")
                    info.size = len(data)
                    tf.addfile(info, io.BytesIO(data))
    return path


@pytest.fixture
def news(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    write_news(data / "20news-bydate.tar.gz")
    return data


def test_embeddings_see_the_training_documents_only(news, monkeypatch):
    """The word2vec corpus and the vocabulary are the training documents less the validation
    documents; no validation or test word reaches them."""
    seen = []
    real = E.word2vec_matrix
    monkeypatch.setattr(E, "word2vec_matrix", lambda docs, *a, **k: seen.append(docs) or real(docs, *a, **k))
    s = load("20newsgroups", data_dir=news, val_size=1, split_seed=3, download=False, max_len=4,
             embeddings="word2vec", embed_dim=6)
    # load_files order: alt.atheism (2 docs), comp.graphics (3 docs), files sorted within a folder
    texts = NEWS["train"]["alt.atheism"] + NEWS["train"]["comp.graphics"]
    train_idx, val_idx = split_indices(np.array([0, 0, 1, 1, 1]), "reference", 1, 3)
    expect = [tokenize(texts[i]) for i in train_idx]
    assert seen == [expect]
    words = {w for d in expect for w in d}
    assert set(s.info.vocab[1:]) == words
    held_out = set(tokenize(texts[val_idx[0]])) - words
    assert "testword" not in s.info.vocab and held_out.isdisjoint(s.info.vocab)
    assert s.info.embedding.shape == (len(s.info.vocab), 6) and not s.info.embedding[0].any()
    assert s.info.options["embeddings"] == "word2vec" and "training documents only" in s.info.notes[0]
    # a second load reads the cached vectors instead of training again
    again = load("20newsgroups", data_dir=news, val_size=1, split_seed=3, download=False, max_len=4,
                 embeddings="word2vec", embed_dim=6)
    assert len(seen) == 1 and np.array_equal(again.info.embedding, s.info.embedding)


def test_glove_file_in_the_data_directory_is_used_by_default(news):
    text, vecs = glove_text(["god", "image", "the"], 4)
    assert load("20newsgroups", data_dir=news, download=False, max_len=4, embed_dim=4,
                val_size=1).info.options["embeddings"] == "word2vec"
    (news / "glove.6B.4d.txt").write_text(text, encoding="utf-8")
    s = load("20newsgroups", data_dir=news, download=False, max_len=4, embed_dim=4, val_size=1)
    assert s.info.options["embeddings"] == "glove" and "GloVe" in s.info.notes[0]
    ids = {w: i for i, w in enumerate(s.info.vocab)}
    np.testing.assert_array_equal(s.info.embedding[ids["god"]], vecs["god"])
    assert not s.info.embedding[ids["belief"]].any()
    assert load("20newsgroups", data_dir=news, download=False, max_len=4, embeddings="random",
                val_size=1).info.embedding is None


def test_the_choice_is_part_of_the_run_key(news, monkeypatch):
    monkeypatch.setenv("REPLICATE_DATA", str(news))
    cfg = runs.RunConfig("20newsgroups", profile="cpu")
    offline = cfg.resolve()["data"]
    assert offline["embeddings"] == "word2vec" and offline["word2vec"] == E.WORD2VEC
    dim = offline["embed_dim"]
    (news / f"glove.6B.{dim}d.txt").write_text(glove_text(["god"], dim)[0], encoding="utf-8")
    assert cfg.resolve()["data"]["embeddings"] == "glove"
    keys = {cfg.key, *(cfg.replace(data_params={"embeddings": e}).key for e in ("word2vec", "random"))}
    assert len(keys) == 3
    assert cfg.replace(data_params={"embeddings": "word2vec"}).key == \
        cfg.replace(data_params={"embeddings": "word2vec", "word2vec": {"sg": 1}}).key


@pytest.mark.parametrize("opts, message", [
    ({"embeddings": "bert"}, "embeddings must be one of auto, word2vec, glove, random"),
    ({"embed_dim": 0}, "embed_dim must be a positive integer"),
    ({"word2vec": {"size": 3}}, "word2vec must be a dict with keys among sg, window"),
    ({"word2vec": {"sg": 2}}, r"word2vec\['sg'\] must be a non-negative integer \(0 or 1\)"),
    ({"word2vec": {"window": 2.5}}, r"word2vec\['window'\] must be a non-negative integer"),
])
def test_bad_options_fail_before_any_work(tmp_path, opts, message):
    with pytest.raises(ValueError, match=message):
        resolve_options("20newsgroups", {"embeddings": "auto", "embed_dim": 100, "word2vec": {}, **opts},
                        tmp_path / "nothing-here")
    with pytest.raises(ValueError, match=message):
        runs.RunConfig("20newsgroups", data_params=opts).resolve()


# ---------------------------------------------------------------- frozen in the network
def test_pretrained_embedding_is_frozen_and_gets_no_update(news):
    s = load("20newsgroups", data_dir=news, split="none", download=False, max_len=30,
             embeddings="word2vec", embed_dim=6)
    s.val = s.test
    vectors = torch.from_numpy(s.info.embedding)
    torch.manual_seed(0)
    model = get_model("text_cnn", 2, vocab_size=len(s.info.vocab), embedding=vectors, embed_dim=6,
                      channels=4, hidden=4)
    assert not model.embedding.weight.requires_grad
    conv_before = model.conv1.weight.detach().clone()
    train(model, torch.nn.CrossEntropyLoss(reduction="sum"), s,
          TrainSettings(epochs=2, batch_size=2, optimizer="adam", lr=1e-2, weight_decay=0.0, milestones=(),
                        clip_grad_norm=None, augment=False), device="cpu", progress="none")
    assert torch.equal(model.embedding.weight, vectors)                # frozen: unchanged by Adam
    assert model.embedding.weight.grad is None
    assert not torch.equal(model.conv1.weight, conv_before)            # the rest of the network learns
    learned = get_model("text_cnn", 2, vocab_size=len(s.info.vocab), embedding=vectors, embed_dim=6,
                        freeze_embedding=False)
    assert learned.embedding.weight.requires_grad
