"""One registry of training methods: core algorithms by name, and each chapter's presets.

A :class:`Method` is an :class:`~fedlab.engine.Algorithm` class with preset options (and, for presets such
as "SFedPO with FedProx", preset fields of the :class:`~fedlab.engine.LocalSGD` solver). Most are built from a
model and a local solver; an algorithm built from other arguments (a federated EM for Gaussian mixtures, a
least-squares simulation) takes its own (``takes_solver`` is false: read from the class's signature when it
has no ``solver`` parameter). Core methods have
plain names (``"fedavg"``); a chapter registers its presets under ``"<chapter>:<name>"`` when its
``algorithms`` module is imported (``"sfedpo:fedavg_latest"``). :data:`fedlab.methods.METHODS` imports every
chapter, so it lists them all.

Examples
--------
>>> from fedlab.algorithms import METHODS
>>> from fedlab.engine import LocalSGD
>>> from fedlab.models import LinearModel
>>> METHODS["fedprox"].label
'FedProx'
>>> type(METHODS.build("fedprox", LinearModel(4, 2), LocalSGD(lr=0.1), mu=0.1)).__name__
'FedProx'
"""
from __future__ import annotations

import inspect
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from fedlab._validation import check_bool, check_type
from fedlab.engine import LocalSGD

__all__ = ["Method", "MethodRegistry", "METHODS"]

_SOLVER_FIELDS = frozenset(f.name for f in fields(LocalSGD))


@dataclass(frozen=True)
class Method:
    """A named training method: ``method(model, solver, **overrides)`` builds the algorithm (``method(*args,
    **overrides)`` with the class's own arguments when ``takes_solver`` is false)."""

    name: str
    cls: type
    options: Mapping[str, Any] = field(default_factory=dict)
    solver_options: Mapping[str, Any] = field(default_factory=dict)
    chapter: str = "core"
    label: str = ""
    takes_solver: bool = True

    def __post_init__(self) -> None:
        for name in ("name", "chapter"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise ValueError(f"{name} must be a non-empty string, got {getattr(self, name)!r}.")
        check_type("label", self.label, str)
        check_type("cls", self.cls, type)
        check_type("options", self.options, Mapping)
        check_type("solver_options", self.solver_options, Mapping)
        bad = set(self.solver_options) - _SOLVER_FIELDS
        if bad:
            raise ValueError(f"solver_options must be LocalSGD fields {sorted(_SOLVER_FIELDS)}, got {sorted(bad)}.")
        check_bool("takes_solver", self.takes_solver)
        if self.solver_options and not self.takes_solver:
            raise ValueError(f"solver_options need a method built from a solver (takes_solver=True), got "
                             f"{dict(self.solver_options)!r} for {self.name!r}.")

    def __call__(self, *args: Any, **overrides: Any):
        """The algorithm with the preset's options updated by ``overrides``: ``method(model, solver, ...)`` (solver
        fields go to the solver), or the class's own arguments when ``takes_solver`` is false."""
        if not self.takes_solver:
            return self.cls(*args, **{**self.options, **overrides})
        if len(args) != 2:
            raise TypeError(f"{self.name} is built from (model, solver), got {len(args)} positional arguments.")
        model, solver = args
        if not isinstance(solver, LocalSGD):
            raise TypeError(f"solver must be a LocalSGD, got {type(solver).__name__}.")
        options = {**self.options, **overrides}
        solver_options = {**self.solver_options, **{k: options.pop(k) for k in list(options) if k in _SOLVER_FIELDS}}
        if solver_options:
            solver = replace(solver, **solver_options)
        return self.cls(model, solver, **options)


class MethodRegistry(Mapping):
    """Methods by name; ``presets(chapter)`` gives a chapter's presets by their short names."""

    def __init__(self) -> None:
        self._methods: dict[str, Method] = {}

    def register(self, name: str, cls: type, *, chapter: str = "core", label: str = "",
                 solver_options: Mapping[str, Any] | None = None, takes_solver: bool | None = None,
                 **options: Any) -> Method:
        """Add a method (``"<chapter>:<name>"`` for a chapter's preset) and return it; ``takes_solver`` defaults to
        whether the class takes a ``solver`` argument."""
        if not isinstance(name, str) or not name or ":" in name:
            raise ValueError(f"name must be a non-empty string without ':', got {name!r}.")
        if not isinstance(cls, type):
            raise TypeError(f"cls must be a class, got {type(cls).__name__}.")
        bad = set(solver_options or {}) - _SOLVER_FIELDS
        if bad:
            raise ValueError(f"solver_options must be LocalSGD fields {sorted(_SOLVER_FIELDS)}, got {sorted(bad)}.")
        if takes_solver is None:
            takes_solver = "solver" in inspect.signature(cls).parameters
        key = name if chapter == "core" else f"{chapter}:{name}"
        method = Method(key, cls, dict(options), dict(solver_options or {}), chapter, label or name, takes_solver)
        self._methods[key] = method
        return method

    def __getitem__(self, name: str) -> Method:
        try:
            return self._methods[name]
        except KeyError:
            raise KeyError(f"unknown method {name!r}; known: {sorted(self._methods)}.") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._methods)

    def __len__(self) -> int:
        return len(self._methods)

    def build(self, name: str, model, solver: LocalSGD, **overrides: Any):
        """``self[name](model, solver, **overrides)``, with a ``ValueError`` naming ``name`` when unknown."""
        if name not in self._methods:
            raise ValueError(f"name must be one of {sorted(self._methods)}, got {name!r}.")
        return self._methods[name](model, solver, **overrides)

    def presets(self, chapter: str) -> dict[str, Method]:
        """A chapter's presets by short name, in registration order."""
        prefix = f"{chapter}:"
        return {k[len(prefix):]: m for k, m in self._methods.items() if k.startswith(prefix)}


METHODS = MethodRegistry()
"""Every registered method; import :mod:`fedlab.methods` to have every chapter's presets registered."""
