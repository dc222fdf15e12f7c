"""The numbers the claims of Mukhoti et al. (2020) are decided on: our runs of each group,
evaluated from their logits, and the paper's closest printed row, in one shape (the summary
frame of :func:`replicate.comparison.summarise`) so that one rule reads either; and our runs
themselves (:func:`sides`), which a claim's noise test reads."""
from __future__ import annotations

from ... import comparison as cmp
from ...comparison import chapter, noise


def sides(p: cmp.Plan, runs: dict | None) -> tuple[dict, dict, dict]:
    """``({label: summary}, {label: reason}, {label: RunEvidence})``: our runs of each group
    (evaluated from their logits; the third dict holds the runs behind each of our labels)
    and the paper's reference rows; ``runs`` None (not in the store) makes our evidence
    missing, with the reason."""
    summaries, missing, ours = {}, {}, {}
    for group, dataset in (("image", next(iter(p.image.values())).dataset),
                           ("text", next(iter(p.text.values())).dataset if p.text else None)):
        if dataset is None:
            continue
        ref = p.references[dataset]
        if runs is not None:
            label, frame = cmp.evidence_label(runs[group]), cmp.evaluate_runs(runs[group])
            summaries[label] = cmp.summarise(frame)
            ours[label] = noise.of_runs(runs[group], frame)
        else:
            missing[f"ours: {p.profile}, {dataset}"] = chapter.not_in_store(p.profile)
        if ref.found:
            summaries[f"paper: {ref.note}"] = cmp.paper_values(ref)
    return summaries, missing, ours


def evidence(p: cmp.Plan, runs: dict | None) -> tuple[dict, dict]:
    """The numbers the claims are tested on: ``({label: summary}, {label: reason})`` - our
    runs of each group (evaluated from their logits) and the paper's reference rows;
    ``runs`` None (not in the store) makes our evidence missing, with the reason."""
    return sides(p, runs)[:2]
