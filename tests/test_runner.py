"""The chapter runner: parameter validation, provenance, skipping, failures, CLI errors."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from replicate import cli, config, runner

CHAPTER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# A tiny chapter

```{code-cell} ipython3
:tags: [parameters]

profile = "cpu"
n = 3
scale = 0.5
label = "x"
```

```{code-cell} ipython3
result = n * scale
print(profile, result, label)
```
"""

FAILING = CHAPTER.replace("result = n * scale", "result = n / 0")


@pytest.fixture()
def chapter(tmp_path):
    src = tmp_path / "tiny.md"
    src.write_text(CHAPTER)
    return src


def test_default_parameters_are_read_from_the_parameters_cell(chapter):
    nb = runner.read_notebook(chapter)
    assert runner.default_parameters(nb) == {"profile": "cpu", "n": 3, "scale": 0.5, "label": "x"}
    assert nb.metadata["kernelspec"]["name"] == "python3"


@pytest.mark.parametrize("text,value", [("3", 3), ("0.25", 0.25), ("[1, 2]", [1, 2]), ("True", True),
                                        ("cifar10", "cifar10")])
def test_parse_value(text, value):
    assert runner.parse_value(text) == value


def test_unknown_parameter_lists_allowed_names():
    with pytest.raises(ValueError, match=r"no parameter 'epochs'.*allowed parameters: profile \(str\), n \(int\)"):
        runner.validate_parameters("tiny", {"profile": "cpu", "n": 3}, {"epochs": 5}, None)


def test_wrong_type_names_parameter_and_expected_type():
    with pytest.raises(ValueError, match=r"parameter 'n' expects int"):
        runner.validate_parameters("tiny", {"profile": "cpu", "n": 3}, {"n": "many"}, None)
    # an int is accepted where the default is a float
    assert runner.validate_parameters("tiny", {"scale": 0.5}, {"scale": 2}, None) == {"scale": 2}


def test_unknown_profile_lists_profiles():
    with pytest.raises(ValueError, match=r"unknown profile 'huge'; allowed profiles: smoke, cpu, gpu, paper"):
        runner.validate_parameters("tiny", {"profile": "cpu"}, {}, "huge")


@pytest.mark.slow
def test_execute_records_provenance_hides_injected_cell_and_skips_when_unchanged(chapter, tmp_path):
    target = tmp_path / "out" / "tiny.ipynb"
    logs: list[str] = []
    runner.execute(chapter, target, parameters={"n": "4"}, profile="smoke", log=logs.append)
    nb = json.loads(target.read_text())
    meta = nb["metadata"]["replicate"]
    assert meta["parameters"] == {"profile": "smoke", "n": 4, "scale": 0.5, "label": "x"}
    assert meta["profile"] == "smoke"
    for key in ("commit", "package_hash", "versions", "device", "wall_time_s", "input_hash", "timestamp"):
        assert key in meta
    injected = [c for c in nb["cells"] if "injected-parameters" in c["metadata"].get("tags", [])]
    assert len(injected) == 1 and "hide-cell" in injected[0]["metadata"]["tags"]
    out = "".join("".join(o.get("text", "")) for c in nb["cells"] if c["cell_type"] == "code"
                  for o in c.get("outputs", []))
    assert "smoke 2.0 x" in out
    mtime = target.stat().st_mtime_ns
    runner.execute(chapter, target, parameters={"n": "4"}, profile="smoke", log=logs.append)
    assert "skipped" in logs[-1] and target.stat().st_mtime_ns == mtime
    runner.execute(chapter, target, parameters={"n": "5"}, profile="smoke", log=logs.append)
    assert "skipped" not in logs[-1]


@pytest.mark.slow
def test_failing_cell_names_chapter_and_error_and_leaves_no_output(tmp_path):
    src = tmp_path / "broken.md"
    src.write_text(FAILING)
    target = tmp_path / "broken.ipynb"
    with pytest.raises(runner.ChapterError, match=r"chapter 'broken' failed in cell \d+: ZeroDivisionError"):
        runner.execute(src, target, log=lambda *_: None)
    assert not target.exists() and not list(tmp_path.glob(".broken*"))


def test_cli_rejects_bad_parameter_before_executing(chapter, capsys, tmp_path):
    out = tmp_path / "never.ipynb"
    code = cli.main(["run", str(chapter), "-p", "epochs", "3", "--output", str(out)])
    assert code == 2 and not out.exists()
    assert "no parameter 'epochs'" in capsys.readouterr().err
    code = cli.main(["run", str(chapter), "--profile", "huge", "--output", str(out)])
    assert code == 2 and "allowed profiles" in capsys.readouterr().err


