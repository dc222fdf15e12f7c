"""The scale box atop every experiment chapter (issue #24, item 3): what a chapter's runs
are and what they can decide, said on its first screen.

The numbers of the box - training images, epochs and SGD steps, augmentation, network, test
error, test-set size, and the ECE that a *perfectly calibrated* model would show at that
test-set size (the noise floor) - are a :class:`replicate.comparison.scale.Scale`, computed
from the chapter's runs by :func:`replicate.comparison.scale.describe`. :class:`ScaleBox` writes them as a MyST
admonition (``text/markdown``, for ``{glue:md}`` at the top of the chapter) and as HTML
(``text/html``, for the cross-page ``{glue:any}`` of the book's introduction); what a profile
can and cannot decide is :data:`VERDICT_SCOPE`, one entry per profile, so a chapter
rendered at ``gpu`` says so with its own numbers. Every run the chapter shows, of every group
and kind, is said per kind of rows with its own profile, data, network, epochs, seeds and split
sizes (:func:`rows_text` of :attr:`Scale.rows <replicate.comparison.scale.Scale>`): a chapter
that shows its image rows at ``gpu`` and its text rows at ``cpu`` names both profiles in its
title and says what each can decide.
"""
from __future__ import annotations

import html

#: profile -> (what its runs can decide, what they cannot); ``{floor}`` is the noise floor.
VERDICT_SCOPE = {
    "smoke": ("nothing about the papers: these runs only show that the code runs end to end",
              "any claim of any paper"),
    "cpu": ("whether a paper's conclusion survives in a small, short, unaugmented setting: the "
            "direction of an effect (which losses lower the ECE before temperature scaling, whether "
            "temperature scaling closes the gap) when it is larger than the noise floor",
            "the papers' numbers, or whether a conclusion holds for the papers' networks trained to "
            "convergence; nor a difference of ECE between two single runs that is about the size of "
            "the noise floor ({floor} %)"),
    "gpu": ("whether a paper's conclusion holds for its network on the full training set with a "
            "schedule one tenth as long as the paper's, for differences larger than the noise floor",
            "the papers' exact numbers (350 epochs, float32), effects that appear only late in a long "
            "schedule, or differences of ECE about the size of the noise floor ({floor} %)"),
    "paper": ("the papers' numbers, on the papers' protocol (up to the copy of the data and the seeds)",
              "differences of ECE about the size of the noise floor ({floor} %) or of the spread over "
              "seeds"),
}

__all__ = ["VERDICT_SCOPE", "FLOOR_LINK", "ScaleBox", "rows_text", "setting_text"]


def _span(values, fmt="{:,}") -> str:
    lo, hi = min(values), max(values)
    return fmt.format(lo) if lo == hi else f"{fmt.format(lo)}-{fmt.format(hi)}"




def _seeds(seeds) -> str:
    return f"seed{'s' if len(seeds) != 1 else ''} {', '.join(map(str, seeds))}"


def rows_text(rows) -> str:
    """What every kind of the chapter's rows rests on, one clause per
    :class:`replicate.comparison.scale.Rows`: "image rows: profile gpu, CIFAR-10, resnet18,
    30 epochs, seed 1 (11 runs), 45,000 training, 5,000 validation and 10,000 test images"."""
    def one(r) -> str:
        return (f"{r.kind} rows: profile {r.profile}, {', '.join(r.data)}, {', '.join(r.networks)}, "
                f"{_span(r.epochs)} epochs, {_seeds(r.seeds)} ({r.n_runs} run{'s' if r.n_runs != 1 else ''}), "
                f"{_span(r.n_train)} training, {_span(r.n_val)} validation and {_span(r.n_test)} test {r.unit}")
    return "; ".join(one(r) for r in rows)


def setting_text(s) -> str:
    """The main image runs of a :class:`~replicate.comparison.scale.Scale` in one phrase for a
    chapter's prose, from the numbers of its box: "tiny_cnn (width=32) trained for 15 epochs on
    15,000 CIFAR-10 (JPEG q75) images (profile cpu)"."""
    return (f"{' and '.join(s.networks)} trained for {_span(s.epochs)} epochs on {s.n_train:,} {s.data} images "
            f"(profile {s.profile})")


