"""The lent machine as the GPU job sees it (:mod:`replicate.gpu_loan.job`): the folder it keeps
between the calls of one loan, the job's log, the one-line device report and the CUDA MPS
daemon that lets several trainings share the GPU."""
from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from pathlib import Path

MPS_MODES = ("auto", "on", "off")


def state_dir() -> Path:
    """``<cache>/gpu-job``: what the job keeps on the machine between its calls."""
    from .. import config

    return config.cache_dir() / "gpu-job"


class Log:
    """Prints each line and keeps it for the job's log file in ``out``."""

    def __init__(self, path: Path | None, echo=print):
        self.path, self.echo, self.lines = path, echo, []

    def __call__(self, text: str = "") -> None:
        stamp = time.strftime("%H:%M:%S")
        for line in str(text).splitlines() or [""]:
            self.lines.append(f"{stamp} {line}")
            if self.echo:
                self.echo(line, flush=True) if self.echo is print else self.echo(line)
        if self.path is not None:
            self.path.write_text("\n".join(self.lines) + "\n")


def device_report(device: str) -> str:
    """One line: the device, PyTorch and CUDA versions, the free and total GPU memory."""
    import torch

    if device.startswith("cuda"):
        free, total = torch.cuda.mem_get_info()
        return (f"device {torch.cuda.get_device_name()} | torch {torch.__version__} (CUDA {torch.version.cuda}) | "
                f"GPU memory free {free / 2**30:.1f} of {total / 2**30:.1f} GiB | {os.cpu_count()} CPU cores")
    return f"device cpu | torch {torch.__version__} | {os.cpu_count()} CPU cores (no GPU: a rehearsal)"


@contextlib.contextmanager
def mps_daemon(mode: str, device: str, log):
    """Start the CUDA MPS control daemon for the block when asked (``on``) or available
    (``auto``, CUDA only); yields whether it runs. ``on`` without the daemon is an error."""
    if mode not in MPS_MODES:
        raise ValueError(f"mps must be one of {', '.join(MPS_MODES)}; got {mode!r}")
    exe = shutil.which("nvidia-cuda-mps-control")
    want = mode == "on" or (mode == "auto" and device.startswith("cuda") and exe is not None)
    if not want:
        log(f"MPS: off ({'asked' if mode == 'off' else 'no CUDA or no nvidia-cuda-mps-control'})")
        yield False
        return
    if exe is None:
        raise ValueError("mps='on' but nvidia-cuda-mps-control is not on this machine; use mps='auto' or 'off'")
    started = subprocess.run([exe, "-d"], capture_output=True, text=True).returncode == 0
    log("MPS: daemon started" if started else "MPS: the daemon did not start; trainings time-share the GPU")
    try:
        yield started
    finally:
        if started:
            subprocess.run([exe], input="quit\n", capture_output=True, text=True)
