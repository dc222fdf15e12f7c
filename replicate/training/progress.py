"""Progress reporting: a tqdm bar on a terminal, plain log lines in notebooks.

``progress`` is one of ``"auto"`` (log lines inside a Jupyter kernel, a bar otherwise),
``"bar"``, ``"log"`` or ``"none"``. Reporting happens once per epoch, after the epoch's
single host synchronisation, so it costs nothing inside the training steps.
"""
from __future__ import annotations

import sys

MODES = ("auto", "bar", "log", "none")


def in_notebook() -> bool:
    """True inside a Jupyter (ipykernel) kernel, as under papermill."""
    if "ipykernel" not in sys.modules:
        return False
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover
        return False
    shell = get_ipython()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def resolve_mode(progress: str) -> str:
    """The concrete mode for ``progress`` (see the module docstring)."""
    if progress not in MODES:
        raise ValueError(f"progress must be one of {', '.join(MODES)}; got {progress!r}")
    if progress == "auto":
        return "log" if in_notebook() else "bar"
    return progress


class Reporter:
    """Per-epoch progress: ``update(epoch, row)`` after each epoch, ``close()`` at the end."""

    def __init__(self, progress: str, epochs: int, label: str = "", initial: int = 0, stream=None):
        self.mode = resolve_mode(progress)
        self.epochs, self.label = epochs, label
        self.stream = stream or (sys.stdout if self.mode == "log" else sys.stderr)
        self.every = max(1, -(-epochs // 5))  # about five lines per run in a notebook
        self.bar = None
        if self.mode == "bar":
            from tqdm.auto import tqdm

            self.bar = tqdm(total=epochs, initial=initial, desc=label or "train", unit="epoch",
                            file=self.stream, leave=True, dynamic_ncols=True)
        if self.mode == "log" and initial:
            self._print(f"resumed after epoch {initial}/{epochs}")

    def _print(self, text: str) -> None:
        prefix = f"[{self.label}] " if self.label else ""
        print(prefix + text, file=self.stream, flush=True)

    def update(self, epoch: int, row: dict) -> None:
        fields = {"loss": f"{row['train_loss']:.4f}", "acc": f"{row['train_accuracy']:.3f}",
                  "lr": f"{row['lr']:.3g}"}
        if "val_accuracy" in row:
            fields["val_acc"] = f"{row['val_accuracy']:.3f}"
        if self.bar is not None:
            self.bar.set_postfix(fields, refresh=False)
            self.bar.update(1)
        elif self.mode == "log" and ((epoch + 1) % self.every == 0 or epoch + 1 == self.epochs):
            text = "  ".join(f"{k} {v}" for k, v in fields.items())
            self._print(f"epoch {epoch + 1}/{self.epochs}  {text}  ({row['seconds']:.1f}s)")

    def message(self, text: str) -> None:
        if self.bar is not None:
            self.bar.write(text, file=self.stream)
        elif self.mode == "log":
            self._print(text)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
