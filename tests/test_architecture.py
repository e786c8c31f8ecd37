"""The package's architecture: the layering (pyproject's import-linter contracts), every chapter package of the same
shape, private modules kept in their package, training only through the engine, and every algorithm registered.
Each check is shown failing on a deliberate violation."""
import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = ["primer", "topology", "availability", "fedem", "knnper", "streams", "online", "sfedpo", "dynamic",
            "markovian"]


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    """Run ``lint-imports`` on the ``fedlab`` package found under ``root``, with the project's contracts."""
    lint = Path(sys.executable).with_name("lint-imports")
    return subprocess.run([str(lint), "--config", str(ROOT / "pyproject.toml"), "--no-cache"], cwd=root,
                          capture_output=True, text=True, env={"PYTHONPATH": str(root), "PATH": ""})


def test_import_contracts_are_kept():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "0 broken" in result.stdout


@pytest.mark.parametrize("importer, imported", [("sfedpo", "streams"), ("engine", "fedem")])
def test_a_forbidden_import_breaks_the_contracts(tmp_path, importer, imported):
    """A chapter importing another chapter, or the core importing a chapter, fails the check."""
    shutil.copytree(ROOT / "fedlab", tmp_path / "fedlab", ignore=shutil.ignore_patterns("__pycache__"))
    init = tmp_path / "fedlab" / importer / "__init__.py"
    init.write_text(init.read_text() + f"\nimport fedlab.{imported}.data  # noqa: E402\n")
    result = lint_imports(tmp_path)
    assert result.returncode != 0
    assert f"fedlab.{importer} is not allowed to import fedlab.{imported}" in result.stdout


