r"""Paper claims as data: what a paper says, what we measured, of what kind, at what scale, and the verdict a stated
rule gives.

A :class:`Claim` holds the chapter, the source ("Table 2.5, Gaia, STAR"), the paper's value (a number, a range
``(low, high)`` with ``None`` for an open end, or a qualitative statement), the measured value and a rule:

* ``"tolerance"``: the measured number lies within ``tolerance`` of the paper's number (or range); ``relative=True``
  scales the tolerance by :math:`|\text{paper}|`;
* ``"direction"``: the sign is the claim (a gain, a gap). The signs agree, and if a tolerance is given the size
  lies within it; a sign confirmed without its size (none given, or the paper's excluded) reads *direction only*;
* ``"qualitative"``: a statement checked from measured data; ``holds`` says whether it held.

Every claim says what it is (:data:`KINDS`): an *experiment* re-runs a paper's measured result; an *analytic* claim
recomputes a paper's formula, closed form or bound; a *consistency* claim checks our code against an invariant or
itself (its verdicts are "consistent"/"inconsistent", never a reproduction); an *erratum* shows that the paper's
printed number is wrong: the rule is applied to the ``corrected`` value and a match reads "erratum confirmed".
Every claim carries the scale it was measured at (:data:`SCALES`).

A claim measured over seeds gives the per-seed values (``seeds``): the measured value is their mean and the rule
is applied to its 95 % Student-t interval (:func:`fedlab.tables.mean_interval`). The interval inside the tolerance
band reproduces, outside it does not, and across its edge (or across zero for a sign) the verdict is
*inconclusive*; :attr:`Claim.seeds_needed` says about how many seeds would decide. A claim whose measured value is
``None`` was *not run*, and says why. The verdict is always computed, never typed. Chapters build their claims in
``fedlab.<chapter>.claims`` with a :class:`ClaimBuilder`; notebooks render them with :func:`show_claims`, which also
attaches them to the cell's output as JSON (:data:`MIME_TYPE`); the workbook collects them into the scoreboard.

Examples
--------
>>> c = Claim("01_topology", "Table 2.5, Géant, RING", "cycle time (ms)", paper=109, measured=109.0,
...           rule="tolerance", kind="analytic", scale="full", tolerance=0.05, relative=True)
>>> c.verdict
'reproduced'
>>> Claim("05_data_streams", "Fig. 4.3", "Historical − Uniform at 5 % (pp)", paper=-14.6, measured=-6.5,
...       rule="direction", kind="experiment", scale="smoke", tolerance=2.0).verdict
'direction only'
>>> gain = Claim("04_knnper", "Table 3.5", "kNN-Per − FedAvg (pp)", paper=2.0, measured=None, rule="direction",
...              kind="experiment", scale="smoke", tolerance=1.0, seeds=(0.5, 3.5, 2.0))
>>> gain.verdict, gain.n_seeds, gain.seeds_needed
('inconclusive', 3, 5)
"""
from __future__ import annotations

import json
import math
import numbers
import os
import statistics
import tempfile
from collections import Counter
from dataclasses import KW_ONLY, asdict, dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence, Union

from fedlab._validation import check_bool, check_choice, check_int, check_path, check_real, check_type
from fedlab.tables import markdown_table, mean_interval, t_critical

__all__ = ["RULES", "KINDS", "SCALES", "VERDICTS", "MIME_TYPE", "Claim", "ClaimBuilder", "tally", "tally_by_kind",
           "claims_table", "summary", "show_claims", "save_claims", "load_claims", "result_at",
           "check_results"]

RULES = ("tolerance", "direction", "qualitative")
KINDS = ("experiment", "analytic", "consistency", "erratum")
SCALES = ("smoke", "full", "paper")
VERDICTS = ("reproduced", "direction only", "inconclusive", "not reproduced", "erratum confirmed", "consistent",
            "inconsistent", "not run")
MIME_TYPE = "application/vnd.fedlab.claims+json"
MAX_SEEDS = 10_000
"""The largest number of seeds :attr:`Claim.seeds_needed` reports; beyond it, no practical run decides."""

Value = Union[float, int, bool, str, tuple, list, None]
_BY_KIND = {"consistency": {"reproduced": "consistent", "direction only": "inconsistent",
                            "not reproduced": "inconsistent"},
            "erratum": {"reproduced": "erratum confirmed"}}


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _is_range(value: Any) -> bool:
    return (isinstance(value, (tuple, list)) and len(value) == 2
            and all(v is None or _is_number(v) for v in value) and any(v is not None for v in value))


