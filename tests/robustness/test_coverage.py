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
        "fedlab.online.algorithms.OMDState", "fedlab.primer.algorithms.QuadraticState",
        "fedlab.engine.local.OptimizerState", "fedlab.sfedpo.algorithms.SFedPOState",
        "fedlab.streams.algorithms.StreamState", "fedlab.streams.algorithms.ScaffoldStreamState")},
    # result records: returned by a function of the package, read by others
    **{name: "a result record returned by the package" for name in (
        "fedlab.availability.algorithms.cafed.CafedDecision", "fedlab.availability.bounds.BoundConstants",
        "fedlab.availability.bounds.EpsOptMinimizer", "fedlab.availability.bounds.SubsetBounds",
        "fedlab.data.synthetic.GaussianMixtureSample", "fedlab.gmm.LocalStatistics",
"fedlab.knnper.bounds.KNNBoundConstants",
        "fedlab.knnper.experiments.NewClientFeatures", "fedlab.online.data.GMMStep", "fedlab.engine.local.LocalResult",
        "fedlab.streams.bounds.Importance", "fedlab.streams.data.MemorySchedule", "fedlab.exercises.Feedback",
        "fedlab.exercises.Mistake", "fedlab.records.Record")},
    "fedlab.exercises.Exercise": "the abstract base of the three exercise kinds (each has its case)",
    "fedlab.exercises.reference_run": "takes no argument (reads FEDLAB_REFERENCE_ANSWERS)",
    "fedlab.records.machine": "takes no argument",
    # no input, or not a call
    "fedlab.data.vision.data_dir": "takes no argument (reads FEDLAB_DATA)",
    "fedlab.engine.local.DivergenceError": "an exception class",
    "fedlab.data.fetch.DownloadError": "an exception class, raised by download and fetch",
    "fedlab.paper_mode.DataAbsent": "an exception class, raised by start_paper_mode",
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
        unknown = (set(case.args) | set(case.edge)) - set(params)
        assert not unknown, f"{case.name}: the case passes unknown arguments {sorted(unknown)}"


def test_the_check_reports_an_accepted_bad_value():
    """The harness itself: a callable that ignores its argument fails the check."""
    from harness import Case, Real

    def lenient(x=1.0):
        return x

    case = Case("fedlab.tables.paired_t", {"x": Real(1.0)}, fn=lenient, auto=False)
    with pytest.raises(pytest.fail.Exception, match="accepted the bad value"):
        expect_rejection(case, "x", float("nan"))


@pytest.mark.parametrize("message, named", [
    ("k must be an integer in [1, inf], got 0.", True), ("h=0.99 leaves no fresh client.", True),
    ("names: give at least one data set name.", True), ("setting.dataset must be one of ['femnist']", True),
    ("unknown option 'k'", True), ("kNN-Per needs a model with a hidden representation", False),
    ("the k-NN search", False), ("data.k must hold integers", False), ("a rank-k matrix", False),
])
def test_a_message_names_the_argument_as_an_identifier(message, named):
    from harness import names_argument

    assert names_argument(message, ("k", "h", "names", "setting")) is named


def test_a_rejection_counts_only_when_the_valid_call_succeeds():
    """A call that fails whatever the argument (here: the valid value is out of range) proves nothing."""
    from harness import Case, Fixed, Int

    from fedlab._validation import check_int

    case = Case("fedlab.tables.paired_t", {"name": Fixed("k"), "value": Int(0, low=1), "low": Fixed(1)},
                fn=check_int, auto=False)
    with pytest.raises(AssertionError, match="the valid call fails"):
        expect_rejection(case, "value", 1.5)


def test_edge_values_are_the_closed_ends_of_a_range():
    from harness import Case, Int, Real

    assert Int(3, low=1, high=5).edges() == [1, 5] and Real(0.5, low=0, high=1, high_open=True).edges() == [0]
    case = Case("fedlab.tables.paired_t", {"n": Int(3, low=1), "std": Real(0.5, low=0)}, edge=("n", "std"))
    assert case.edge == {"n": [1], "std": [0]}
    with pytest.raises(AssertionError, match="edge values"):
        Case("fedlab.tables.paired_t", {"mean": Real(1.0)}, edge=("mean",))  # no closed bound: nothing to call
