"""Packing finished runs into archives that travel, and unpacking them into a store.

A GPU machine may hand back only a few files of limited size from a command (eight of
16 MiB on ours), and forgets its disk when its lease ends. Checkpoints therefore never
travel; finished runs (``record.json`` + ``logits.npz``, a few hundred kB each) are packed
into gzip-compressed tar archives of at most ``max_bytes`` each, brought back and
unpacked into ``results/``:

    replicate runs pack --chapter exp_focal_loss --profile gpu --output $OUT/focal-gpu
    replicate runs unpack focal-gpu.tar.gz

Each archive holds ``MANIFEST.json`` (format, the set it belongs to, part i of n, and the
SHA-256 and size of every file) and ``runs/<key>/<file>``. Unpacking checks everything
before it writes anything: a truncated or corrupt archive, a member the manifest does not
list (or a listed one missing), a checksum that does not match, a record whose key is not
its folder's or whose configuration does not hash to its key under this version of the
package, a set with parts missing, or a run already in the store with different contents
(unless ``replace``) each raise a one-line ValueError, and nothing is written.
"""
from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import tarfile
import tempfile
import time
import zlib
from pathlib import Path

FORMAT = "replicate-runs/1"
RUN_FILES = ("record.json", "logits.npz")
MAX_BYTES = 16 * 2**20
MANIFEST = "MANIFEST.json"
_HEADROOM = 64 * 1024  # tar headers, padding and gzip framing of one part


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read_run(key: str, store: str) -> dict:
    from .store import load

    run = load(key, store=store)
    return {name: (run.path / name).read_bytes() for name in RUN_FILES}


def _tar_bytes(manifest: dict, runs: dict) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=6) as tar:
        def add(name, data):
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), int(manifest["created_unix"]), 0o644
            tar.addfile(info, io.BytesIO(data))

        add(MANIFEST, json.dumps(manifest, indent=1, sort_keys=True).encode())
        for key, files in runs.items():
            for name in RUN_FILES:
                add(f"runs/{key}/{name}", files[name])
    return buf.getvalue()


def pack(keys, output: str | os.PathLike, *, store: str = "results", max_bytes: int = MAX_BYTES) -> list[Path]:
    """Pack the finished runs ``keys`` of ``store`` into archives of at most ``max_bytes``.

    ``output`` is a path prefix: one part is written as ``<output>.tar.gz``, several as
    ``<output>-part<i>of<n>.tar.gz``. Returns the archive paths. ValueError for no keys, an
    unknown key, or a single run larger than ``max_bytes``.

    Parameters
    ----------
    keys : iterable of str
        Run keys (or unique prefixes) of ``store``.
    output : str or os.PathLike
        The archives' path prefix (its folder must exist).
    store : {"results", "cache"}
        The store the runs are read from (default ``"results"``).
    max_bytes : int
        The largest archive, in bytes (default :data:`MAX_BYTES`).

    Returns
    -------
    list of pathlib.Path

    Example
    -------
    >>> import tempfile, pathlib; from replicate import runs
    >>> out = pathlib.Path(tempfile.mkdtemp()) / 'runs'
    >>> [p.name for p in runs.pack(['1bef35eabfc1ab17'], out)]
    ['runs.tar.gz']
    """
    keys = list(dict.fromkeys(keys))
    if not keys:
        raise ValueError("no runs to pack")
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes <= _HEADROOM:
        raise ValueError(f"max_bytes must be an integer > {_HEADROOM}; got {max_bytes!r}")
    from .store import load

    keys = [load(k, store=store).key for k in keys]  # full keys; ValueError names an unknown one
    runs = {k: _read_run(k, store) for k in keys}
    parts, current, size = [], {}, 0
    for key, files in runs.items():
        need = sum(len(b) + 1024 for b in files.values())
        if need > max_bytes - _HEADROOM:
            raise ValueError(f"run {key} alone takes {need} bytes, more than max_bytes={max_bytes}")
        if current and size + need > max_bytes - _HEADROOM:
            parts.append(current)
            current, size = {}, 0
        current[key] = files
        size += need
    parts.append(current)
    set_id = _sha256("".join(sorted(keys)).encode())[:12]
    created = time.time()
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, part in enumerate(parts, 1):
        manifest = {"format": FORMAT, "set": set_id, "part": i, "parts": len(parts), "created_unix": created,
                    "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(created)),
                    "runs": {k: {n: {"sha256": _sha256(b), "bytes": len(b)} for n, b in f.items()}
                             for k, f in part.items()}}
        data = _tar_bytes(manifest, part)
        if len(data) > max_bytes:
            raise ValueError(f"archive part {i} came out at {len(data)} bytes, more than max_bytes={max_bytes}")
        name = f"{output.name}.tar.gz" if len(parts) == 1 else f"{output.name}-part{i}of{len(parts)}.tar.gz"
        path = output.parent / name
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        paths.append(path)
    return paths