def _format(value: Value, digits: int) -> str:
    """A readable value: numbers rounded, ranges as ``[a, b]`` / ``≤ b`` / ``≥ a``, booleans as yes/no."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if _is_number(value):
        return f"{value:.{digits}f}" if isinstance(value, float) or digits else str(value)
    if _is_range(value):
        lo, hi = value
        if lo is None:
            return f"≤ {_format(hi, digits)}"
        if hi is None:
            return f"≥ {_format(lo, digits)}"
        return f"[{_format(lo, digits)}, {_format(hi, digits)}]"
    return str(value)


@dataclass(frozen=True)
class Claim:
    """One paper claim and its measurement; :attr:`verdict` is computed from ``rule`` (see the module docstring).

    Parameters
    ----------
    chapter : str
        Notebook stem, e.g. ``"02_availability"``.
    source : str
        Where the paper says it ("Table 2.5, Gaia, STAR", "§4.4.5, Fig. 4.6").
    statement : str
        What is compared, with its unit ("cycle time (ms)", "CA-Fed − AdaFed (pp)").
    paper : number, (low, high) or str
        The paper's value; a range with ``None`` for an open end; a statement for qualitative claims.
    measured : number, str, bool or None
        Our value; ``None`` means not run (``why`` says why), unless ``seeds`` gives it as their mean.
    rule : {"tolerance", "direction", "qualitative"}
    kind : {"experiment", "analytic", "consistency", "erratum"}
    scale : {"smoke", "full", "paper"}
        The scale the measurement was made at (the notebook's ``MODE``).
    tolerance : float, optional
        Absolute (or, with ``relative``, relative) tolerance; required by ``"tolerance"``.
    relative : bool
    holds : bool, optional
        For ``"qualitative"``: whether the statement held in our measurement.
    seeds : tuple of float, optional
        One measured value per seed: the rule then judges their mean's 95 % interval.
    corrected : number or (low, high), optional
        For an erratum: the correct value, which the rule compares the measurement with.
    why : str
        What the reader needs to weigh the verdict: the deciding experiment, our analysis choices, why not run.
    digits : int
        Decimals when rendering numbers.
    """

    chapter: str
    source: str
    statement: str
    paper: Value
    measured: Value
    rule: str
    _: KW_ONLY
    kind: str
    scale: str
    tolerance: float | None = None
    relative: bool = False
    holds: bool | None = None
    seeds: tuple | None = None
    corrected: Value = None
    why: str = ""
    digits: int = 2

    def __post_init__(self) -> None:
        for name in ("chapter", "source", "statement"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name).strip():
                raise ValueError(f"{name} must be a non-empty string, got {getattr(self, name)!r}.")
        check_choice("rule", self.rule, RULES)
        check_choice("kind", self.kind, KINDS)
        check_choice("scale", self.scale, SCALES)
        if self.tolerance is not None:
            check_real("tolerance", self.tolerance, low=0)
        check_bool("relative", self.relative)
        check_type("holds", self.holds, bool, optional=True)
        check_type("why", self.why, str)
        check_int("digits", self.digits, low=0)
        self._check_range("paper", self.paper)
        if self.seeds is not None:
            self._set_seed_mean()
        if self.kind == "erratum":
            self._check_range("corrected", self.corrected)
            if self.rule != "qualitative" and self.corrected is None:
                raise ValueError(f"kind 'erratum' needs the corrected value (claim {self.source!r}).")
        elif self.corrected is not None:
            raise ValueError(f"corrected is for kind 'erratum' only, got kind {self.kind!r} (claim {self.source!r}).")
        if self.measured is None:
            if not self.why.strip():
                raise ValueError(f"why must say why the claim {self.source!r} was not run (measured is None).")
            return
        if self.rule == "tolerance":
            if self.tolerance is None:
                raise ValueError(f"rule 'tolerance' needs a tolerance (claim {self.source!r}).")
            self._check_numbers()
        elif self.rule == "direction":
            self._check_numbers()
            if not _is_number(self.paper) or self.paper == 0:
                raise ValueError(f"rule 'direction' needs a non-zero paper number, got {self.paper!r}.")
        elif not isinstance(self.holds, bool):
            raise ValueError(f"rule 'qualitative' needs holds=True/False (claim {self.source!r}), got {self.holds!r}.")

    def _check_range(self, name: str, value: Value) -> None:
        ends = value if _is_range(value) else (value,) if _is_number(value) else None
        if _is_range(value) and None not in ends and ends[0] > ends[1]:
            raise ValueError(f"{name} must be a range (low, high) with low <= high, got {value!r} "
                             f"(claim {self.source!r}).")
        if self.relative and ends is not None and all(v is None or v == 0 for v in ends):
            raise ValueError(f"relative=True scales the tolerance by |{name}|, which needs a non-zero {name} value, "
                             f"got {name}={value!r} (claim {self.source!r}); give an absolute tolerance instead.")

    def _set_seed_mean(self) -> None:
        """``seeds`` as a tuple of floats and ``measured`` as their mean (a given ``measured`` must be that mean)."""
        if self.rule == "qualitative" or isinstance(self.seeds, (str, bytes)) or not isinstance(self.seeds, Iterable):
            raise TypeError(f"seeds must be a sequence of per-seed numbers for a numeric rule, got {self.seeds!r} "
                            f"(claim {self.source!r}, rule {self.rule!r}).")
        seeds = tuple(float(check_real(f"seeds[{i}]", v)) for i, v in enumerate(self.seeds))
        if not seeds:
            raise ValueError(f"seeds must hold at least one value (claim {self.source!r}).")
        mean = mean_interval(seeds)[0]
        if self.measured is not None and not (_is_number(self.measured)
                                               and math.isclose(self.measured, mean, rel_tol=1e-12, abs_tol=1e-12)):
            raise ValueError(f"measured must be None or the mean {mean!r} of seeds, got {self.measured!r} "
                             f"(claim {self.source!r}).")
        object.__setattr__(self, "seeds", seeds)
        object.__setattr__(self, "measured", mean)

    def _check_numbers(self) -> None:
        if not (_is_number(self.paper) or _is_range(self.paper)):
            raise ValueError(f"paper must be a number or a (low, high) range for rule {self.rule!r}, "
                             f"got {self.paper!r}.")
        ends = self.paper if _is_range(self.paper) else (self.paper,)
        if not all(v is None or math.isfinite(v) for v in ends):
            raise ValueError(f"paper must hold finite numbers, got {self.paper!r}.")
        if not _is_number(self.measured) or not math.isfinite(self.measured):
            raise ValueError(f"measured must be a finite number for rule {self.rule!r}, got {self.measured!r}.")

    @property
    def n_seeds(self) -> int | None:
        """How many seeds the measurement is a mean over (``None`` for a single measurement)."""
        return None if self.seeds is None else len(self.seeds)

    @property
    def interval(self) -> tuple[float, float] | None:
        """The 95 % Student-t interval of the seed mean (``None`` without seeds)."""
        return None if self.seeds is None else mean_interval(self.seeds)[1:]

    def _band(self) -> tuple[float, float]:
        """The values the rule accepts: the target (paper, or corrected for an erratum) widened by the tolerance."""
        target = self.corrected if self.kind == "erratum" else self.paper
        lo, hi = target if _is_range(target) else (target, target)
        scale = max(abs(v) for v in (lo, hi) if v is not None) if self.relative else 1.0
        margin = (self.tolerance or 0.0) * scale
        return (-math.inf if lo is None else lo - margin), (math.inf if hi is None else hi + margin)

    def _judge(self) -> str:
        """The verdict of the rule before the kind names it (reproduced, direction only, inconclusive, not...)."""
        if self.rule == "qualitative":
            return "reproduced" if self.holds else "not reproduced"
        low, high = self.interval or (self.measured, self.measured)
        a, b = self._band()
        inside, outside = a <= low and high <= b, high < a or low > b
        size = "reproduced" if inside else "not reproduced" if outside else "inconclusive"
        if self.rule == "tolerance":
            return size
        sign = math.copysign(1, self.paper)
        near, far = sorted((sign * low, sign * high))      # the interval seen from the paper's side
        same, opposite = near > 0, far <= 0
        if opposite:
            return "not reproduced"
        if self.tolerance is None:
            return "direction only" if same else "inconclusive"
        if size == "not reproduced":            # the paper's size is excluded, whatever the sign
            return "direction only" if same else "not reproduced"
        return "reproduced" if same and size == "reproduced" else "inconclusive"

    @property
    def verdict(self) -> str:
        """One of :data:`VERDICTS`, computed from the rule and named by the kind."""
        if self.measured is None:
            return "not run"
        judged = self._judge()
        return _BY_KIND.get(self.kind, {}).get(judged, judged)

    @property
    def agrees(self) -> bool | None:
        """Whether the measurement agrees with the claim's statement: True for reproduced, consistent and erratum
        confirmed, False for not reproduced and inconsistent, None when undecided (inconclusive, direction only,
        not run)."""
        return {"reproduced": True, "consistent": True, "erratum confirmed": True, "not reproduced": False,
                "inconsistent": False}.get(self.verdict)

    @property
    def seeds_needed(self) -> int | None:
        """For an inconclusive claim over seeds: about how many seeds (same spread) would decide, else ``None``.

        The smallest n whose interval half-width :math:`t_{n-1} s/\\sqrt n` is below the distance from the mean to
        the nearest edge that decides (the tolerance band's, or zero for a sign); ``None`` when no spread, a mean on
        the edge, or more than :data:`MAX_SEEDS` seeds would be needed.
        """
        if self.verdict != "inconclusive" or self.seeds is None or len(self.seeds) < 2:
            return None
        mean, low, high = mean_interval(self.seeds)
        s = statistics.stdev(self.seeds)
        edges = [0.0] if self.rule == "direction" and low <= 0 <= high else [e for e in self._band() if math.isfinite(e)]
        distance = min(abs(mean - e) for e in edges)
        if distance == 0 or s == 0:
            return None
        n = 2
        while n <= MAX_SEEDS and t_critical(n) * s / math.sqrt(n) >= distance:
            n = n + 1 if n < 64 else int(n * 1.05)
        return n if n <= MAX_SEEDS else None

    @property
    def rule_text(self) -> str:
        """The rule in words, e.g. ``"within ± 5 %"``, ``"same sign, within ± 2"``, with ``"95 % CI"`` over seeds."""
        if self.rule == "qualitative":
            return "qualitative"
        if self.tolerance is None:
            tol = ""
        elif self.tolerance == 0:
            tol = "within the range" if _is_range(self.corrected if self.kind == "erratum" else self.paper) else "exact"
        else:
            tol = f"within ± {100 * self.tolerance:g} %" if self.relative else f"within ± {self.tolerance:g}"
        text = tol if self.rule == "tolerance" else ("same sign" + (f", {tol}" if tol else ""))
        if self.kind == "erratum":
            text += " of the corrected value"
        return text + (", 95 % CI" if self.seeds is not None else "")

    @property
    def evidence(self) -> str:
        """The measurement's statistics in words: seeds, interval and, when undecided, how many seeds would decide."""
        if self.seeds is None or self.measured is None:
            return ""
        if self.n_seeds == 1:
            return "1 seed, so no interval: the verdict needs at least two seeds" if self.verdict == "inconclusive" \
                else "1 seed, no interval"
        low, high = self.interval
        text = (f"{self.n_seeds} seed{'s' if self.n_seeds > 1 else ''}, 95 % CI "
                f"[{_format(low, self.digits)}, {_format(high, self.digits)}]")
        if self.verdict == "inconclusive":
            n = self.seeds_needed
            text += f"; about {n} seeds would decide" if n else "; more seeds at this spread would not decide"
        return text

    @property
    def verdict_text(self) -> str:
        """The verdict with its scale where it matters: a disagreement at smoke scale reads as such."""
        verdict = self.verdict
        if self.scale == "smoke" and verdict in ("not reproduced", "direction only", "inconclusive", "inconsistent"):
            return f"{verdict} at smoke scale"
        return verdict

    def row(self) -> list[str]:
        """``[source, statement, kind, paper, measured, rule, verdict, why]`` as text."""
        paper = _format(self.paper, self.digits)
        if self.kind == "erratum":
            paper += f" (corrected: {_format(self.corrected, self.digits)})"
        why = "; ".join(t for t in (self.evidence, self.why) if t)
        return [self.source, self.statement, self.kind, paper, _format(self.measured, self.digits), self.rule_text,
                self.verdict_text, why]

    def to_dict(self) -> dict:
        """JSON-ready fields plus the computed ``verdict``, ``rule_text``, ``n_seeds``, ``interval``, ``seeds_needed``."""
        out = asdict(self)
        for key in ("paper", "measured", "seeds", "corrected"):
            if isinstance(out[key], tuple):
                out[key] = list(out[key])
        interval = self.interval
        return {**out, "verdict": self.verdict, "rule_text": self.rule_text, "n_seeds": self.n_seeds,
                "interval": None if interval is None else list(interval), "seeds_needed": self.seeds_needed}

    @classmethod
    def from_dict(cls, d: dict) -> "Claim":
        """Inverse of :meth:`to_dict` (the stored verdict and statistics are recomputed, not trusted)."""
        derived = ("verdict", "rule_text", "n_seeds", "interval", "seeds_needed")
        fields = {k: v for k, v in d.items() if k not in derived}
        for key in ("paper", "corrected", "seeds"):
            if isinstance(fields.get(key), list):
                fields[key] = tuple(fields[key])
        return cls(**fields)


class ClaimBuilder:
    """A chapter's claims in the making: ``experiment``, ``analytic``, ``consistency`` and ``erratum`` each build one
    :class:`Claim` of that kind with the chapter and scale filled in, append it to :attr:`claims` and return it.

    >>> c = ClaimBuilder("00_primer", scale="smoke")
    >>> c.consistency("§1", "FedAvg with one client equals centralised SGD", 0.0, 0.0, "tolerance", tolerance=1e-9)
    ... # doctest: +ELLIPSIS
    Claim(chapter='00_primer', source='§1', ...)
    >>> [x.verdict for x in c.claims]
    ['consistent']
    """

    def __init__(self, chapter: str, scale: str) -> None:
        self.chapter = check_type("chapter", chapter, str)
        self.scale = check_choice("scale", scale, SCALES)
        self.claims: list[Claim] = []

    def _add(self, kind: str, source: str, statement: str, paper: Value, measured: Value, rule: str,
             **options: Any) -> Claim:
        claim = Claim(self.chapter, source, statement, paper, measured, rule, kind=kind,
                      scale=options.pop("scale", self.scale), **options)
        self.claims.append(claim)
        return claim

    def experiment(self, source: str, statement: str, paper: Value, measured: Value, rule: str, **options) -> Claim:
        """A paper's measured result, re-run (options: those of :class:`Claim`)."""
        return self._add("experiment", source, statement, paper, measured, rule, **options)

    def analytic(self, source: str, statement: str, paper: Value, measured: Value, rule: str, **options) -> Claim:
        """A paper's formula, closed form or bound, recomputed."""
        return self._add("analytic", source, statement, paper, measured, rule, **options)

    def consistency(self, source: str, statement: str, paper: Value, measured: Value, rule: str,
                    **options) -> Claim:
        """Our code against an invariant or itself: shown, never counted as a reproduction."""
        return self._add("consistency", source, statement, paper, measured, rule, **options)

    def erratum(self, source: str, statement: str, paper: Value, measured: Value, rule: str, *, corrected: Value,
                **options) -> Claim:
        """The paper's printed value ``paper`` is wrong; ``corrected`` is the right one, which ``measured`` should match."""
        return self._add("erratum", source, statement, paper, measured, rule, corrected=corrected, **options)


def result_at(results: Any, *path: Any, keys: Mapping | None = None) -> Any:
    """``results[path[0]][path[1]]...`` of a chapter's results, with a ``ValueError`` naming the missing key (and,
    for a top-level key, what ``keys`` says it holds), so that a claims function's input errors read clearly.

    >>> result_at({"runs": {"leaf": 3}}, "runs", "leaf")
    3
    """
    node = results
    for i, key in enumerate(path):
        if not isinstance(node, Mapping) or key not in node:
            where = "results" + "".join(f"[{k!r}]" for k in path[:i + 1])
            what = f": {keys[key]}" if i == 0 and keys is not None and key in keys else ""
            raise ValueError(f"{where} is missing{what}.")
        node = node[key]
    return node


def check_results(results: Any, keys: Mapping) -> Mapping:
    """``results`` when it is a mapping holding every key of ``keys`` (key -> what it holds), else an error naming
    the first missing key (:func:`result_at`)."""
    check_type("results", results, Mapping)
    for key in check_type("keys", keys, Mapping):
        result_at(results, key, keys=keys)
    return results


def _check_claims(claims: Any) -> list[Claim]:
    """``claims`` as a list of :class:`Claim` (an iterable of them, not a string), else a TypeError naming it."""
    if isinstance(claims, (str, bytes)) or not isinstance(claims, Iterable):
        raise TypeError(f"claims must be an iterable of Claim objects, got {type(claims).__name__}.")
    claims = list(claims)
    bad = [type(c).__name__ for c in claims if not isinstance(c, Claim)]
    if bad:
        raise TypeError(f"claims must hold Claim objects only, got {sorted(set(bad))}.")
    paper_of: dict[tuple[str, str, str], Value] = {}
    for c in claims:
        key, paper = (c.chapter, c.source, c.statement), _comparable(c.paper)
        if paper_of.setdefault(key, paper) != paper:
            raise ValueError(f"claims must give one paper value per statement, got {paper_of[key]!r} and {paper!r} "
                             f"for {c.statement!r} ({c.chapter}, {c.source}).")
    return claims


def _comparable(value: Value) -> Value:
    """A range as a tuple (a claim may hold a list), so that equal paper values compare equal."""
    return tuple(value) if isinstance(value, list) else value


def tally(claims: Iterable[Claim]) -> dict[str, int]:
    """Counts per verdict, every verdict of :data:`VERDICTS` present (zeros included)."""
    counts = Counter(c.verdict for c in _check_claims(claims))
    return {v: counts.get(v, 0) for v in VERDICTS}


def tally_by_kind(claims: Iterable[Claim]) -> dict[str, dict[str, int]]:
    """Counts per kind (every kind of :data:`KINDS`), then per verdict (only verdicts that occur)."""
    counts = Counter((c.kind, c.verdict) for c in _check_claims(claims))
    return {k: {v: counts[k, v] for v in VERDICTS if counts[k, v]} for k in KINDS}


HEADER = ["source", "claim", "kind", "paper", "measured", "rule", "verdict", "why"]


def claims_table(claims: Sequence[Claim]) -> str:
    """The markdown table paper | measured | rule | verdict | why of ``claims``."""
    return markdown_table(HEADER, [c.row() for c in _check_claims(claims)])


def summary(claims: Sequence[Claim]) -> str:
    """One line per kind: ``**Experiments (12):** 7 reproduced, 3 inconclusive, ...``, at the scales measured."""
    claims = _check_claims(claims)
    names = {"experiment": "Experiments", "analytic": "Analytic", "consistency": "Consistency checks",
             "erratum": "Errata"}
    scales = sorted({c.scale for c in claims}, key=SCALES.index)
    lines = [f"**{len(claims)} claims** (measured at {', '.join(scales)} scale)." if claims else "**No claims.**"]
    for kind, counts in tally_by_kind(claims).items():
        if counts:
            lines.append(f"**{names[kind]} ({sum(counts.values())}):** "
                         + ", ".join(f"{n} {v}" for v, n in counts.items()) + ".")
    return "  \n".join(lines)


def show_claims(claims: Sequence[Claim]) -> None:
    """Display the claims table in a notebook and attach the claims as JSON (:data:`MIME_TYPE`) to the output."""
    from IPython.display import display

    claims = _check_claims(claims)
    display({"text/markdown": f"{summary(claims)}\n\n{claims_table(claims)}",
             MIME_TYPE: [c.to_dict() for c in claims]}, raw=True)


def save_claims(claims: Sequence[Claim], path: str | os.PathLike) -> Path:
    """Write the claims as a JSON list, atomically (temporary file, then rename), readable by the group."""
    claims, path = _check_claims(claims), check_path("path", path)
    if not path.parent.is_dir():
        raise FileNotFoundError(f"path {str(path)!r}: the folder {str(path.parent)!r} does not exist.")
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump([c.to_dict() for c in claims], f, ensure_ascii=False, indent=1)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def load_claims(path: str | os.PathLike) -> list[Claim]:
    """The claims of a JSON file written by :func:`save_claims`."""
    path = check_path("path", path)
    try:
        return [Claim.from_dict(d) for d in json.loads(path.read_text(encoding="utf-8"))]
    except (OSError, ValueError, TypeError) as err:
        raise ValueError(f"{path} is not a claims file: {err}") from err
