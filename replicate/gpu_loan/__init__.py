"""The GPU loan tooling (issue #20): spending a lent GPU machine on the book's runs.

A GPU machine is lent rarely, for 15 minutes of device time, with at most 64 MiB carried to
it and 8 files of 16 MiB back. Everything that exists only for such a loan lives here; the
general sweep it trains with (:mod:`replicate.sweep`: plan, execute, worker) knows nothing
of loans. Imports point one way: this package uses :mod:`replicate.sweep`, never the reverse.

- :mod:`.queue` -- the global GPU queue: every run the chapters plan at a profile, in the
  order a loan should train them, and the device time it takes;
- :mod:`.job` -- the GPU job (``replicate gpu-job`` on the machine): train the queue's next
  runs within the call's budget and pack them into archives that travel back;
- :mod:`.deadline` -- the call's budget as the sweep runner's deadline and hard stop, and
  the admission of the runs that still fit before it;
- :mod:`.machine` -- the lent machine as the job sees it: its state folder, the job's log,
  the device report, the CUDA MPS daemon;
- :mod:`.device_chapter` -- the Mukhoti chapter executed on the machine once its runs are
  finished;
- :mod:`.wheels` -- the Python wheels carried to the machine (the Jupyter stack it lacks);
- :mod:`.travel` -- what travels to the machine, keeping the committed logits off it;
- :mod:`.prepare` -- the development machine's side of a loan: the queue's listing, the
  travel check that fills ``.gpu-carry/``, the staged copy for a rehearsal, the restore.

Each module is imported when first reached (``rp.gpu_loan.queue``), so the command line's
parser stays cheap.
"""
from .. import lazy_submodules

__getattr__, __dir__ = lazy_submodules(__name__, __path__)