def test_cli_unknown_notebook_lists_chapters(capsys):
    assert cli.main(["run", "no_such_chapter"]) == 2
    assert "chapters:" in capsys.readouterr().err


def test_toc_chapters_map_to_existing_sources():
    chapters = runner.toc_chapters()
    assert chapters, "the table of contents lists no executable chapter"
    for ch in chapters:
        assert ch.source.exists() and ch.source.parent.name == "notebooks"
        assert ch.target.parent == config.repo_root() / "book" / "chapters"


def test_console_script_help():
    proc = subprocess.run([sys.executable, "-m", "replicate", "--help"], capture_output=True, text=True,
                          cwd=Path(config.repo_root()))
    assert proc.returncode == 0
    for sub in ("run", "book", "train", "runs"):
        assert sub in proc.stdout


def test_provenance_table_reads_executed_chapters_and_keeps_the_dirty_mark(tmp_path, monkeypatch):
    import nbformat

    chapters = tmp_path / "book" / "chapters"
    chapters.mkdir(parents=True)
    names = [ch.name for ch in runner.toc_chapters()]
    meta = {"profile": "cpu", "device": "cpu (2 threads)", "wall_time_s": 12.345,
            "commit": "0123456789abcdef0123-dirty", "package_hash": "feed", "timestamp": "2026-01-01T00:00:00"}
    for name in names:
        nb = nbformat.v4.new_notebook()
        nb.metadata["replicate"] = dict(meta, always_execute=(name == "reproducibility"))
        nbformat.write(nb, chapters / f"{name}.ipynb")
    monkeypatch.setenv(runner.BOOK_DIR_ENV, str(tmp_path))
    table = runner.provenance_table()
    assert list(table["chapter"]) == [n for n in names if n != "reproducibility"]
    assert set(table["commit"]) == {"0123456789ab-dirty"} and set(table["wall time (s)"]) == {12.3}


@pytest.mark.slow
def test_executing_a_chapter_prints_no_kernel_chatter(chapter, tmp_path, capfd):
    """The kernel talks over IPC sockets and is not interrupted at shutdown: neither "Kernel
    is running over TCP without encryption" nor "KeyboardInterrupt caught in kernel"."""
    for i in range(3):
        runner.execute(chapter, tmp_path / f"quiet{i}.ipynb", log=lambda *_: None)
    out, err = capfd.readouterr()
    assert "without encryption" not in out + err and "KeyboardInterrupt" not in out + err
    assert "cpu 1.5 x" in (tmp_path / "quiet0.ipynb").read_text()


@pytest.mark.slow
def test_quiet_kernel_manager_still_interrupts_a_running_kernel_but_not_at_shutdown():
    import asyncio
    import signal

    async def main():
        km = runner.quiet_kernel_manager()(kernel_name="python3")
        sent = []
        original = km._async_signal_kernel

        async def spy(signum):
            sent.append(signum)
            await original(signum)

        km._async_signal_kernel = spy
        await km.start_kernel()
        assert km.transport == "ipc" and Path(km.ip).is_absolute()
        await km.interrupt_kernel()
        assert sent == [signal.SIGINT]
        await km.shutdown_kernel()
        assert sent == [signal.SIGINT] and not list(Path(km.ip).parent.glob(Path(km.ip).name + "-*"))

    asyncio.run(main())


DAMAGED = CHAPTER.replace('print(profile, result, label)', 'import replicate as rp\nrp.runs.load(label).logits("test")')


@pytest.mark.slow
def test_a_chapter_reading_a_damaged_committed_run_stops_with_one_line(tmp_path, monkeypatch):
    import shutil

    src_run = next(p for p in sorted((config.repo_root() / "results" / "runs").iterdir()) if p.is_dir())
    results = tmp_path / "results"
    shutil.copytree(src_run, results / "runs" / src_run.name)
    data = (results / "runs" / src_run.name / "logits.npz").read_bytes()
    (results / "runs" / src_run.name / "logits.npz").write_bytes(data[:len(data) // 2])
    monkeypatch.setenv("REPLICATE_RESULTS", str(results))            # the kernel inherits it
    src = tmp_path / "reads.md"
    src.write_text(DAMAGED)
    with pytest.raises(runner.ChapterError) as err:
        runner.execute(src, tmp_path / "reads.ipynb", parameters={"label": src_run.name}, log=lambda *_: None)
    text = str(err.value)
    assert "\n" not in text and "DamagedRunError: run " in text
    assert f"runs/{src_run.name}: logits.npz is damaged (truncated or corrupt" in text
    # the store lies outside the checkout: git holds no copy of it, so the fix is to restore or retrain
    assert "git checkout" not in text and "from the copy it came from" in text and "train the run again" in text
