r"""Paper claims as data: what a paper says, what we measured, a stated rule and the verdict it gives.

A :class:`Claim` holds the chapter, the source ("Table 2.5, Gaia, STAR"), the paper's value (a number, a range
``(low, high)`` with ``None`` for an open end, or a qualitative statement), the measured value and a rule:

* ``"tolerance"``: reproduced when the measured number lies within ``tolerance`` of the paper's number (or range);
  ``relative=True`` scales the tolerance by :math:`|\text{paper}|`; otherwise not reproduced;
* ``"direction"``: the sign is the claim (a gain, a gap). Reproduced when the signs agree and, if a tolerance is
  given, the value lies within it; *direction only* when the signs agree but the size does not; otherwise not
  reproduced;
* ``"qualitative"``: a statement checked in the notebook from measured data; ``holds`` says whether it held.

A claim whose measured value is ``None`` was *not run*, and says why (e.g. the data set is absent). The verdict is
always computed, never typed. Notebooks render their claims with :func:`show_claims`, which also attaches them to
the cell's output as JSON (:data:`MIME_TYPE`); the workbook collects them into the report's scoreboard.

Examples
--------
>>> c = Claim("01_topology", "Table 2.5, Géant, RING", "cycle time (ms)", paper=109, measured=109.0,
...           rule="tolerance", tolerance=0.05, relative=True)
>>> c.verdict
'reproduced'
>>> Claim("05_data_streams", "Fig. 4.3", "Historical − Uniform at 5 % (pp)", paper=-14.6, measured=-6.5,
...       rule="direction", tolerance=2.0).verdict
'direction only'
"""
from __future__ import annotations

import json
import math
import numbers
import os
import tempfile
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence, Union

from fedlab._validation import check_bool, check_choice, check_int, check_path, check_real, check_type
from fedlab.tables import markdown_table

__all__ = ["RULES", "VERDICTS", "MIME_TYPE", "Claim", "tally", "claims_table", "show_claims", "save_claims",
           "load_claims"]

RULES = ("tolerance", "direction", "qualitative")
VERDICTS = ("reproduced", "direction only", "not reproduced", "not run")
MIME_TYPE = "application/vnd.fedlab.claims+json"

