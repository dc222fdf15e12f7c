"""What a loaded data set is, in words and numbers a chapter can show.

- :func:`describe_copy` -- which copy of a data set was loaded (official files, a copy with
  caveats such as the JPEG q75 re-encoding of CIFAR-10, or generated test data) and what its
  numbers can be compared with, from :class:`~replicate.data.base.DatasetInfo`'s
  ``display_name``, ``generated`` and ``notes``, so that prose glued from it is true for
  whichever copy the data directory holds;
- :func:`split_sizes` -- the number of examples in each split.
"""
from __future__ import annotations

from .base import DatasetInfo, Splits

__all__ = ["describe_copy", "split_sizes"]


def describe_copy(info: DatasetInfo) -> str:
    """Sentences naming the copy behind ``info`` and what its numbers mean.

    Generated test data (``info.generated``): its numbers test the code only. A copy with
    caveats (``info.notes``, e.g. a lossy re-encoding): its numbers are not numerically
    comparable to the papers'. Neither: the official files. Every note follows verbatim.
    """
    if not isinstance(info, DatasetInfo):
        raise ValueError(f"info must be a replicate.data.DatasetInfo; got {type(info).__name__}")
    if info.generated:
        what = ("which is not the real data set: its numbers test the code and say nothing about "
                "the papers' claims")
    elif info.notes:
        what = ("a copy that differs from the official files: its numbers are not numerically "
                "comparable to the papers'")
    else:
        what = "the official files, as the papers used them"
    text = f"{info.display_name}, {what}."
    if info.notes:
        text += " Its loader notes: " + "; ".join(n.rstrip(".") for n in info.notes) + "."
    return text


def split_sizes(splits: Splits):
    """A DataFrame with one row per split (train, validation, test) and its number of examples."""
    import pandas as pd

    if not isinstance(splits, Splits):
        raise ValueError(f"splits must be a replicate.data.Splits; got {type(splits).__name__}")
    return pd.DataFrame({"split": ["train", "validation", "test"],
                         "images" if splits.info.kind == "image" else "documents":
                             [len(splits.train[1]), len(splits.val[1]), len(splits.test[1])]})
