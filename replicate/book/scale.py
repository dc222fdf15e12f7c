"""The scale box atop every experiment chapter (issue #24, item 3): what a chapter's runs
are and what they can decide, said on its first screen.

The numbers of the box - training images, epochs and SGD steps, augmentation, network, test
error, test-set size, and the ECE that a *perfectly calibrated* model would show at that
test-set size (the noise floor) - are a :class:`replicate.comparison.scale.Scale`, computed
from the chapter's runs by :func:`replicate.comparison.scale.describe`. :class:`ScaleBox` writes them as a MyST
admonition (``text/markdown``, for ``{glue:md}`` at the top of the chapter) and as HTML
(``text/html``, for the cross-page ``{glue:any}`` of the book's introduction); what a profile
can and cannot decide is :data:`VERDICT_SCOPE`, one entry per profile, so a chapter
rendered at ``gpu`` says so with its own numbers.
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

__all__ = ["VERDICT_SCOPE", "FLOOR_LINK", "ScaleBox"]


def _span(values, fmt="{:,}") -> str:
    lo, hi = min(values), max(values)
    return fmt.format(lo) if lo == hi else f"{fmt.format(lo)}-{fmt.format(hi)}"




# ----------------------------------------------------------------------------- the box
def _items(s, link: str | None) -> tuple[str, list[tuple[str, str]]]:
    scope = VERDICT_SCOPE.get(s.profile, VERDICT_SCOPE["paper"])
    can, cannot = (x.format(floor=s.floor_text) for x in scope)
    papers = s.profile in ("paper",)
    epochs = _span(s.epochs)
    steps = _span(s.steps)
    seeds = ", ".join(map(str, s.seeds))
    title = f"The scale of these experiments: profile {s.profile}"
    items = [
        ("Data", f"{s.data}: {s.n_train:,} training images, {s.n_val:,} validation images and "
                 f"{s.n_test:,} test images" + ("" if papers else
                                                 f" (the papers train on {s.paper_n_train:,} images)")),
        ("Training", f"{', '.join(s.networks)}; {epochs} epochs of batch {s.batch_size}, {steps} SGD steps"
                     + ("" if papers else f" (the papers: {s.paper_epochs} epochs, {s.paper_steps:,} steps)")
                     + "; " + ("training images augmented (random crop and flip)" if s.augment
                               else "no augmentation (the papers crop and flip)")
                     + (f"; {s.precision}" if s.precision != "float32" else "")),
        ("Runs", f"{s.n_runs} run{'s' if s.n_runs != 1 else ''}, seed{'s' if len(s.seeds) != 1 else ''} {seeds}; "
                 f"test error {_span([s.error[0], s.error[1]], '{:.1f}')} %"),
        ("Noise floor", f"a perfectly calibrated model with these runs' test confidences would show an ECE of "
                        f"{s.floor_text} % on {s.n_test:,} test images (15 equal-width bins; mean of "
                        f"{s.floor_reps} simulated test sets per run" + (f"; see {link}" if link else "") + ")"),
        ("This scale can decide", can),
        ("It cannot decide", cannot),
    ]
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
