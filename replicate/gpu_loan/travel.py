"""What travels to a lent GPU machine, and keeping the committed logits off it.

The device tool copies the checkout's working tree (tracked files and untracked files git
does not ignore) plus the carried paths, 64 MiB in all. The committed runs grow with every
profile: 128 `cpu` runs with a 10,000-image test set are about 60 MiB of ``logits.npz``
alone, more than the data archive and the code together may leave. The GPU job needs none
of them: it decides what is finished from each run's ``record.json``, and trains and packs
only `gpu` runs. So, for the length of one device call, :func:`hide` takes the committed
``logits.npz`` of every run of another profile out of the index (``git rm --cached``; the
files stay on disk, untouched) and lists them in the repository's ``info/exclude``, so that
git, and with it the device tool, sees them neither as tracked nor as untracked;
:func:`restore` puts them back (``git add -f`` of the same paths) and removes the lines.
``replicate gpu-job --check-travel`` (``make gpu-job-check``) hides every committed
``logits.npz``; with ``--with-chapter`` it keeps those of the runs the Mukhoti chapter
loads at ``gpu`` (``keep_keys``), which the job executes on the machine. ``replicate runs
unpack`` and ``replicate gpu-job --restore`` (``make gpu-job-restore``) restore. Both are
idempotent; :func:`hidden` lists what is hidden now.

The data archives and the wheels their runs need do not all fit beside each other (the
CIFAR-10 archive is 19 MiB; the 20 Newsgroups archive 14 MiB with gensim's wheel, 27 MiB,
for its word vectors): :func:`choose_data` carries the data sets in the queue's order as
long as the whole travel fits, and says for each other one why it waits for a later loan.

:func:`files` lists what travels (the check measures it) and :func:`stage` copies exactly
that into a folder, for a rehearsal on a Python that has only the GPU image's packages
(``make gpu-job-twin``), as the machine will see the checkout.
"""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

#: What the device tool sends at most (working tree plus carried paths).
LIMIT_MIB = 64.0
#: The git-ignored folder the device call carries (``carry=[".gpu-carry"]``).
CARRY = ".gpu-carry"
#: The list of hidden paths, relative to the repository root (inside the git-ignored carry).
HIDDEN_LIST = f"{CARRY}/hidden-logits.txt"
BLOCK_START = "# >>> replicate gpu-job: committed logits kept off the device (undo: replicate gpu-job --restore)"
BLOCK_END = "# <<< replicate gpu-job"


def _git(root: Path, *args: str, stdin: str | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=root, input=stdin, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"git {' '.join(args)} failed in {root}: {done.stderr.strip()}")
    return done.stdout


def _exclude_file(root: Path) -> Path:
    return (root / _git(root, "rev-parse", "--git-path", "info/exclude").strip()).resolve()


def _profile(record: Path) -> str | None:
    try:
        return json.loads(record.read_text()).get("config", {}).get("profile")
    except (OSError, ValueError):
        return None


def _listing(root: Path) -> list[tuple[str, str]]:
    path = Path(root) / HIDDEN_LIST
    lines = path.read_text().splitlines() if path.is_file() else []
    return [tuple(line.split("\t", 1)) for line in lines if "\t" in line]


def hidden(root: Path) -> list[str]:
    """The paths :func:`hide` keeps off the device now (committed ones out of the index,
    uncommitted ones ignored), until :func:`restore`."""
    return [p for _, p in _listing(root)]


def hide(root: Path, keep: tuple[str, ...] = ("gpu",), keep_keys=()) -> list[str]:
    """Keep the ``results/runs/*/logits.npz`` of runs whose profile is not in ``keep`` and
    whose key is not in ``keep_keys`` off the device until :func:`restore`: the committed
    ones out of the index, all of them ignored; return their paths. Hiding again with the
    same choice changes nothing; with another choice (``--with-chapter`` keeps the
    chapter's runs), what was hidden is restored first. Refuses, changing nothing, while
    the index holds staged changes (a commit made now would delete the hidden files)."""
    root = Path(root)
    keep_keys = set(keep_keys)

    def hidden_here(paths):
        return [p for p in paths.split("\0") if p and Path(p).parent.name not in keep_keys
                and _profile(root / Path(p).parent / "record.json") not in keep]

    pattern = "results/runs/*/logits.npz"
    before = hidden(root)
    if before:
        # what is hidden now is out of the index and ignored: list it with the others
        every = _git(root, "ls-files", "-z", "--", pattern) + "\0".join(before) + "\0" + _git(
            root, "ls-files", "-z", "--others", "--exclude-standard", "--", pattern)
        if sorted(hidden_here(every)) == sorted(before):
            return before
        restore(root)
    if subprocess.run(["git", "diff", "--cached", "--quiet"], cwd=root).returncode:
        raise RuntimeError("the index holds staged changes: commit or unstage them before hiding the committed "
                           "logits (a commit made while they are hidden would delete them)")
    tracked = hidden_here(_git(root, "ls-files", "-z", "--", pattern))
    untracked = hidden_here(_git(root, "ls-files", "-z", "--others", "--exclude-standard", "--", pattern))
    paths = tracked + untracked
    if not paths:
        return []
    listing = root / HIDDEN_LIST
    listing.parent.mkdir(parents=True, exist_ok=True)
    listing.write_text("".join(f"tracked\t{p}\n" for p in tracked) + "".join(f"untracked\t{p}\n" for p in untracked))
    if tracked:
        _git(root, "rm", "--cached", "-q", "--pathspec-from-file=-", stdin="\n".join(tracked) + "\n")
    exclude = _exclude_file(root)
    exclude.parent.mkdir(parents=True, exist_ok=True)
    old = exclude.read_text() if exclude.is_file() else ""
    block = "\n".join([BLOCK_START, *("/" + p for p in paths), BLOCK_END])
    exclude.write_text(old + ("" if not old or old.endswith("\n") else "\n") + block + "\n")
    return paths


