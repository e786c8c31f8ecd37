"""The package's layering (pyproject's import-linter contracts) holds, and a cross-chapter import breaks it."""
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


def _private_imports(path: Path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("fedlab"):
            for alias in node.names:
                if alias.name.startswith("_"):
                    yield f"{path.relative_to(ROOT)}:{node.lineno} imports {alias.name} from {node.module}"


def test_no_private_names_across_modules():
    """Modules share public names only (private helper modules ``fedlab._rng`` / ``_validation`` are fine)."""
    found = [hit for p in sorted((ROOT / "fedlab").rglob("*.py")) for hit in _private_imports(p)]
    assert not found, "\n".join(found)


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
