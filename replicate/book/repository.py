"""Where the book's source lives, for its repository and launch buttons (issue #32, item 3).

The buttons point at the repository the book was built from, or are left out: never at a
placeholder. :func:`repository` finds it: the setting ``REPLICATE_REPOSITORY`` (a GitHub URL
or ``owner/name``; ``none`` leaves the buttons out), else the checkout's ``origin`` remote
when that is a GitHub URL (https or ssh). :func:`effective_config` writes the book's
``_config.yml`` with that repository, or without the repository section, the repository
button and the launch buttons, for ``jupyter-book build --config``.
"""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

#: The setting that names the repository (``https://github.com/OWNER/NAME``, ``OWNER/NAME``,
#: or ``none``); read before the ``origin`` remote.
REPOSITORY_ENV = "REPLICATE_REPOSITORY"
#: The branch the buttons open (else the checkout's current branch, else ``main``).
BRANCH_ENV = "REPLICATE_REPOSITORY_BRANCH"

#: The launch buttons a book with a repository gets: Binder, in JupyterLab.
LAUNCH_BUTTONS = {"binderhub_url": "https://mybinder.org", "notebook_interface": "jupyterlab"}

_GITHUB = re.compile(r"^(?:https?://github\.com/|git@github\.com:|ssh://git@github\.com/)"
                     r"(?P<owner>[\w.-]+)/(?P<name>[\w.-]+?)(?:\.git)?/?$")
_SHORT = re.compile(r"^(?P<owner>[\w.-]+)/(?P<name>[\w.-]+)$")


def github_url(remote: str) -> str | None:
    """``https://github.com/OWNER/NAME`` of a GitHub remote URL (https, ``git@github.com:``
    or ``ssh://``, with or without ``.git``) or of ``OWNER/NAME``; None for anything else.

    >>> github_url("git@github.com:someone/focal-book.git")
    'https://github.com/someone/focal-book'
    >>> github_url("/srv/git/focal-book") is None
    True
    """
    m = _GITHUB.match(remote.strip()) or _SHORT.match(remote.strip())
    return f"https://github.com/{m['owner']}/{m['name']}" if m else None


def _git(root: Path, *args: str) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else None


def repository(root: Path) -> tuple[str | None, str, str]:
    """``(url, branch, why)``: the GitHub repository the buttons open (None: leave them out),
    its branch, and where the answer came from. ValueError, naming the setting, when
    :data:`REPOSITORY_ENV` is neither a GitHub URL, ``OWNER/NAME`` nor ``none``."""
    branch = os.environ.get(BRANCH_ENV) or _git(root, "symbolic-ref", "--short", "HEAD") or "main"
    setting = os.environ.get(REPOSITORY_ENV, "").strip()
    if setting:
        if setting.lower() == "none":
            return None, branch, f"{REPOSITORY_ENV}=none"
        url = github_url(setting)
        if url is None:
            raise ValueError(f"{REPOSITORY_ENV} must be a GitHub URL, OWNER/NAME or none; got {setting!r}")
        return url, branch, REPOSITORY_ENV
    remote = _git(root, "remote", "get-url", "origin")
    if remote is None:
        return None, branch, "no origin remote"
    url = github_url(remote)
    return (url, branch, "the origin remote") if url else (None, branch, "the origin remote is not on GitHub")


def effective_config(source: Path, target: Path, url: str | None, branch: str = "main") -> Path:
    """Write ``source`` (the book's ``_config.yml``) to ``target`` with the repository
    section set to ``url`` and ``branch``, the repository button and the Binder launch
    buttons (:data:`LAUNCH_BUTTONS`), or, when ``url`` is None, without the repository
    section, the repository, issues and edit buttons and the launch buttons. Returns
    ``target``."""
    import yaml

    cfg = yaml.safe_load(Path(source).read_text()) or {}
    html = dict(cfg.get("html") or {})
    if url is None:
        cfg.pop("repository", None)
        cfg.pop("launch_buttons", None)
        for key in ("use_repository_button", "use_issues_button", "use_edit_page_button"):
            html[key] = False
    else:
        cfg["repository"] = {"url": url, "branch": branch, "path_to_book": ""}
        cfg["launch_buttons"] = dict(LAUNCH_BUTTONS)
        html["use_repository_button"] = True
    cfg["html"] = html
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(yaml.safe_dump(cfg, sort_keys=False, allow_unicode=True))
    return target