Value = Union[float, int, bool, str, tuple, list, None]


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
        Our value; ``None`` means not run (``why`` says why).
    rule : {"tolerance", "direction", "qualitative"}
    tolerance : float, optional
        Absolute (or, with ``relative``, relative) tolerance; required by ``"tolerance"``.
    relative : bool
    holds : bool, optional
        For ``"qualitative"``: whether the statement held in our measurement (computed by the notebook).
    why : str
        The explanation when it does not reproduce (the deciding experiment), or why it was not run.
    digits : int
        Decimals when rendering numbers.
    """

    chapter: str
    source: str
    statement: str
    paper: Value
    measured: Value
    rule: str
    tolerance: float | None = None
    relative: bool = False
    holds: bool | None = None
    why: str = ""
    digits: int = 2

    def __post_init__(self) -> None:
        for name in ("chapter", "source", "statement"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name).strip():
                raise ValueError(f"{name} must be a non-empty string, got {getattr(self, name)!r}.")
        check_choice("rule", self.rule, RULES)
        if self.tolerance is not None:
            check_real("tolerance", self.tolerance, low=0)
        check_bool("relative", self.relative)
        check_type("holds", self.holds, bool, optional=True)
        check_type("why", self.why, str)
        check_int("digits", self.digits, low=0)
        ends = self.paper if _is_range(self.paper) else (self.paper,) if _is_number(self.paper) else None
        if _is_range(self.paper) and None not in ends and ends[0] > ends[1]:
            raise ValueError(f"paper must be a range (low, high) with low <= high, got {self.paper!r} "
                             f"(claim {self.source!r}).")
        if self.relative and ends is not None and all(v is None or v == 0 for v in ends):
            raise ValueError(f"relative=True scales the tolerance by |paper|, which needs a non-zero paper value, got "
                             f"paper={self.paper!r} (claim {self.source!r}); give an absolute tolerance instead.")
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

    def _check_numbers(self) -> None:
        if not (_is_number(self.paper) or _is_range(self.paper)):
            raise ValueError(f"paper must be a number or a (low, high) range for rule {self.rule!r}, "
                             f"got {self.paper!r}.")
        ends = self.paper if _is_range(self.paper) else (self.paper,)
        if not all(v is None or math.isfinite(v) for v in ends):
            raise ValueError(f"paper must hold finite numbers, got {self.paper!r}.")
        if not _is_number(self.measured) or not math.isfinite(self.measured):
            raise ValueError(f"measured must be a finite number for rule {self.rule!r}, got {self.measured!r}.")

    def _within(self) -> bool:
        tol = self.tolerance or 0.0
        lo, hi = self.paper if _is_range(self.paper) else (self.paper, self.paper)
        scale = max(abs(v) for v in (lo, hi) if v is not None) if self.relative else 1.0
        margin = tol * scale
        return (lo is None or self.measured >= lo - margin) and (hi is None or self.measured <= hi + margin)

    @property
    def verdict(self) -> str:
        """One of :data:`VERDICTS`, computed from the rule."""
        if self.measured is None:
            return "not run"
        if self.rule == "qualitative":
            return "reproduced" if self.holds else "not reproduced"
        if self.rule == "tolerance":
            return "reproduced" if self._within() else "not reproduced"
        if math.copysign(1, self.measured) != math.copysign(1, self.paper) or self.measured == 0:
            return "not reproduced"
        return "reproduced" if self.tolerance is None or self._within() else "direction only"

    @property
    def rule_text(self) -> str:
        """The rule in words, e.g. ``"within ± 5 %"``, ``"same sign, within ± 2"``."""
        if self.rule == "qualitative":
            return "qualitative"
        tol = "" if self.tolerance is None else (
            f"within ± {100 * self.tolerance:g} %" if self.relative else f"within ± {self.tolerance:g}")
        return tol if self.rule == "tolerance" else ("same sign" + (f", {tol}" if tol else ""))

    def row(self) -> list[str]:
        """``[source, statement, paper, measured, rule, verdict, why]`` as text."""
        return [self.source, self.statement, _format(self.paper, self.digits), _format(self.measured, self.digits),
                self.rule_text, self.verdict, self.why]

    def to_dict(self) -> dict:
        """JSON-ready fields plus the computed ``verdict`` and ``rule_text``."""
        out = asdict(self)
        for key in ("paper", "measured"):
            if isinstance(out[key], tuple):
                out[key] = list(out[key])
        return {**out, "verdict": self.verdict, "rule_text": self.rule_text}

    @classmethod
    def from_dict(cls, d: dict) -> "Claim":
        """Inverse of :meth:`to_dict` (the stored verdict is recomputed, not trusted)."""
        fields = {k: v for k, v in d.items() if k not in ("verdict", "rule_text")}
        if isinstance(fields.get("paper"), list):
            fields["paper"] = tuple(fields["paper"])
        return cls(**fields)


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


HEADER = ["source", "claim", "paper", "measured", "rule", "verdict", "why"]


def claims_table(claims: Sequence[Claim]) -> str:
    """The markdown table paper | measured | rule | verdict | why of ``claims``."""
    return markdown_table(HEADER, [c.row() for c in _check_claims(claims)])


def show_claims(claims: Sequence[Claim]) -> None:
    """Display the claims table in a notebook and attach the claims as JSON (:data:`MIME_TYPE`) to the output."""
    from IPython.display import display

    claims = _check_claims(claims)
    counts = ", ".join(f"{n} {v}" for v, n in tally(claims).items() if n)
    display({"text/markdown": f"{claims_table(claims)}\n\n**{len(claims)} claims:** {counts}.",
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
