"""The GPU job's deadline: a call's budget turned into the limits the sweep runner keeps,
and the runs that still fit before them.

A call of the job (:mod:`replicate.gpu_loan.job`) has a budget of seconds (540 by default:
one 10-minute device command, with margin) and must have packed what it trained before the
budget ends. :class:`Budget` turns it into the two moments the local sweep runner
(:func:`replicate.sweep.execute.run_local`) takes:

- its ``deadline``, :data:`PACK_RESERVE` seconds before the budget's end: each run pauses
  before an epoch that would end after it, its checkpoint kept (a later call on the same
  machine resumes it);
- its ``hard_stop``, :data:`HARD_STOP_AFTER` seconds after the deadline: a run still
  training then (an epoch much slower than the one before it, or its final evaluation) is
  interrupted, keeping its finished epochs, so that packing starts within the budget
  whatever the runs do (about 10 s before its end, with the workers'
  ``replicate.sweep.execute.STOP_GRACE`` to stop).

A call that executes the Mukhoti chapter after packing first moves the deadline earlier by
the chapter's seconds (:meth:`Budget.reserve`).

:class:`Admission` is the runner's ``defer`` hook: a run is not started when its estimated
duration, scaled by the median ratio of real to estimated seconds of the runs this call has
finished so far, no longer fits before the deadline; the runs are in priority order, so none
after it starts either.
"""
from __future__ import annotations

import statistics
import time

#: Seconds kept free at the end of the budget for packing and the log.
PACK_RESERVE = 25.0
#: A run still training this long after the deadline is interrupted (module docstring).
HARD_STOP_AFTER = 10.0
#: Why a run was not started (the runner reports it ``deferred`` with this reason).
NOT_STARTED = "not started: would not finish before the deadline"


def check_budget(budget) -> float:
    """``budget`` as seconds; ValueError unless it is a number above :data:`PACK_RESERVE` + 5."""
    if isinstance(budget, bool) or not isinstance(budget, (int, float)) or budget <= PACK_RESERVE + 5:
        raise ValueError(f"budget must be a number of seconds > {PACK_RESERVE + 5:.0f}; got {budget!r}")
    return float(budget)


class Budget:
    """A call's ``seconds`` from ``start`` (a ``time.monotonic()`` value; default now): its
    :attr:`deadline` and :attr:`hard_stop` for the runner, and the seconds :meth:`left`.

    >>> b = Budget(540, start=1000.0)
    >>> b.deadline, b.hard_stop
    (1515.0, 1525.0)
    >>> b.reserve(240, keep=60), b.deadline
    (True, 1275.0)
    """

    def __init__(self, seconds, start: float | None = None):
        self.seconds = check_budget(seconds)
        self.start = time.monotonic() if start is None else float(start)
        self.deadline = self.start + self.seconds - PACK_RESERVE

    @property
    def hard_stop(self) -> float:
        """The moment runs still training are interrupted: :data:`HARD_STOP_AFTER` after the deadline."""
        return self.deadline + HARD_STOP_AFTER

    def reserve(self, seconds: float, keep: float) -> bool:
        """Move the deadline ``seconds`` earlier (time kept after packing) when the whole budget
        still leaves at least ``keep`` seconds of training beside them; returns whether it did."""
        if self.seconds - PACK_RESERVE - seconds < keep:
            return False
        self.deadline -= seconds
        return True

    def left(self) -> float:
        """Seconds until the budget's end (negative once it is over)."""
        return self.start + self.seconds - time.monotonic()


class Admission:
    """The runner's ``defer`` hook for one call: :meth:`defer` a run whose ``estimate(key)``
    seconds, scaled by the median ratio of real to estimated seconds of the runs finished so
    far (:meth:`finished`, the runner's ``on_row``), would end after ``deadline``. ``clock``:
    the time, ``time.monotonic`` (tests give their own).

    >>> now = [0.0]
    >>> a = Admission(100.0, {"a": 40.0, "b": 40.0, "c": 40.0}.__getitem__, clock=lambda: now[0])
    >>> a.defer("a") is None                       # 0 + 40 s fits before 100
    True
    >>> now[0] = 60.0
    >>> a.finished({"key": "a", "status": "trained"})    # took 60 s for an estimate of 40 s: ratio 1.5
    >>> a.defer("b")                               # 60 + 1.5 x 40 s would end at 120
    'not started: would not finish before the deadline'
    """

    def __init__(self, deadline: float, estimate, clock=time.monotonic):
        self.deadline, self.estimate, self.clock = deadline, estimate, clock
        self.ratios: list[float] = []
        self.started: dict[str, float] = {}

    def defer(self, key: str) -> str | None:
        """None when the run ``key`` still fits (it starts now), else the reason it is not started."""
        guess = self.estimate(key) * (statistics.median(self.ratios) if self.ratios else 1.0)
        now = self.clock()
        if now + guess > self.deadline:
            return NOT_STARTED
        self.started[key] = now
        return None

    def finished(self, row: dict) -> None:
        """Learn from a finished row of the runner: a run trained since :meth:`defer` let it
        start adds its ratio of real to estimated seconds."""
        key = row["key"]
        if row["status"] == "trained" and key in self.started and self.estimate(key) > 0:
            self.ratios.append((self.clock() - self.started[key]) / self.estimate(key))
