"""The papers' vague words: moved to :mod:`replicate.claims.wording` (this name is kept
while the chapters' old rule modules still import it)."""
from ..claims.wording import *  # noqa: F401,F403
from ..claims.wording import QUANTIFIERS, needed, near_one_text, is_one_text  # noqa: F401
