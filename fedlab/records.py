"""Full-scale records: a notebook's full-mode claims and headlines, stored in the repository with what made them.

``python -m fedlab run --mode full --record`` writes one JSON per notebook under ``records/full/`` (:data:`FOLDER`):
the commit, the date, the machine, the run time, the claims, the headline numbers, and a content hash of the
notebook and of the chapter package it imports. The report leads with these verdicts; a record whose hash no
longer matches the code is *stale* (:attr:`Record.stale`) and shown as such. Files are written atomically.
"""
from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from fedlab._validation import check_folder, check_path, check_real, check_sequence, check_type
from fedlab.claims import Claim

__all__ = ["FOLDER", "Record", "chapter_package", "content_hash", "machine", "git_commit", "make_record",
           "write_record", "load_records"]

ROOT = Path(__file__).resolve().parent.parent
FOLDER = ROOT / "records" / "full"
PACKAGE = Path(__file__).resolve().parent
_IMPORT = re.compile(r"^\s*(?:from|import)\s+fedlab\.(\w+)", re.MULTILINE)


def chapter_package(notebook: str | os.PathLike, package: Path | None = None) -> Path | None:
    """The chapter package a notebook imports (a subpackage of ``package``, default fedlab, with a ``claims.py``)."""
    import nbformat

    notebook, package = check_path("notebook", notebook), PACKAGE if package is None else check_path("package", package)
    if not package.is_dir():
        raise ValueError(f"package must be a folder (a package's sources), got {str(package)!r}.")
    nb = nbformat.read(Path(notebook), as_version=4)
    names = {m for c in nb.cells if c.cell_type == "code" for m in _IMPORT.findall(c.source)}
    chapters = sorted(n for n in names if (package / n / "claims.py").is_file())
    if len(chapters) > 1:
        raise ValueError(f"notebook {Path(notebook).name} imports several chapter packages {chapters}; expected one.")
    return package / chapters[0] if chapters else None


def content_hash(notebook: str | os.PathLike, package: Path | None = None) -> str:
    """SHA-256 of the notebook's cell sources (not its outputs) and of every file of its chapter package."""
    import nbformat

    notebook = check_path("notebook", notebook)
    digest = hashlib.sha256()
    for cell in nbformat.read(notebook, as_version=4).cells:
        digest.update(f"{cell.cell_type}\0{cell.source}\0".encode())
    chapter = chapter_package(notebook, package)
    if chapter is not None:
        for path in sorted(p for p in chapter.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            digest.update(f"{path.relative_to(chapter).as_posix()}\0".encode() + path.read_bytes())
    return digest.hexdigest()


def machine() -> str:
    """The machine in words: CPU model, logical cores, OS, Python and torch versions."""
    import torch

    model = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        found = re.search(r"^model name\s*:\s*(.+)$", cpuinfo.read_text(), re.MULTILINE)
        model = found.group(1).strip() if found else model
    return (f"{model}, {os.cpu_count()} logical cores, {platform.system()} {platform.release()}, "
            f"Python {platform.python_version()}, torch {torch.__version__}")


def git_commit(root: Path = ROOT) -> str:
    """``git rev-parse HEAD`` of ``root``, with ``+dirty`` when the work tree has changes; "unknown" without git."""
    root = check_path("root", root)
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


@dataclass(frozen=True)
class Record:
    """One notebook's full-scale run; ``source`` is the notebook it was made from (for :attr:`stale`)."""

    notebook: str
    mode: str
    commit: str
    date: str
    machine: str
    seconds: float
    content_hash: str
    claims: list[Claim] = field(default_factory=list)
    headlines: dict[str, str] = field(default_factory=dict)
    source: Path | None = None

    @property
    def stale(self) -> bool:
        """True when the notebook or its chapter package changed since the record (or the notebook is gone)."""
        if self.source is None or not self.source.is_file():
            return True
        return content_hash(self.source) != self.content_hash

    def to_json(self) -> dict:
        return {"notebook": self.notebook, "mode": self.mode, "commit": self.commit, "date": self.date,
                "machine": self.machine, "seconds": round(self.seconds, 1), "content_hash": self.content_hash,
                "headlines": self.headlines, "claims": [c.to_dict() for c in self.claims]}


def make_record(notebook: str | os.PathLike, *, seconds: float, claims: list[Claim],
                headlines: dict[str, str]) -> Record:
    """A full-mode record of ``notebook`` (its source path) as run now, on this machine, at this commit."""
    notebook = check_path("notebook", notebook)
    seconds = check_real("seconds", seconds, low=0)
    for i, claim in enumerate(check_sequence("claims", claims)):
        check_type(f"claims[{i}]", claim, Claim)
    check_type("headlines", headlines, dict)
    return Record(notebook.stem, "full", git_commit(), datetime.now(timezone.utc).isoformat(timespec="seconds"),
                  machine(), float(seconds), content_hash(notebook), list(claims), dict(headlines), notebook)


def write_record(record: Record, folder: str | os.PathLike = FOLDER) -> Path:
    """Write ``folder/<notebook>.json`` atomically (a temporary file, then a rename); return its path."""
    check_type("record", record, Record)
    folder = check_folder("folder", folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{record.notebook}.json"
    with tempfile.NamedTemporaryFile("w", dir=folder, suffix=".tmp", delete=False, encoding="utf-8") as tmp:
        json.dump(record.to_json(), tmp, indent=1, ensure_ascii=False)
        tmp.write("\n")
    os.replace(tmp.name, path)
    return path


def load_records(folder: str | os.PathLike = FOLDER, notebooks: str | os.PathLike = ROOT / "notebooks"
                 ) -> dict[str, Record]:
    """Every record in ``folder``, keyed by notebook stem; ``notebooks`` holds their sources (for staleness).

    Raises
    ------
    ValueError
        Naming the file, when a record cannot be read or lacks a field.
    """
    folder, notebooks = check_path("folder", folder), check_path("notebooks", notebooks)
    records = {}
    for path in sorted(folder.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            claims = [Claim.from_dict(d) for d in data["claims"]]
            record = Record(data["notebook"], data["mode"], data["commit"], data["date"], data["machine"],
                            float(data["seconds"]), data["content_hash"], claims, dict(data["headlines"]),
                            Path(notebooks) / f"{data['notebook']}.ipynb")
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise ValueError(f"record {path} cannot be read: {err!r}") from err
        records[record.notebook] = record
    return records
