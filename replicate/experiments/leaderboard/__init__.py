"""The experiment chapter ``exp_leaderboard``: every method of the five papers under one protocol.

One module per role, as in every chapter (:mod:`replicate.comparison.chapter`); each is
imported when first reached (``rp.experiments.leaderboard.figures``).
"""
from ... import lazy_submodules

__getattr__, __dir__ = lazy_submodules(__name__, __path__)
