"""Every public callable of fedlab (from each module's ``__all__``) has a robustness case, or a reviewed reason not to.

A new public function or class without a case fails :func:`test_every_public_callable_has_a_case`; add its case
to the ``cases_*.py`` of its area (or, if it takes no user-controlled input, an entry in :data:`EXCLUDED`).
"""
import importlib
from pathlib import Path

import pytest

from harness import expect_rejection, public_callables

CASE_MODULES = sorted(p.stem for p in Path(__file__).parent.glob("cases_*.py"))

EXCLUDED = {
    # algorithm states: frozen records that init/round build and only the algorithm reads
    **{name: "an algorithm state, built by init/round" for name in (
        "fedlab.algorithms.fedem.MixtureState", "fedlab.algorithms.fedem.DecentralizedMixtureState",
        "fedlab.algorithms.personalized.FineTuneState", "fedlab.algorithms.personalized.PersonalState",
        "fedlab.algorithms.personalized.ClusterState", "fedlab.availability.algorithms.baselines.AvailabilityState",
        "fedlab.dynamic.algorithms.LeastSquaresRuns", "fedlab.dynamic.algorithms.TrackingErrors",
        "fedlab.gmm.GMMState", "fedlab.markovian.algorithms.StreamingState",
        "fedlab.online.algorithms.GaussianFEMOMDState", "fedlab.online.algorithms.FEMOMDState",
        "fedlab.primer.toys.QuadraticState", "fedlab.sfedpo.algorithms.SFedPOState",
        "fedlab.streams.algorithms.StreamState", "fedlab.streams.algorithms.ScaffoldStreamState")},
    # result records: returned by a function of the package, read by others
    **{name: "a result record returned by the package" for name in (
        "fedlab.availability.algorithms.cafed.CafedDecision", "fedlab.availability.bounds.BoundConstants",
        "fedlab.availability.bounds.EpsOptMinimizer", "fedlab.availability.bounds.SubsetBounds",
        "fedlab.data.synthetic.GaussianMixtureSample", "fedlab.gmm.LocalStatistics",
"fedlab.knnper.bounds.KNNBoundConstants",
        "fedlab.knnper.experiments.NewClientFeatures", "fedlab.online.algorithms.GMMStep",
        "fedlab.streams.bounds.Importance", "fedlab.streams.data.MemorySchedule")},
    # no input, or not a call
    "fedlab.data.vision.data_dir": "takes no argument (reads FEDLAB_DATA)",
    "fedlab.engine.local.DivergenceError": "an exception class",
    "fedlab.data.fetch.DownloadError": "an exception class, raised by download and fetch",
    "fedlab.paper.DataAbsent": "an exception class, raised by start_paper_mode",
    "fedlab.experiments.sweep.SweepError": "an exception class, raised by sweep",
    "fedlab.engine.runner.Algorithm": "a typing Protocol, never instantiated",
    "fedlab.experiments.store.RunClaim": "a lock handle returned by ResultStore.claim (a file descriptor)",
}

EXCLUDED_MODULES = {
    "fedlab.workbook": "the notebook runner and report builder, rewritten by a parallel change (its inputs are the "
                       "repository's own notebooks and stores); its validation belongs to that change",
}
"""Whole modules left out, with the reason (every public callable of theirs is excluded)."""


def _excluded(name: str) -> bool:
    return name in EXCLUDED or name.rsplit(".", 1)[0] in EXCLUDED_MODULES


def all_cases():
    return [case for module in CASE_MODULES for case in importlib.import_module(module).CASES]


def test_every_public_callable_has_a_case():
    public, without_all = public_callables()
    covered = {case.name for case in all_cases()}
    missing = sorted(name for name in public - covered if not _excluded(name))
    assert not missing, f"public callables without a robustness case (add one to tests/robustness): {missing}"
    assert not without_all, f"public modules without __all__: {without_all}"


def test_the_exclusions_are_public_and_uncovered():
    public, _ = public_callables()
    covered = {case.name for case in all_cases()}
    assert not set(EXCLUDED) - public, f"stale exclusions: {sorted(set(EXCLUDED) - public)}"
    assert not set(EXCLUDED) & covered, f"excluded yet covered: {sorted(set(EXCLUDED) & covered)}"
    modules = {name.rsplit(".", 1)[0] for name in public}
    assert set(EXCLUDED_MODULES) <= modules, f"stale module exclusions: {sorted(set(EXCLUDED_MODULES) - modules)}"


def test_every_case_names_a_real_argument():
    import inspect

    for case in all_cases():
        try:
            params = inspect.signature(case.fn).parameters
        except (TypeError, ValueError):
            continue
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
            continue
        unknown = set(case.args) - set(params)
        assert not unknown, f"{case.name}: the case passes unknown arguments {sorted(unknown)}"


def test_the_check_reports_an_accepted_bad_value():
    """The harness itself: a callable that ignores its argument fails the check."""
    from harness import Case, Real

    def lenient(x=1.0):
        return x

    case = Case("fedlab.tables.paired_t", {"x": Real(1.0)}, fn=lenient, auto=False)
    with pytest.raises(pytest.fail.Exception, match="accepted the bad value"):
        expect_rejection(case, "x", float("nan"))