def _title(s) -> str:
    rows = getattr(s, "rows", ())
    profiles = list(dict.fromkeys(r.profile for r in rows)) or [s.profile]
    if len(profiles) == 1:
        return f"The scale of these experiments: profile {profiles[0]}"
    per = {p: [r.kind for r in rows if r.profile == p] for p in profiles}
    return ("The scale of these experiments: profiles "
            + " and ".join(f"{p} ({' and '.join(dict.fromkeys(k))} rows)" for p, k in per.items()))


# ----------------------------------------------------------------------------- the box
def _items(s, link: str | None) -> tuple[str, list[tuple[str, str]]]:
    scope = VERDICT_SCOPE.get(s.profile, VERDICT_SCOPE["paper"])
    can, cannot = (x.format(floor=s.floor_text) for x in scope)
    papers = s.profile in ("paper",)
    epochs = _span(s.epochs)
    steps = _span(s.steps)
    seeds = ", ".join(map(str, s.seeds))
    title = _title(s)
    mixed = len({r.kind for r in getattr(s, "rows", ())}) > 1
    items = [
        ("Data", f"{'image rows: ' if mixed else ''}"
                 f"{s.data}: {s.n_train:,} training images, {s.n_val:,} validation images and "
                 f"{s.n_test:,} test images" + ("" if papers else
                                                 f" (the papers train on {s.paper_n_train:,} images)")),
        ("Training", f"{', '.join(s.networks)}; {epochs} epochs of batch {s.batch_size}, {steps} SGD steps"
                     + ("" if papers else f" (the papers: {s.paper_epochs} epochs, {s.paper_steps:,} steps)")
                     + "; " + ("training images augmented (random crop and flip)" if s.augment
                               else "no augmentation (the papers crop and flip)")
                     + (f"; {s.precision}" if s.precision != "float32" else "")),
        ("Runs of the main image tables" if getattr(s, "rows", ()) else "Runs", f"{s.n_runs} run{'s' if s.n_runs != 1 else ''}, seed{'s' if len(s.seeds) != 1 else ''} {seeds}; "
                 f"test error {_span([s.error[0], s.error[1]], '{:.1f}')} %"),
        *([("Every run the chapter shows", rows_text(s.rows))] if getattr(s, "rows", ()) else []),
        ("Noise floor", f"a perfectly calibrated model with these {'image ' if mixed else ''}runs' test confidences would show an ECE of "
                        f"{s.floor_text} % on {s.n_test:,} test images (15 equal-width bins; mean of "
                        f"{s.floor_reps} simulated test sets per run" + (f"; see {link}" if link else "") + ")"),
        ("This scale can decide", can),
        ("It cannot decide", cannot),
    ]
    for prof in dict.fromkeys(r.profile for r in getattr(s, "rows", ()) if r.profile != s.profile):
        kinds = " and ".join(dict.fromkeys(r.kind for r in s.rows if r.profile == prof))
        other = VERDICT_SCOPE.get(prof, VERDICT_SCOPE["paper"])
        items.append((f"The {kinds} rows, at profile {prof}, can decide",
                      other[0]))
    return title, items


#: Where the noise floor is explained, as a MyST link from a chapter in book/chapters/.
FLOOR_LINK = "[Measuring calibration](measuring_calibration.ipynb#how-the-bias-depends-on-the-number-of-examples)"


class ScaleBox:
    """The box: ``_repr_markdown_`` is a MyST admonition (with a link to the noise-floor
    section), ``_repr_html_`` the same text as an HTML admonition (no link), ``scale`` the
    numbers."""

    def __init__(self, scale):
        self.scale = scale

    def _repr_markdown_(self) -> str:
        title, items = _items(self.scale, FLOOR_LINK)
        body = "\n".join(f"- **{k}**: {v}." for k, v in items)
        return f":::{{admonition}} {title}\n:class: important\n\n{body}\n:::\n"

    def _repr_html_(self) -> str:
        title, items = _items(self.scale, "the chapter Measuring calibration")
        lis = "".join(f"<li><p><strong>{html.escape(k)}</strong>: {html.escape(v)}.</p></li>" for k, v in items)
        return (f'<div class="admonition important"><p class="admonition-title">{html.escape(title)}</p>'
                f"<ul>{lis}</ul></div>")

    def __str__(self) -> str:
        title, items = _items(self.scale, None)
        return title + "\n" + "\n".join(f"- {k}: {v}." for k, v in items)