def restore(root: Path) -> int:
    """Undo :func:`hide`: the committed paths back into the index, the ignore lines gone
    (uncommitted ones are untracked again). Returns how many paths were hidden (0: none)."""
    root = Path(root)
    entries = _listing(root)
    exclude = _exclude_file(root)
    if exclude.is_file() and BLOCK_START in exclude.read_text():
        text = exclude.read_text()
        head, _, rest = text.partition(BLOCK_START)
        _, _, tail = rest.partition(BLOCK_END)
        exclude.write_text(head.rstrip("\n") + ("\n" if head.strip() else "") + tail.lstrip("\n"))
    present = [p for kind, p in entries if kind == "tracked" and (root / p).is_file()]
    if present:
        _git(root, "add", "-f", "--pathspec-from-file=-", stdin="\n".join(present) + "\n")
    (root / HIDDEN_LIST).unlink(missing_ok=True)
    return len(entries)


def choose_data(needed, base_mib: float, sizes: dict, limit_mib: float = LIMIT_MIB,
                alone: dict | None = None) -> tuple[list, dict]:
    """Which data sets travel: ``needed`` in the queue's order (the first one's runs come
    first), ``base_mib`` what travels anyway (the working tree without the hidden logits,
    the job's wheels), ``sizes`` ``{name: (archive MiB, {tier: wheels MiB})}`` (a data
    set's wheel tiers, such as ``text`` for 20 Newsgroups, count once however many data
    sets need them). A data set travels when it fits beside those before it; returns
    ``(carried, {left out: why})``, the carried ones in ``needed`` order; ``alone``
    ``{name: command}`` names the command that prepares a loan of a left-out data set's
    runs alone."""
    carried, left, total, tiers = [], {}, float(base_mib), {}
    for name in needed:
        archive, its_tiers = sizes[name]
        extra = {t: mib for t, mib in its_tiers.items() if t not in tiers}
        after = total + archive + sum(extra.values())
        if after <= limit_mib:
            carried.append(name)
            total = after
            tiers.update(extra)
            continue
        beside = f" beside {', '.join(carried)}" if carried else ""
        left[name] = (f"does not fit{beside}: {after:.1f} MiB of {limit_mib:g} MiB with its archive "
                      f"({archive:.1f} MiB)" + "".join(f" and {t} wheels ({mib:.1f} MiB)" for t, mib in extra.items())
                      + (f"; for a loan of its runs alone: `{alone[name]}`" if carried and alone and name in alone
                         else ""))
    return carried, left


def files(root: Path, carry: str | None = CARRY) -> list[Path]:
    """What the device call sends from the checkout at ``root``: the working tree as the
    device tool copies it (tracked files and untracked files git does not ignore, so
    without what :func:`hide` keeps off) and every file under the carried folder ``carry``
    (``None``: the working tree alone)."""
    root = Path(root)
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root,
                         capture_output=True, check=True).stdout
    tree = [root / p for p in out.decode().split("\0") if p]
    carried = sorted(p for p in (root / carry).rglob("*") if p.is_file()) if carry and (root / carry).is_dir() else []
    return [p for p in tree if p.is_file()] + carried


def mib(paths) -> float:
    """The size of ``paths`` in MiB (files only)."""
    return sum(p.stat().st_size for p in paths if p.is_file()) / 2**20


def stage(root: Path, dest: Path, carry: str = CARRY) -> float:
    """Copy what travels (:func:`files`) from ``root`` into the new folder ``dest``, paths kept,
    as the device machine receives it; return its size in MiB. ``dest`` must not exist, so
    nothing of an earlier stage mixes in."""
    root, dest = Path(root).resolve(), Path(dest).resolve()
    if dest.exists():
        raise ValueError(f"--stage: {dest} already exists; give a new folder (the staged copy must hold "
                         f"exactly what travels)")
    if dest == root or root in dest.parents:
        raise ValueError(f"--stage: {dest} lies inside the checkout {root}; give a folder outside it")
    paths = files(root, carry)
    for path in paths:
        target = dest / path.relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    return mib(paths)


def prune_carry(folder: Path, keep) -> list[str]:
    """Leave in the carried data folder ``folder`` only the files named in ``keep`` (the
    archives this call carries): a rehearsal of the job here decodes and unpacks beside
    them (``20news-bydate/``, ``cifar10-jpeg.npz``), and an archive of a data set that does
    not fit this time must not travel either. Returns the names removed (folders with ``/``)."""
    removed = []
    for entry in sorted(Path(folder).iterdir()) if Path(folder).is_dir() else []:
        if entry.name in keep and entry.is_file():
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
            removed.append(entry.name + "/")
        else:
            entry.unlink()
            removed.append(entry.name)
    return removed
