"""The book's repository and launch buttons (issue #32, item 3): they open the repository the
book was built from, found from a setting or the checkout's origin remote, or are left out."""
from __future__ import annotations

import subprocess

import pytest
import yaml

from replicate import config
from replicate.book import repository


@pytest.mark.parametrize("remote", ["https://github.com/someone/focal-book", "https://github.com/someone/focal-book.git",
                                    "git@github.com:someone/focal-book.git", "ssh://git@github.com/someone/focal-book",
                                    "someone/focal-book"])
def test_github_remotes_become_the_repository_url(remote):
    assert repository.github_url(remote) == "https://github.com/someone/focal-book"


@pytest.mark.parametrize("remote", ["/srv/git/focal-book", "https://gitlab.com/someone/focal-book", "file:///x/y", ""])
def test_other_remotes_have_no_url(remote):
    assert repository.github_url(remote) is None


def _git(path, *args):
    subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True)


def test_the_origin_remote_or_the_setting_decides(tmp_path, monkeypatch):
    monkeypatch.delenv(repository.REPOSITORY_ENV, raising=False)
    monkeypatch.delenv(repository.BRANCH_ENV, raising=False)
    _git(tmp_path, "init", "-q", "-b", "pages")
    assert repository.repository(tmp_path) == (None, "pages", "no origin remote")
    _git(tmp_path, "remote", "add", "origin", "/srv/git/focal-book")
    assert repository.repository(tmp_path) == (None, "pages", "the origin remote is not on GitHub")
    _git(tmp_path, "remote", "set-url", "origin", "git@github.com:someone/focal-book.git")
    assert repository.repository(tmp_path) == ("https://github.com/someone/focal-book", "pages", "the origin remote")
    monkeypatch.setenv(repository.REPOSITORY_ENV, "other/fork")
    monkeypatch.setenv(repository.BRANCH_ENV, "main")
    assert repository.repository(tmp_path) == ("https://github.com/other/fork", "main", repository.REPOSITORY_ENV)
    monkeypatch.setenv(repository.REPOSITORY_ENV, "none")
    assert repository.repository(tmp_path)[0] is None
    monkeypatch.setenv(repository.REPOSITORY_ENV, "not a repository")
    with pytest.raises(ValueError, match="^REPLICATE_REPOSITORY must be a GitHub URL, OWNER/NAME or none; got"):
        repository.repository(tmp_path)


def test_the_effective_config_adds_or_leaves_out_the_buttons(tmp_path):
    source = config.repo_root() / "_config.yml"
    shipped = yaml.safe_load(source.read_text())
    assert "repository" not in shipped and "launch_buttons" not in shipped          # no placeholder shipped
    assert shipped["html"]["use_repository_button"] is False
    with_url = yaml.safe_load(repository.effective_config(source, tmp_path / "a.yml",
                                                          "https://github.com/someone/focal-book", "main").read_text())
    assert with_url["repository"] == {"url": "https://github.com/someone/focal-book", "branch": "main",
                                      "path_to_book": ""}
    assert with_url["launch_buttons"] == repository.LAUNCH_BUTTONS and with_url["html"]["use_repository_button"]
    without = yaml.safe_load(repository.effective_config(source, tmp_path / "b.yml", None).read_text())
    assert "repository" not in without and "launch_buttons" not in without
    assert not any(without["html"].get(k) for k in ("use_repository_button", "use_issues_button",
                                                    "use_edit_page_button"))
    assert {k: v for k, v in with_url.items() if k not in ("repository", "launch_buttons", "html")} == \
        {k: v for k, v in shipped.items() if k != "html"}                          # everything else as shipped
