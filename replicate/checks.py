"""Argument checks shared by the modules: one wording for one kind of bad input."""
from __future__ import annotations

import numpy as np


def positive_int(name: str, value) -> int:
    """``value`` as an int if it is an integer >= 1 (not a bool); else ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)
