"""The chapter contract: what every experiment chapter provides, and the pieces they share.

An experiment chapter is one folder, ``replicate/experiments/<chapter>/``, named as its
notebook ``exp_<chapter>`` (and as the paper's chapter in :data:`replicate.papers.PAPERS`),
with five modules, one per role, each role one name everywhere:

``plan``
    ``PAPER`` (the paper key), ``CHAPTER`` (the notebook), ``SECTION`` (the heading that
    decides the claims), ``METHOD_KEYS``, ``SMOKE_METHODS``, ``default_methods(profile)``
    and ``plan(**parameters) -> Plan`` with exactly the chapter's parameters cell (so
    ``replicate sweep`` and ``replicate book`` plan a chapter without executing it).
``claims``
    ``definitions(...)``: the paper's claims, each a :class:`replicate.claims.claim.Claim`
    with its one test of :mod:`replicate.claims.tests` and the rows it covers.
``report``
    ``report(plan, runs)``: the chapter's :class:`replicate.comparison.report.Report`, whose
    sections (the evaluation, the tables, the claims on both sides, ...) are computed once
    and kept on disk; ``decide(plan, runs)`` (the claims on the paper's printed tables and on
    our runs) and ``claims(profile)``, the builder the claims registry finds by the folder's
    name (it reads the runs from the store and never trains).
``views``
    what the chapter shows: tables with their captions, and the texts glued into its prose.
``figures``
    the chapter's figures, drawn from runs or the report (they decide nothing).

The notebook reaches them through one alias, ``ch = rp.experiments.<chapter>``:
``ch.plan.plan(...)``, ``ch.report.report(plan, runs)``, ``ch.views``, ``ch.figures``; its
verdict prose reads :func:`replicate.claims.verdict_counts` with the noise model's rule
(:func:`replicate.comparison.noise.rule_text`).

Shared here: :data:`SECTION`, :func:`at_profile` (a default that depends on the profile),
:func:`not_in_store` (the reason a claim on our runs is not tested),
:func:`damaged_sides` (our rows left out because a run of theirs is damaged), and two texts
of the verdict prose: :func:`tally_glossed` (a side's tally, with what "inconclusive" means
only when some claim is) and :func:`quantifier_words` (the rows the papers' quantifiers ask
for, from :mod:`replicate.claims.wording`); :func:`text_scale` says how a profile's text runs
fall short of the ``paper`` profile's.
"""
from __future__ import annotations

#: The heading of an experiment chapter that decides its claims (the ledger links to it).
SECTION = "Verdict"


def at_profile(profile: str, smoke, default):
    """``smoke`` at the ``smoke`` profile, else ``default`` (a chapter's methods, seeds, ...)."""
    from ..profiles import get_profile

    return smoke if get_profile(profile).name == "smoke" else default


def not_in_store(profile: str, plan=None) -> str:
    """Why a claim on our runs is not tested when the chapter's runs are missing: with the
    chapter's ``plan``, its damaged runs when it has some ("run <key> damaged (<file>...)",
    :func:`replicate.runs.damage.reason`), else that its runs are not in the store.

    Parameters
    ----------
    profile : str
        The profile of the runs.
    plan : replicate.comparison.Plan, optional
        The chapter's plan, whose runs were looked up (:func:`replicate.comparison.load`).

    Returns
    -------
    str
    """
    if plan is not None:
        from ..runs import damage

        why = damage.reason(plan.configs())
        if why:
            return why
    return f"the chapter's {profile} runs are not in the run store (execute the chapter at that profile)"


