"""Which errors the command line reports as one line (``replicate: error: ...``) instead of
a traceback: the errors a user can fix."""
from __future__ import annotations

import sys


def is_user_error(err: BaseException) -> bool:
    """True for errors the user can fix, reported as one line without a traceback: bad
    input (ValueError), missing files (FileNotFoundError), a failing chapter, and a
    truncated or corrupted data file (``replicate.data.DataArchiveError``, a damaged run among
    them), and a library of an optional extra that is not installed
    (``replicate.extras.MissingExtraError``: the message names the extra)."""
    if isinstance(err, (ValueError, FileNotFoundError)):
        return True
    # the error classes exist only if their modules were imported: look them up, import nothing
    for module, name in (("replicate.runner", "ChapterError"), ("replicate.data.archives", "DataArchiveError"),
                         ("replicate.extras", "MissingExtraError")):
        mod = sys.modules.get(module)
        if mod is not None and isinstance(err, getattr(mod, name)):
            return True
    return False
