"""Damaged and missing data reach the user as one line ``replicate: error: ...`` (exit status 2,
no traceback), from ``replicate train`` and ``replicate data check``, for every data set:
the loaders turn low-level errors (truncated pickle, tar, gzip, zip, ``.mat``) into
DataArchiveError / FileNotFoundError naming the file, and leave nothing half-written."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from replicate import cli, config
from replicate.data import DataArchiveError, generated, load

REPO = config.repo_root()

# case: (data set name, writer of tiny official-format files, file to truncate, file to remove,
#        what the "missing" message must name, `data check` options)
CASES = {
    "cifar10": ("cifar10", lambda d: generated.write_cifar10(d, n_train=10, n_test=5),
                "cifar-10-batches-py/data_batch_3", "cifar-10-batches-py/batches.meta", "batches.meta", []),
    "cifar10_jpeg": ("cifar10", lambda d: generated.write_cifar10_jpeg(d, n_train=20, n_test=10),
                     "cifar10-jpeg.tar.gz", "cifar10-jpeg.tar.gz", "cifar10-jpeg.tar.gz", ["--option", "source=jpeg"]),
    "cifar100": ("cifar100", lambda d: generated.write_cifar100(d, n_train=10, n_test=5),
                 "cifar-100-python/train", "cifar-100-python/meta", "meta", []),
    "svhn": ("svhn", lambda d: generated.write_svhn(d, n_train=10, n_test=5),
             "svhn/train_32x32.mat", "svhn/test_32x32.mat", "test_32x32.mat", []),
    "tiny_imagenet": ("tiny_imagenet", lambda d: generated.write_tiny_imagenet(d, num_classes=3, train_per_class=3,
                                                                              val_per_class=1),
                      "tiny-imagenet-200.zip", "tiny-imagenet-200.zip", "tiny-imagenet-200.zip", []),
    "20newsgroups": ("20newsgroups", lambda d: generated.write_20newsgroups(d, train_per_group=1, test_per_group=1),
                     "20news-bydate.tar.gz", "20news-bydate.tar.gz", "20news-bydate.tar.gz", []),
}


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) if folder.exists() else []


def truncate(path: Path) -> None:
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 2])


def cli_error(argv, capsys) -> str:
    """Run the CLI in-process; assert exit status 2, one stderr line and no traceback; return it."""
    rc = cli.main(argv)
    err = capsys.readouterr().err
    assert rc == 2, err
    assert err.startswith("replicate: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


def commands(name: str, options: list[str]) -> list[list[str]]:
    return [["train", name, "default", "cross_entropy", "--profile", "smoke", "--device", "cpu", "--progress", "none"],
            ["data", "check", name, *options]]


@pytest.mark.parametrize("case", CASES)
def test_truncated_file_is_a_one_line_cli_error_and_leaves_nothing(case, sandbox, capsys):
    name, write, damaged, _, _, options = CASES[case]
    write(sandbox)
    truncate(sandbox / damaged)
    before = files_under(sandbox)
    with pytest.raises(DataArchiveError, match=Path(damaged).name):
        load(name, **dict(o.split("=") for o in options[1::2]))
    for argv in commands(name, options):
        err = cli_error(argv, capsys)
        assert Path(damaged).name in err and "truncated, corrupted or unreadable" in err
        assert "should be" in err and "http" in err  # what the file should be and where it comes from
        assert files_under(sandbox) == before  # nothing cached, extracted or half-written
        assert not [f for f in files_under(sandbox.parent / "cache") if f.endswith((".npz", ".tmp"))]
        assert "bydate-train" not in "".join(files_under(sandbox.parent / "cache"))


@pytest.mark.parametrize("case", CASES)
def test_missing_file_is_a_one_line_cli_error(case, sandbox, capsys):
    name, write, _, removed, needle, options = CASES[case]
    write(sandbox)
    (sandbox / removed).unlink()
    if case == "cifar10_jpeg":
        generated.write_cifar10(sandbox, n_train=10, n_test=5)  # official files present, JPEG asked for
    with pytest.raises(FileNotFoundError, match=needle):
        load(name, **dict(o.split("=") for o in options[1::2]))
    argvs = commands(name, options)
    for argv in argvs[1:] if case == "cifar10_jpeg" else argvs:  # `train` cannot ask for the JPEG copy
        err = cli_error(argv, capsys)
        assert needle in err and str(sandbox) in err and "official source: http" in err


def test_data_check_and_train_report_a_folder_lacking_files(sandbox, capsys):
    generated.write_cifar10(sandbox, n_train=10, n_test=5)
    (sandbox / "cifar-10-batches-py" / "data_batch_2").unlink()
    err = cli_error(["data", "check", "cifar10"], capsys)
    assert f"{sandbox / 'cifar-10-batches-py'} lacks data_batch_2" in err


def test_tiny_imagenet_zip_lacking_a_member(sandbox, capsys, tmp_path):
    import zipfile

    generated.write_tiny_imagenet(tmp_path, num_classes=2, train_per_class=2, val_per_class=1)
    with zipfile.ZipFile(tmp_path / "tiny-imagenet-200.zip") as src, \
            zipfile.ZipFile(sandbox / "tiny-imagenet-200.zip", "w") as dst:
        for item in src.infolist():
            if not item.filename.endswith("val_annotations.txt"):
                dst.writestr(item, src.read(item))
    err = cli_error(["data", "check", "tiny_imagenet"], capsys)
    assert "tiny-imagenet-200.zip" in err and "val_annotations.txt" in err and "should be" in err


def test_partly_extracted_newsgroups_folder_is_not_overwritten(sandbox, capsys):
    generated.write_20newsgroups(sandbox, train_per_group=1, test_per_group=1)
    (sandbox / "20news-bydate" / "20news-bydate-train").mkdir(parents=True)  # the test part was lost
    err = cli_error(["data", "check", "20newsgroups"], capsys)
    assert "20news-bydate-test" in err and "remove it" in err
    assert files_under(sandbox / "20news-bydate") == ["20news-bydate-train"]


def test_data_check_lists_each_missing_data_set_and_fails(sandbox, capsys):
    generated.write_cifar10(sandbox, n_train=6000, n_test=5)
    rc = cli.main(["data", "check", "cifar10", "svhn", "--data-dir", str(sandbox)])
    out, err = capsys.readouterr()
    assert rc == 2 and out.startswith("cifar10: CIFAR-10: 1000 train / 5000 validation / 5 test")
    assert err.count("replicate: error: ") == 1 and "SVHN: data not found" in err and "Traceback" not in err


def test_a_real_process_prints_one_line_and_no_traceback(sandbox):
    generated.write_cifar10_jpeg(sandbox, n_train=20, n_test=10)
    truncate(sandbox / "cifar10-jpeg.tar.gz")
    proc = subprocess.run([sys.executable, "-m", "replicate", "train", "cifar10", "default", "cross_entropy",
                           "--profile", "smoke", "--device", "cpu", "--data-dir", str(sandbox)],
                          capture_output=True, text=True, cwd=REPO, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("replicate: error: ") and "cifar10-jpeg.tar.gz" in lines[0]


def test_other_errors_keep_their_traceback(monkeypatch):
    def boom(args):
        raise RuntimeError("a bug, not a user error")

    parser = cli.build_parser()
    args = parser.parse_args(["runs", "ls"])
    monkeypatch.setattr(cli, "build_parser", lambda: parser)
    monkeypatch.setattr(args, "func", boom)
    monkeypatch.setattr(parser, "parse_args", lambda argv: args)
    with pytest.raises(RuntimeError, match="a bug"):
        cli.main(["runs", "ls"])