def _copy(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "fedlab", tmp_path / "fedlab", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def _append(path: Path, code: str) -> None:
    path.write_text(path.read_text() + "\n" + code + "\n")


def _new(check, root: Path) -> list[str]:
    """What ``check`` finds in the altered copy under ``root`` and not in the project (the deliberate violation)."""
    return sorted(set(check(root)) - set(check(ROOT)))


# ---------------------------------------------------------------------------------------------------- private names

def _module_name(root: Path, path: Path) -> str:
    return ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")


def _imports(path: Path):
    """``(line, imported module, imported names)`` of every ``fedlab`` import in ``path``."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("fedlab"):
            yield node.lineno, node.module, [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("fedlab"):
                    yield node.lineno, alias.name, []


def private_imports(root: Path) -> list[str]:
    """Imports of a private name, or of a private module from outside the package that holds it.

    The package-wide helper modules ``fedlab._rng`` and ``fedlab._validation`` are the one exception: every
    package validates its inputs and derives its random streams with them.
    """
    found = []
    for path in sorted((root / "fedlab").rglob("*.py")):
        here = _module_name(root, path)
        for line, module, names in _imports(path):
            parts = module.split(".")
            private = [i for i, part in enumerate(parts) if part.startswith("_")]
            if private and parts[:2] not in (["fedlab", "_rng"], ["fedlab", "_validation"]) \
                    and not here.startswith(".".join(parts[:private[0]]) + "."):
                found.append(f"{path.relative_to(root)}:{line} imports the private module {module}")
            found += [f"{path.relative_to(root)}:{line} imports the private name {n} from {module}"
                      for n in names if n.startswith("_")]
    return found


def test_no_private_names_or_modules_across_packages():
    assert private_imports(ROOT) == []


def test_a_private_module_imported_across_packages_is_found(tmp_path):
    root = _copy(tmp_path)
    (root / "fedlab" / "engine" / "_secret.py").write_text("VALUE = 1\n")
    _append(root / "fedlab" / "dynamic" / "data.py", "from fedlab.engine._secret import VALUE  # noqa: E402")
    _append(root / "fedlab" / "engine" / "runner.py", "from fedlab.engine._secret import VALUE  # noqa: E402")
    _append(root / "fedlab" / "dynamic" / "plots.py", "from fedlab.dynamic.data import _check  # noqa: E402")
    found = _new(private_imports, root)
    assert len(found) == 2, found
    assert found[0].startswith("fedlab/dynamic/data.py:") and "the private module fedlab.engine._secret" in found[0]
    assert found[1].startswith("fedlab/dynamic/plots.py:") and "the private name _check" in found[1]


# ---------------------------------------------------------------------------------------------------- the rooms

STANDARD_MODULES = ("data", "algorithms", "experiments", "claims", "plots", "published", "exercises")
"""Every chapter package has these (a module ``x.py`` or a subpackage ``x/``)."""
WITHOUT_THEORY = {"primer": "the primer re-runs the introduction's examples; it states no bound of its own"}
"""Chapters without ``bounds.py``, and why; every other chapter has one."""


def _has_module(package: Path, name: str) -> bool:
    return (package / f"{name}.py").is_file() or (package / name / "__init__.py").is_file()


def _has_paper_mode(chapter: str) -> bool:
    """A chapter has a paper mode when its notebook names the real data sets it needs (its metadata)."""
    from fedlab.workbook import paper_data

    number = {c: f"{i:02d}" for i, c in enumerate(CHAPTERS)}[chapter]
    return bool(paper_data(next((ROOT / "notebooks").glob(f"{number}_*.ipynb"))))


def missing_modules(root: Path) -> list[str]:
    """The standard modules a chapter package lacks: :data:`STANDARD_MODULES`, ``bounds`` unless the chapter has no
    theory (:data:`WITHOUT_THEORY`), ``real_data`` exactly when it has a paper mode."""
    missing = []
    for chapter in CHAPTERS:
        package = root / "fedlab" / chapter
        wanted = list(STANDARD_MODULES) + ([] if chapter in WITHOUT_THEORY else ["bounds"])
        missing += [f"fedlab/{chapter} has no {name}.py" for name in wanted if not _has_module(package, name)]
        if _has_paper_mode(chapter) != _has_module(package, "real_data"):
            missing.append(f"fedlab/{chapter}: real_data.py must exist exactly when the notebook has a paper mode")
    return missing


def test_every_chapter_package_has_the_standard_shape():
    assert missing_modules(ROOT) == []


def test_a_chapter_without_a_standard_module_is_found(tmp_path):
    root = _copy(tmp_path)
    (root / "fedlab" / "dynamic" / "plots.py").unlink()
    (root / "fedlab" / "markovian" / "real_data.py").write_text('"""A paper mode the notebook does not have."""\n')
    assert _new(missing_modules, root) == [
        "fedlab/dynamic has no plots.py",
        "fedlab/markovian: real_data.py must exist exactly when the notebook has a paper mode"]


# ---------------------------------------------------------------------------------------------------- one training path

TRAINING_CALLS = {"local_sgd", "loss_and_grad_stacked", "backward", "grad"}
"""The engine's training steps (and autograd's): called in a loop, they make a training loop."""
TRAINING_HOMES = ("engine", "algorithms")
"""The core packages whose functions may loop over training steps: the engine and the generic algorithms."""


def _training_calls(node: ast.AST):
    for call in ast.walk(node):
        if not isinstance(call, ast.Call):
            continue
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name in TRAINING_CALLS or (name == "round" and isinstance(func, ast.Attribute) and len(call.args) >= 3):
            yield name, call.lineno       # ``alg.round(state, data, seed)``, not ``array.round(2)``


def training_loops(root: Path) -> list[str]:
    """Loops over training steps (or over an algorithm's ``round``) in a module-level function outside the engine
    and the generic algorithms: training there bypasses :func:`fedlab.engine.run` (its History, its divergence
    checks, its device and batched paths). Methods of classes (the chapters' Algorithms) are where rounds live."""
    found = []
    for path in sorted((root / "fedlab").rglob("*.py")):
        if path.relative_to(root / "fedlab").parts[0] in TRAINING_HOMES:
            continue
        for fn in ast.parse(path.read_text()).body:
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for loop in ast.walk(fn):
                    if isinstance(loop, (ast.For, ast.While)):
                        found += [f"{path.relative_to(root)}:{line} {fn.name} calls {name} in a loop"
                                  for name, line in _training_calls(loop)]
    return sorted(set(found))


def test_training_goes_through_the_engine():
    assert training_loops(ROOT) == []


def test_a_training_loop_outside_the_engine_is_found(tmp_path):
    root = _copy(tmp_path)
    _append(root / "fedlab" / "dynamic" / "experiments.py", """
def hand_rolled(model, params, data, solver, alg, state):
    for epoch in range(3):
        params, _ = local_sgd(model, params, data, solver, key=(0, epoch, 0))
    while state.round < 5:
        state, _ = alg.round(state, data, 0)
    return params.round(2)""")
    found = _new(training_loops, root)
    assert [f.split(":", 1)[0] for f in found] == ["fedlab/dynamic/experiments.py"] * 2
    assert found[0].endswith("hand_rolled calls local_sgd in a loop")
    assert found[1].endswith("hand_rolled calls round in a loop")


# ---------------------------------------------------------------------------------------------------- the registry

def algorithm_classes() -> list[type]:
    """Every engine algorithm class of the package: a class defining ``init``, ``round`` and ``evaluate``."""
    import importlib
    import inspect
    import pkgutil

    import fedlab

    found = {}
    for info in pkgutil.walk_packages(fedlab.__path__, "fedlab."):
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == info.name and all(callable(getattr(cls, m, None)) for m in ("init", "round",
                                                                                             "evaluate")) \
                    and not getattr(cls, "_is_protocol", False) and not inspect.isabstract(cls):
                found[f"{cls.__module__}.{cls.__qualname__}"] = cls
    return [found[k] for k in sorted(found)]


def unregistered(classes, registry) -> list[str]:
    registered = {method.cls for method in registry.values()}
    return [f"{c.__module__}.{c.__qualname__}" for c in classes if c not in registered]


def test_every_algorithm_is_registered():
    from fedlab.methods import METHODS

    classes = algorithm_classes()
    assert len(classes) >= 25 and unregistered(classes, METHODS) == []


def test_an_unregistered_algorithm_is_found():
    from fedlab.algorithms import FedAvg
    from fedlab.methods import METHODS

    class Unlisted(FedAvg):
        pass

    assert unregistered([FedAvg, Unlisted], METHODS) == [f"{__name__}.{Unlisted.__qualname__}"]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_packages_say_what_they_are(chapter):
    """Every chapter package's docstring names its notebook and lists its entry points."""
    import importlib

    doc = importlib.import_module(f"fedlab.{chapter}").__doc__ or ""
    assert "notebooks/" in doc and "Entry points" in doc, doc[:200]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_chapter_has_a_runnable_example(chapter):
    """The test command runs the doctests (``--doctest-modules``); every chapter has at least one."""
    sources = "".join(p.read_text() for p in (ROOT / "fedlab" / chapter).rglob("*.py"))
    assert ">>> " in sources


NOTEBOOK_CHAPTER = dict(zip([f"{i:02d}" for i in range(10)], CHAPTERS))


@pytest.mark.parametrize("number, chapter", sorted(NOTEBOOK_CHAPTER.items()))
def test_each_notebook_imports_the_core_and_its_own_chapter_only(number, chapter):
    import json
    import re

    path = next((ROOT / "notebooks").glob(f"{number}_*.ipynb"))
    code = "\n".join("".join(c["source"]) for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code")
    imported = set(re.findall(r"(?:from|import)\s+fedlab\.(\w+)", code))
    assert not imported & (set(CHAPTERS) - {chapter}) and "methods" not in imported, sorted(imported)


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_chapter_has_three_numbered_exercises_and_its_notebook_checks_each(chapter):
    """``fedlab.<chapter>.exercises.EXERCISES``: at least three, of the three kinds, labelled N.1, N.2, ... (N the
    notebook's number);
    the notebook shows each as an ``exercise`` cell and checks it in an ``answer`` cell."""
    import importlib
    import json

    from fedlab.exercises import exercise_table

    number = CHAPTERS.index(chapter)
    table = exercise_table(importlib.import_module(f"fedlab.{chapter}.exercises").EXERCISES)
    labels = [label for label, _, _ in table]
    assert len(labels) >= 3 and labels == [f"{number}.{k}" for k in range(1, len(labels) + 1)]
    assert {kind for _, kind, _ in table} == {"compute", "predict", "implement"}
    notebook = next((ROOT / "notebooks").glob(f"{number:02d}_*.ipynb"))
    cells = json.loads(notebook.read_text())["cells"]
    sources = {tag: ["".join(c["source"]) for c in cells if tag in c["metadata"].get("tags", [])]
               for tag in ("exercise", "answer")}
    for label in labels:
        assert any(s.startswith(f"### Exercise {label} ") for s in sources["exercise"]), label
        assert any(f'EXERCISES["{label}"]' in s for s in sources["answer"] + [
            "".join(c["source"]) for c in cells if c["cell_type"] == "code"]), label