def damaged_sides(plan, runs: dict | None, groups=None) -> list:
    """Our side of the rows a chapter left out because a run of theirs is damaged: one
    :class:`replicate.claims.evidence.Missing` per group of ``groups`` (default all of the
    plan's) that ``runs`` (``{group: {(method, seed): Run}}``) lacks and that holds a damaged
    run, labelled with the group's profile and rows, every claim ``not tested`` there with
    "run <key> damaged". Empty when ``runs`` is empty (the whole side is then missing, with
    :func:`not_in_store`'s reason) or no run of a left-out group is damaged.

    Parameters
    ----------
    plan : replicate.comparison.Plan
        The chapter's plan.
    runs : dict or None
        The groups the chapter loaded.
    groups : iterable of str, optional
        The groups the chapter's claims read.

    Returns
    -------
    list of Missing
    """
    from ..claims.evidence import Missing
    from ..runs import damage

    if not runs:
        return []
    out = []
    for g in plan.groups if groups is None else groups:
        if runs.get(g) or g not in plan.groups:
            continue
        why = damage.reason(cfg.key for cfg in plan.group(g).values())
        if why:
            out.append(Missing("ours", f"{plan.profile_of(g)} ({g} rows)", why))
    return out


#: What an inconclusive verdict on our runs means, said after a tally that counts one.
INCONCLUSIVE_GLOSS = "inconclusive: the runs cannot resolve the difference"


def tally_glossed(counts: dict, side: str) -> str:
    """The tally of ``side`` from :func:`replicate.claims.verdict_counts`'s texts
    (``tally_<side>``), followed by :data:`INCONCLUSIVE_GLOSS` in brackets when
    ``n_inconclusive_<side>`` is not 0, so the gloss never explains a verdict the tally does
    not name.

    Parameters
    ----------
    counts : dict
        The texts of :func:`replicate.claims.verdict_counts` for a claims frame.
    side : str
        The side, as named in ``counts`` (``"ours"``, ``"eq4"``, ...).

    Returns
    -------
    str
    """
    tally = counts[f"tally_{side}"]
    return f"{tally} ({INCONCLUSIVE_GLOSS})" if int(counts[f"n_inconclusive_{side}"]) else tally


def quantifier_words() -> dict[str, str]:
    """How many rows each of the papers' quantifiers asks for, in words, from the one reading
    the book uses (:func:`replicate.claims.wording.quantifier_text`): glue texts ``q_most``
    ("more than half of the rows"), ``q_almost_all`` ("at least 80% of the rows") and
    ``q_every`` ("all the rows").

    Returns
    -------
    dict of str
    """
    from ..claims import wording

    return {f"q_{q.replace(' ', '_')}": wording.quantifier_text(q) for q in ("most", "almost all", "every")}


def text_scale(profile: str) -> str:
    """How the text runs of ``profile`` differ from the ``paper`` profile's (the paper's
    protocol), read from both profiles' ``text`` settings: the documents' length, the network's
    settings and the epochs; "so the text row measures weaker classifiers" when the documents
    or the network are cut.

    Parameters
    ----------
    profile : str
        The profile of the text runs.

    Returns
    -------
    str
    """
    from ..profiles import get_profile

    p, ref = get_profile(profile), get_profile("paper")
    mine, full = p.text, ref.text
    cuts = []
    if mine["data_params"].get("max_len") != full["data_params"].get("max_len"):
        cuts.append(f"documents cut to {mine['data_params']['max_len']} tokens")
    if mine["model_params"] != full["model_params"]:
        cuts.append("the network at " + ", ".join(f"{k}={v}" for k, v in mine["model_params"].items()))
    weaker = bool(cuts)
    if mine["epochs"] != full["epochs"]:
        cuts.append(f"at most {mine['epochs']} epoch{'s' if mine['epochs'] != 1 else ''} (paper profile: "
                    f"{full['epochs']})")
    if not cuts:
        return f"the {p.name} profile's text runs follow the paper profile's text protocol"
    listed = cuts[0] if len(cuts) == 1 else ", ".join(cuts[:-1]) + " and " + cuts[-1]
    return (f"the {p.name} profile's text runs depart from the paper profile's full documents and network: "
            if weaker else f"the {p.name} profile's text runs keep the paper profile's documents and network, "
            "with ") + listed + (", so the text row measures weaker classifiers than the paper's" if weaker else "")