def _read_archive(path: Path) -> tuple[dict, dict]:
    """``(manifest, {member name: bytes})`` of one archive, fully read and checked."""
    if not path.is_file():
        raise ValueError(f"{path}: no such archive")
    members = {}
    try:
        with tarfile.open(path, mode="r:gz") as tar:
            for m in tar:
                if not m.isfile():
                    raise ValueError(f"{path}: member {m.name!r} is not a regular file")
                if m.name in members:
                    raise ValueError(f"{path}: member {m.name!r} appears twice")
                members[m.name] = tar.extractfile(m).read()
    except (tarfile.TarError, EOFError, zlib.error, OSError) as err:
        raise ValueError(f"{path}: not a complete runs archive (truncated or corrupt: {err})") from None
    if MANIFEST not in members:
        raise ValueError(f"{path}: no {MANIFEST}; not an archive made by 'replicate runs pack'")
    try:
        manifest = json.loads(members.pop(MANIFEST))
    except ValueError as err:
        raise ValueError(f"{path}: unreadable {MANIFEST} ({err})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ValueError(f"{path}: archive format {manifest.get('format') if isinstance(manifest, dict) else None!r}"
                         f" is not {FORMAT!r}")
    listed = {f"runs/{k}/{n}": meta for k, files in manifest.get("runs", {}).items() for n, meta in files.items()}
    extra = sorted(set(members) - set(listed))
    missing = sorted(set(listed) - set(members))
    if extra or missing:
        what = f"members not in the manifest: {extra}" if extra else f"members missing: {missing}"
        raise ValueError(f"{path}: incomplete or altered archive ({what})")
    for name, meta in listed.items():
        data = members[name]
        if len(data) != meta.get("bytes") or _sha256(data) != meta.get("sha256"):
            raise ValueError(f"{path}: {name} does not match its checksum in the manifest (corrupt archive)")
    for key, files in manifest["runs"].items():
        if not (isinstance(key, str) and len(key) == 16 and all(c in "0123456789abcdef" for c in key)):
            raise ValueError(f"{path}: {key!r} is not a run key (16 hex digits)")
        if sorted(files) != sorted(RUN_FILES):
            raise ValueError(f"{path}: run {key} must hold exactly {', '.join(RUN_FILES)}; has {sorted(files)}")
    return manifest, members


def _check_record(path: Path, key: str, record_bytes: bytes) -> None:
    from .spec import RunConfig

    try:
        record = json.loads(record_bytes)
        cfg = RunConfig.from_dict(record["config"])
        own = cfg.key
    except (ValueError, KeyError, TypeError) as err:
        raise ValueError(f"{path}: run {key}: unreadable record ({err})") from None
    if record.get("key") != key:
        raise ValueError(f"{path}: run folder {key} holds the record of run {record.get('key')}")
    if own != key:
        raise ValueError(f"{path}: run {key} was made by another version of the package: its configuration "
                         f"hashes to {own} here")


def unpack(paths, *, store: str = "results", replace: bool = False) -> dict:
    """Check the archives ``paths`` completely, then write their runs into ``store``.

    Returns ``{"written": [keys], "unchanged": [keys already there, byte-identical]}``.
    Every refusal is a one-line ValueError raised before anything is written (module
    docstring).

    Parameters
    ----------
    paths : str or os.PathLike or iterable of them
        The archives written by :func:`pack` (every part of a set).
    store : {"results", "cache"}
        The store the runs are written into (default ``"results"``).
    replace : bool
        True overwrites a stored run whose files differ; False (default) refuses.

    Example
    -------
    >>> import tempfile, pathlib; from replicate import runs
    >>> paths = runs.pack(['1bef35eabfc1ab17'], pathlib.Path(tempfile.mkdtemp()) / 'runs')
    >>> runs.unpack(paths)
    {'written': [], 'unchanged': ['1bef35eabfc1ab17']}
    """
    from .layout import store_dir
    from .store import _write_atomic_dir

    paths = [Path(p) for p in ([paths] if isinstance(paths, (str, os.PathLike)) else paths)]
    if not paths:
        raise ValueError("no archives given")
    runs, sets = {}, {}
    for path in paths:
        manifest, members = _read_archive(path)
        sets.setdefault(manifest.get("set"), {"parts": manifest.get("parts"), "have": set()})["have"].add(
            manifest.get("part"))
        for key in manifest["runs"]:
            files = {n: members[f"runs/{key}/{n}"] for n in RUN_FILES}
            _check_record(path, key, files["record.json"])
            if key in runs and runs[key] != files:
                raise ValueError(f"{path}: run {key} appears in two archives with different contents")
            runs[key] = files
    for set_id, s in sets.items():
        want = set(range(1, int(s["parts"] or 1) + 1))
        if s["have"] != want:
            raise ValueError(f"archive set {set_id}: parts {sorted(want - s['have'])} of {s['parts']} are missing; "
                             "unpack all parts together")
    base = store_dir(store)
    written, unchanged = [], []
    for key, files in runs.items():
        final = base / key
        if (final / "record.json").exists():
            same = all((final / n).exists() and (final / n).read_bytes() == files[n] for n in RUN_FILES)
            if same:
                unchanged.append(key)
                continue
            if not replace:
                raise ValueError(f"run {key} is already in {store} with different contents; "
                                 "pass replace=True (--replace) to overwrite it")
        written.append(key)
    for key in written:
        final = base / key
        backup = None
        if final.exists():
            backup = final.parent / f".old-{key}-{os.getpid()}"
            os.rename(final, backup)
        files = runs[key]
        _write_atomic_dir(final, {n: (lambda p, b=files[n]: p.write_bytes(b)) for n in RUN_FILES})
        if backup is not None:
            shutil.rmtree(backup, ignore_errors=True)
    return {"written": written, "unchanged": unchanged}
