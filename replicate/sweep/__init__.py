"""``replicate sweep``: train a chapter's runs in parallel, locally or on a Slurm cluster
through submitit, then execute the chapter, which loads every run from the store.

- :mod:`.plan` -- the chapter's own plan for the given parameters (the function the
  chapter calls), the table of its runs with estimated costs;
- :mod:`.worker` -- one job: train one run into the store, with its own log file;
  requeueable by submitit (resumes from the run's checkpoint);
- :mod:`.execute` -- the local process pool (k trainings per GPU, optional time limits) and
  the submitit job array, with a progress bar and a summary of what each run did.
"""
from .execute import SLURM_DEFAULTS, Summary, run_local, run_submitit
from .plan import chapter_parameters, runs_table, sweep_plan, totals
from .worker import TrainJob, train_one

__all__ = ["sweep_plan", "chapter_parameters", "runs_table", "totals", "run_local", "run_submitit",
           "Summary", "SLURM_DEFAULTS", "TrainJob", "train_one"]
