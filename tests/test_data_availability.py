"""Which data sets are at hand before anything runs (replicate.data.availability), and
``replicate book``'s check that says, in one line for all of them, which are missing before
any chapter executes."""
from __future__ import annotations


import pytest

from replicate import runner
from replicate.data import availability as av
from replicate.data import generated


@pytest.fixture
def empty(sandbox):
    """An empty data directory, downloads off, and an empty cache (conftest's ``sandbox``)."""
    return sandbox


def never(url):
    raise AssertionError(f"the network was probed for {url}")


def test_present_files_are_found_without_decoding(empty):
    generated.write_cifar10(empty, n_train=10, n_test=5)
    generated.write_20newsgroups(empty, train_per_group=1, test_per_group=1)
    assert av.status("cifar10", probe=never)[0] == av.PRESENT
    assert av.status("cifar10c", probe=never)[0] == av.PRESENT
    assert av.status("20newsgroups", probe=never)[0] == av.PRESENT
    # the JPEG copy is another file: asked for explicitly, it is missing and never downloaded
    state, detail = av.status("cifar10", options={"source": "jpeg"}, probe=never)
    assert state == av.MISSING and "cifar10-jpeg.tar.gz" in detail and "not downloadable" in detail
    assert av.missing(["cifar10", "20newsgroups"], probe=never) == {}


def test_missing_offline_generated_or_unreachable_and_downloadable(empty, monkeypatch):
    state, detail = av.status("cifar100", probe=never)
    assert state == av.MISSING and "REPLICATE_OFFLINE is set" in detail and "cifar-100-python/" in detail
    monkeypatch.delenv("REPLICATE_OFFLINE")
    state, detail = av.status("svhn", probe=lambda url: False)
    assert state == av.MISSING and "cannot reach ufldl.stanford.edu" in detail
    assert av.status("svhn", probe=lambda url: True)[0] == av.DOWNLOADABLE
    (empty / "GENERATED_TEST_DATA.txt").write_text("generated")
    state, detail = av.status("svhn", probe=never)
    assert state == av.MISSING and "generated test data" in detail


def test_glove_embeddings_asked_for_but_absent_are_missing(empty):
    generated.write_20newsgroups(empty, train_per_group=1, test_per_group=1)
    state, detail = av.status("20newsgroups", options={"embeddings": "glove", "embed_dim": 50}, probe=never)
    assert state == av.MISSING and "glove.6B.50d.txt" in detail


def test_word2vec_without_gensim_or_glove_is_missing(empty, monkeypatch):
    """20 Newsgroups with the default embeddings needs GloVe in the data or gensim (a lean
    install, or a GPU machine, may have neither): missing, said before a run starts."""
    import importlib.util

    (empty / "20news-bydate.tar.gz").write_bytes(b"archive")
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "gensim" else real(name, *a))
    for options in ({}, {"embeddings": "word2vec"}):
        state, detail = av.status("20newsgroups", options=options, probe=never)
        assert state == av.MISSING and "the gensim package for word2vec" in detail
    assert av.status("20newsgroups", options={"embeddings": "random"}, probe=never)[0] == av.PRESENT
    (empty / "glove.6B.100d.txt").write_text("the 0.1\n")
    assert av.status("20newsgroups", probe=never)[0] == av.PRESENT       # auto picks GloVe


def test_require_says_every_missing_data_set_in_one_line(empty):
    with pytest.raises(FileNotFoundError) as err:
        av.require({"cifar10": "exp_a: 3 runs to train", "20newsgroups": ({}, "exp_b"), "svhn": ""},
                   purpose="replicate book", probe=never)
    text = str(err.value)
    assert "\n" not in text and text.startswith("replicate book: 3 data sets missing before anything ran")
    for part in ("CIFAR-10: expected", "needed by exp_a: 3 runs to train", "20 Newsgroups", "needed by exp_b", "SVHN",
                 str(empty)):
        assert part in text
    with pytest.raises(ValueError, match="data set must be one of"):
        av.require(["imagenet"])
    with pytest.raises(ValueError, match="name must be one of"):
        av.status("imagenet")


def test_needed_by_runs_counts_the_runs_per_data_set():
    from replicate.runs import RunConfig

    cfgs = [RunConfig("cifar10", "focal", {"gamma": g}, profile="smoke") for g in (1, 2, 3)]
    cfgs.append(RunConfig("20newsgroups", "cross_entropy", {}, profile="smoke"))
    needs = av.needed_by_runs(cfgs, "exp_x")
    assert needs["cifar10"][1] == "exp_x: 3 runs to train" and needs["20newsgroups"][1] == "exp_x: 1 run to train"
    assert needs["cifar10"][0]["source"] == "auto"


# ----------------------------------------------------------------------------- replicate book
CHAPTER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
replicate:
  data_parameters: [dataset]
---

# Shows data

```{code-cell} ipython3
:tags: [parameters]

profile = "cpu"
dataset = "cifar10"
```

```{code-cell} ipython3
print(dataset)
```
"""


def test_a_chapter_declares_the_data_it_shows(tmp_path):
    src = tmp_path / "shows.md"
    src.write_text(CHAPTER)
    assert runner.data_needs(src) == {"cifar10": ({}, "shows (shows the data)")}
    assert runner.data_needs(src, {"dataset": "svhn"}) == {"svhn": ({}, "shows (shows the data)")}
    bad = tmp_path / "bad.md"
    bad.write_text(CHAPTER.replace("data_parameters: [dataset]", "data_parameters: [data]"))
    with pytest.raises(ValueError, match="lists data parameter 'data'"):
        runner.data_needs(bad)


def test_the_protocol_chapter_needs_its_data_set_and_theory_chapters_none():
    chapters = {c.name: c for c in runner.toc_chapters()}
    assert set(runner.data_needs(chapters["protocol"].source)) == {"cifar10"}
    assert runner.data_needs(chapters["theory_focal_loss"].source) == {}


def test_book_refuses_missing_data_in_one_line_before_any_chapter_executes(tmp_path, empty, monkeypatch):
    srcs = []
    for name, ds in (("one", "cifar10"), ("two", "svhn"), ("three", "cifar10")):
        src = tmp_path / f"{name}.md"
        src.write_text(CHAPTER.replace('dataset = "cifar10"', f'dataset = "{ds}"'))
        srcs.append(runner.Chapter(name, src, tmp_path / "book" / "chapters" / f"{name}.ipynb"))
    executed = []
    monkeypatch.setenv(runner.BOOK_DIR_ENV, str(tmp_path))       # build sets it: restored after the test
    monkeypatch.setattr(runner.book, "toc_chapters", lambda root=None: srcs)
    monkeypatch.setattr(runner.book, "execute", lambda *a, **k: executed.append(a))
    monkeypatch.setattr(runner.book, "build_html", lambda *a, **k: executed.append("html"))
    with pytest.raises(FileNotFoundError) as err:
        runner.build(workdir=tmp_path / "work", log=lambda *_: None)
    text = str(err.value)
    assert executed == [] and "\n" not in text
    assert text.startswith("replicate book: 2 data sets missing before anything ran")
    assert "needed by one (shows the data), three (shows the data)" in text and "SVHN" in text
    generated.write_cifar10(empty, n_train=10, n_test=5)
    generated.write_svhn(empty, n_train=10, n_test=5)
    runner.build(workdir=tmp_path / "work", log=lambda *_: None)
    assert len(executed) == 4 and executed[-1] == "html"
