"""``python -m fedlab``: bad arguments are reported in one line on stderr (exit status 2), never as a traceback."""
import os
import subprocess
import sys

import pytest

from fedlab.__main__ import main


@pytest.mark.parametrize("build", ["a_file", "a_file/build"])
def test_run_refuses_a_build_folder_that_is_or_lies_in_a_file(tmp_path, capsys, build):
    (tmp_path / "a_file").write_text("not a folder")
    with pytest.raises(SystemExit) as exit_:
        main(["run", "--only", "00_primer", "--build", str(tmp_path / build)])
    err = capsys.readouterr().err
    where = "a file" if build == "a_file" else f"inside the file '{tmp_path / 'a_file'}'"
    assert exit_.value.code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"fedlab run: error: argument --build must name a folder, got '{tmp_path / build}', "
                          f"which is {where} (see fedlab run --help)")


def test_a_fedlab_data_file_stops_the_command_line_in_one_line(tmp_path):
    (tmp_path / "a_file").write_text("")
    done = subprocess.run([sys.executable, "-m", "fedlab", "data", "fetch", "mnist"], capture_output=True, text=True,
                          env={**os.environ, "FEDLAB_DATA": str(tmp_path / "a_file")}, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr and done.stderr.count("\n") == 1
    assert done.stderr.startswith(f"fedlab data fetch: error: FEDLAB_DATA must name a folder, got "
                                  f"'{tmp_path / 'a_file'}', which is a file")


def test_record_needs_the_full_mode(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["run", "--only", "00_primer", "--record"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.count("\n") == 1
    assert "argument --record: stores the full mode's verdicts; add --mode full" in err
