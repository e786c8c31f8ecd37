"""Tests of fedlab.experiments: grids, the result store, sweeps (resume, executors, failures), aggregates."""
from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from fedlab.engine import ALLOCATOR_ENV
from fedlab.experiments import (EXECUTORS, ResultStore, SweepError, aggregate_seeds, config_key, grid, sweep,
                                to_jsonable, to_table)

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # spawned workers inherit sys.path, so they can import _sweep_workers
import _sweep_workers as W  # noqa: E402
sweep_module = sys.modules["fedlab.experiments.sweep"]

def _json_files(path):
    return sorted(p.name for p in Path(path).iterdir() if p.suffix == ".json" and not p.name.startswith("."))


# ------------------------------------------------------------------------------------------ grid

def test_grid_products_and_unions():
    g = grid(lr=[0.1, 0.01], mu=(0, 1), method="fedprox")
    assert g == [{"lr": 0.1, "mu": 0, "method": "fedprox"}, {"lr": 0.1, "mu": 1, "method": "fedprox"},
                 {"lr": 0.01, "mu": 0, "method": "fedprox"}, {"lr": 0.01, "mu": 1, "method": "fedprox"}]
    assert grid({"a": range(3)}) == [{"a": 0}, {"a": 1}, {"a": 2}]
    assert grid(a=np.array([1, 2])) == [{"a": 1}, {"a": 2}] and type(grid(a=np.array([1]))[0]["a"]) is int
    assert grid([{"m": "fedavg"}, {"m": "fedprox", "mu": [0.1, 1.0]}]) == [
        {"m": "fedavg"}, {"m": "fedprox", "mu": 0.1}, {"m": "fedprox", "mu": 1.0}]


@pytest.mark.parametrize("call, err", [
    (lambda: grid(), ValueError), (lambda: grid(lr=[]), ValueError), (lambda: grid([]), ValueError),
    (lambda: grid({1: [2]}), TypeError), (lambda: grid(seed=[0, 1]), ValueError),
    (lambda: grid({"a": [1]}, b=[2]), TypeError), (lambda: grid(a=np.zeros((2, 2))), ValueError),
])
def test_grid_rejects_bad_axes(call, err):
    with pytest.raises(err):
        call()


# ----------------------------------------------------------------------------------------- store

def test_key_is_stable_and_independent_of_key_order():
    k = config_key({"lr": 0.1, "mu": [1, 2]}, seed=3, fn="pkg.mod.train")
    assert k == config_key({"mu": (1, 2), "lr": np.float64(0.1)}, seed=np.int64(3), fn="pkg.mod.train")
    assert len(k) == 16 and int(k, 16) >= 0
    assert k == "955b99679c2afd57"  # frozen: changing the hashing would orphan every stored result
    others = {config_key({"lr": 0.1, "mu": [1, 2]}, seed=4, fn="pkg.mod.train"),
              config_key({"lr": 0.1, "mu": [1, 2]}, seed=3, fn="pkg.mod.other"),
              config_key({"lr": 0.2, "mu": [1, 2]}, seed=3, fn="pkg.mod.train")}
    assert k not in others and len(others) == 3
    assert config_key({"a": 1}, 0, W.noisy_descent) == config_key({"a": 1}, 0, "_sweep_workers.noisy_descent")


def test_to_jsonable_converts_numpy_and_names_bad_keys():
    out = to_jsonable({"a": np.arange(3), "b": np.float32(0.5), "c": (np.int64(1), np.bool_(True)),
                       "d": np.array([[1.0, 2.0]])})
    assert out == {"a": [0, 1, 2], "b": 0.5, "c": [1, True], "d": [[1.0, 2.0]]}
    assert json.loads(json.dumps(out)) == out
    with pytest.raises(TypeError, match=r"result\['x'\]\[1\]"):
        to_jsonable({"x": [1, object()]}, "result")
    with pytest.raises(TypeError, match="string keys"):
        to_jsonable({1: 2}, "result")
    with pytest.raises(TypeError, match="not JSON"):
        to_jsonable(np.array([1j]))


def test_store_roundtrip_atomic_and_no_temp_files(tmp_path, monkeypatch):
    store = ResultStore(tmp_path / "res")
    cfg = {"lr": 0.1}
    assert not store.has(cfg, 0, "f") and len(store) == 0
    key = store.save(cfg, {"curve": np.ones(2)}, {"wall_time_s": 0.1}, seed=0, fn="f")
    assert store.has(cfg, 0, "f") and key == store.key(cfg, 0, "f")
    rec = store.load(cfg, 0, "f")
    assert rec["result"] == {"curve": [1.0, 1.0]} and rec["meta"]["fedlab_version"]
    assert os.listdir(store.path) == [f"{key}.json"]  # no temporary file left
    assert [r["key"] for r in store.records()] == [key] and len(store) == 1
    with pytest.raises(KeyError):
        store.load(cfg, 1, "f")
    with pytest.raises(TypeError, match=r"result\['m'\]"):
        store.save(cfg, {"m": object()}, seed=1, fn="f")

    def crash(*args):
        raise OSError("disk full")
    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError):
        store.save(cfg, {"curve": [2.0]}, seed=0, fn="f")
    monkeypatch.undo()
    assert os.listdir(store.path) == [f"{key}.json"]  # temp file removed, old record intact
    assert store.load(cfg, 0, "f")["result"] == {"curve": [1.0, 1.0]}


def test_corrupted_file_is_warned_and_treated_as_missing(tmp_path):
    store = ResultStore(tmp_path)
    configs, seeds = [{"lr": 0.5, "x": 0}], [0, 1]
    recs = sweep(W.noisy_descent, configs, seeds, store=store, executor="sequential", progress=False)
    full = (tmp_path / f"{recs[0]['key']}.json").read_text()
    (tmp_path / f"{recs[0]['key']}.json").write_text(full[: len(full) // 2])  # a crash of a non-atomic writer
    bad = json.loads((tmp_path / f"{recs[1]['key']}.json").read_text())
    bad["config"]["lr"] = 0.25  # content does not match its key
    (tmp_path / f"{recs[1]['key']}.json").write_text(json.dumps(bad))
    with pytest.warns(RuntimeWarning, match="corrupted"):
        assert not store.has(configs[0], 0, W.noisy_descent)
    with pytest.warns(RuntimeWarning) as caught:
        assert len(ResultStore(tmp_path)) == 0
    assert sorted("does not match" in str(w.message) for w in caught) == [False, True]
    with pytest.warns(RuntimeWarning):
        again = sweep(W.noisy_descent, configs, seeds, store=store, executor="sequential", progress=False)
    assert again == recs and len(store) == 2


# ------------------------------------------------------------------------------------ resumption

def test_resume_after_a_worker_process_dies(tmp_path):
    marks = tmp_path / "marks"
    marks.mkdir()
    store = ResultStore(tmp_path / "res")
    configs = grid(lr=0.5, x=range(4), marker_dir=str(marks), crash_x=3)
    with pytest.raises(SweepError, match="worker process died") as info:
        sweep(W.noisy_descent, configs, [0, 1], store=store, executor="processes", max_workers=2,
              progress=False)
    done = {r["key"] for r in store.records()}
    assert 1 <= len(done) < 8 and len(info.value.records) == len(done)
    assert len(info.value.failures) + len(done) == 8
    assert all("worker process died" in f["error"] for f in info.value.failures)

    recs = sweep(W.noisy_descent, configs, [0, 1], store=store, executor="sequential", progress=False)
    assert len(recs) == 8 and len({r["key"] for r in recs}) == 8 and len(_json_files(store.path)) == 8
    for r in recs:
        n = W.executions(marks, f"x{r['config']['x']}-lr0.5-s{r['seed']}")
        assert n >= 1
        if r["key"] in done:
            assert n == 1  # a finished run is never re-executed
    assert sweep(W.noisy_descent, configs, [0, 1], store=store, executor="sequential", progress=False) == recs


def test_resume_after_the_sweep_process_is_killed(tmp_path):
    marks, res = tmp_path / "marks", tmp_path / "res"
    marks.mkdir()
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(HERE)!r})
        import _sweep_workers as W
        from fedlab.experiments import grid, sweep
        sweep(W.noisy_descent, grid(lr=0.5, x=range(6), marker_dir={str(marks)!r}, sleep=0.15), [0],
              store={str(res)!r}, executor="sequential", progress=False)
    """)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TQDM_DISABLE": "1"}
    proc = subprocess.Popen([sys.executable, "-c", script], env=env, cwd=str(HERE.parent))
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and (not res.exists() or len(_json_files(res)) < 2):
            assert proc.poll() is None, "the sweep finished or crashed before it was killed"
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    store = ResultStore(res)
    done = {r["key"] for r in store.records()}
    assert 2 <= len(done) < 6
    configs = grid(lr=0.5, x=range(6), marker_dir=str(marks), sleep=0.15)
    recs = sweep(W.noisy_descent, configs, [0], store=store, executor="sequential", progress=False)
    assert [r["config"]["x"] for r in recs] == list(range(6)) and len(_json_files(res)) == 6
    for r in recs:
        n = W.executions(marks, f"x{r['config']['x']}-lr0.5-s0")
        assert n == 1 if r["key"] in done else n >= 1


# ------------------------------------------------------------------------------------- executors

@pytest.fixture(scope="module")
def dask_cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, processes=True, threads_per_worker=1, dashboard_address=None,
                                  host="127.0.0.1") as cluster, distributed.Client(cluster) as client:
        yield cluster, client


def test_every_executor_returns_the_same_records(dask_cluster, tmp_path):
    cluster, client = dask_cluster
    configs = grid(lr=[0.1, 0.5], fail_seed=2)
    seeds = [0, 1, 2]
    kw = dict(progress=False, on_error="collect")
    reference = sweep(W.noisy_descent, configs, seeds, executor="sequential", **kw)
    assert [(r["config"]["lr"], r["seed"]) for r in reference] == [(lr, s) for lr in (0.1, 0.5) for s in seeds]
    assert [("error" in r) for r in reference] == [False, False, True] * 2
    assert reference[2]["result"] is None and "ValueError: diverged at lr=0.1" in reference[2]["error"]
    for name in EXECUTORS:  # every key of the dispatch table
        assert sweep(W.noisy_descent, configs, seeds, executor=name, max_workers=2, **kw) == reference, name
    store = ResultStore(tmp_path)
    assert sweep(W.noisy_descent, configs, seeds, executor=client, store=store, **kw) == reference
    assert sweep(W.noisy_descent, configs, seeds, executor=cluster.scheduler_address, **kw) == reference
    assert len(store) == 4 and {r["meta"]["executor"] for r in store.records()} == {"dask"}
    with pytest.raises(SweepError, match="2 run.*failed") as info:
        sweep(W.noisy_descent, configs, seeds, executor=client, store=store, progress=False)
    assert [f["seed"] for f in info.value.failures] == [2, 2] and len(info.value.records) == 4


@pytest.mark.parametrize("executor", ["sequential", "processes"])
def test_replicas_give_every_seed_its_result_alone_and_resume(executor, tmp_path, monkeypatch):
    configs, seeds = grid(lr=[0.05, 0.2]), [0, 1, 2]
    alone = sweep(W.fedavg_run, configs, seeds, executor="sequential", progress=False)
    assert sweep(W.fedavg_run, configs, seeds, executor=executor, replicas=True, max_workers=2,
                 progress=False) == alone
    store = ResultStore(tmp_path)
    sweep(W.fedavg_run, configs[:1], seeds[:2], store=store, executor="sequential", progress=False)
    units = []
    real = sweep_module._execute_unit
    monkeypatch.setattr(sweep_module, "_execute_unit", lambda fn, config, s, *a: units.append(list(s)) or
                        real(fn, config, s, *a))
    assert sweep(W.fedavg_run, configs, seeds, store=store, executor="sequential", replicas=2,
                 progress=False) == alone
    assert units == [[2], [0, 1], [2]]    # the stored runs are skipped; at most 2 seeds per unit


def test_replicas_must_be_a_bool_or_a_positive_int():
    with pytest.raises(ValueError, match="replicas"):
        sweep(W.fedavg_run, grid(lr=[0.1]), [0], replicas=0, executor="sequential", progress=False)


def test_worker_processes_use_one_thread_and_keep_freed_memory(monkeypatch):
    for name in ("OMP_NUM_THREADS", "FEDLAB_NUM_THREADS", *ALLOCATOR_ENV):
        monkeypatch.delenv(name, raising=False)
    (rec,) = sweep(W.worker_settings, [{"a": 0}], [0], executor="processes", max_workers=1, progress=False)
    assert rec["result"] == {"OMP_NUM_THREADS": "1", "FEDLAB_NUM_THREADS": "1", **ALLOCATOR_ENV, "torch_threads": 1}
    assert not {"OMP_NUM_THREADS", *ALLOCATOR_ENV} & set(os.environ)  # the parent's environment is restored


def test_dask_executor_without_dask_asks_to_install_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # makes `import distributed` fail
    with pytest.raises(ImportError, match=r"fedlab-workbook\[scale\]"):
        sweep(W.noisy_descent, [{"lr": 0.1}], [0], executor="tcp://127.0.0.1:1", progress=False)


# -------------------------------------------------------------------------------------- failures

def test_failures_are_collected_and_raised_at_the_end(tmp_path):
    store = ResultStore(tmp_path)
    with pytest.raises(SweepError) as info:
        sweep(W.noisy_descent, grid(lr=[0.1, 0.2], fail_seed=1), [0, 1, 2], store=store,
              executor="sequential", progress=False)
    err = info.value
    assert len(err.failures) == 2 and len(err.records) == 4 and len(store) == 4
    assert "lr=0.1" in str(err) and "lr=0.2" in str(err) and "Traceback" in err.failures[0]["traceback"]
    with pytest.raises(SweepError, match=r"TypeError: result\['model'\]"):
        sweep(W.returns_object, [{"a": 1}], 0, store=store, executor="sequential", progress=False)
    assert len(store) == 4  # nothing saved for failed runs


def _closure():
    def inner(seed):
        return seed
    return inner


@pytest.mark.parametrize("kwargs, err, match", [
    (dict(configs=[]), ValueError, "empty"),
    (dict(configs=grid(lr=[1]) + grid(lr=[1])), ValueError, "duplicates"),
    (dict(configs=[{"a": 1}]), TypeError, r"fn cannot be called as fn\(\*\*configs\[0\]"),
    (dict(configs=[{"a": 1, "seed": 0}]), ValueError, "seed"),
    (dict(configs=[{"a": object()}]), TypeError, r"configs\[0\]\['a'\]"),
    (dict(configs="abc"), TypeError, "configs"),
    (dict(seeds=[-1]), ValueError, r"seeds\[0\]"),
    (dict(seeds=[0.5]), TypeError, r"seeds\[0\]"),
    (dict(seeds="0"), TypeError, "seeds"),
    (dict(seeds=[]), ValueError, "seeds"),
    (dict(seeds=[1, 1]), ValueError, "distinct"),
    (dict(executor="threads"), ValueError, "executor"),
    (dict(executor=3), TypeError, "executor"),
    (dict(on_error="ignore"), ValueError, "on_error"),
    (dict(store=3), TypeError, "store"),
    (dict(max_workers=0), ValueError, "max_workers"),
    (dict(fn=lambda a, seed: a), TypeError, "lambda"),
    (dict(fn=_closure()), TypeError, "closure"),
    (dict(fn=functools.partial(W.noisy_descent, lr=0.1)), TypeError, "module-level function"),
    (dict(fn=3), TypeError, "callable"),
])
def test_sweep_rejects_bad_inputs(kwargs, err, match):
    args = dict(fn=W.noisy_descent, configs=[{"lr": 0.1}], seeds=[0], executor="processes", progress=False)
    args.update(kwargs)
    with pytest.raises(err, match=match):
        sweep(args.pop("fn"), args.pop("configs"), args.pop("seeds"), **args)


def test_notebook_functions_are_rejected_by_processes(monkeypatch):
    import types

    def f(a, seed):
        return a
    f.__module__, f.__qualname__ = "__main__", "f"
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))  # a kernel: no __file__
    with pytest.raises(TypeError, match="notebook"):
        sweep(f, [{"a": 1}], [0], executor="processes", progress=False)
    assert sweep(f, [{"a": 1}], [0], executor="sequential", progress=False)[0]["result"] == 1


def test_sequential_accepts_lambdas():
    recs = sweep(lambda a, seed: {"v": a + seed}, [{"a": 1}], [0, 2], executor="sequential", progress=False)
    assert [r["result"]["v"] for r in recs] == [1, 3]


# ------------------------------------------------------------------------------------- aggregate

def test_aggregate_seeds_matches_numpy():
    recs = sweep(W.noisy_descent, grid(lr=[0.1, 0.5], n_steps=5), [0, 1, 2], executor="sequential",
                 progress=False)
    aggs = aggregate_seeds(recs, "curve")
    assert [a["config"]["lr"] for a in aggs] == [0.1, 0.5] and all(a["n_seeds"] == 3 for a in aggs)
    for agg, lr in zip(aggs, (0.1, 0.5)):
        curves = np.array([r["result"]["curve"] for r in recs if r["config"]["lr"] == lr])
        np.testing.assert_allclose(agg["mean"], curves.mean(axis=0))
        np.testing.assert_allclose(agg["std"], curves.std(axis=0))
        assert agg["mean"].shape == (5,)
    loss = aggregate_seeds(recs, "loss", ddof=1)
    losses = np.array([r["result"]["loss"] for r in recs[:3]])
    assert loss[0]["mean"] == pytest.approx(losses.mean()) and loss[0]["std"] == pytest.approx(losses.std(ddof=1))
    assert aggregate_seeds(recs, lambda res: 2 * res["loss"])[0]["mean"] == pytest.approx(2 * losses.mean())

    rows = to_table(recs, ["loss", "curve"], digits=3)
    assert rows[0]["lr"] == 0.1 and rows[0]["n_seeds"] == 3
    assert rows[0]["loss_mean"] == round(losses.mean(), 3) == rows[0]["curve_mean"]
    assert set(rows[1]) == {"lr", "n_steps", "n_seeds", "loss_mean", "loss_std", "curve_mean", "curve_std"}


def test_aggregate_rejects_bad_records():
    recs = [{"config": {"a": 1}, "seed": 0, "result": {"c": [1, 2]}},
            {"config": {"a": 1}, "seed": 1, "result": {"c": [1, 2, 3]}},
            {"config": {"a": 2}, "seed": 0, "result": None, "error": "boom"}]
    with pytest.raises(ValueError, match="one length"):
        aggregate_seeds(recs, "c")
    with pytest.raises(ValueError, match="available"):
        aggregate_seeds(recs, "missing")
    with pytest.raises(ValueError, match="twice"):
        aggregate_seeds([recs[0], recs[0]], "c")
    with pytest.raises(TypeError, match="records"):
        aggregate_seeds([{"config": {}}], "c")
    assert aggregate_seeds(recs[2:], "c") == []  # failed runs are skipped


def test_fedlab_results_env_is_the_default_store(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDLAB_RESULTS", str(tmp_path / "shared"))
    marks = tmp_path / "marks"
    marks.mkdir()
    marks = str(marks)
    first = sweep(W.noisy_descent, [{"lr": 0.1, "marker_dir": marks}], [0], executor="sequential", progress=False)
    assert len(ResultStore(tmp_path / "shared")) == 1
    again = sweep(W.noisy_descent, [{"lr": 0.1, "marker_dir": marks}], [0], executor="sequential", progress=False)
    assert first == again and W.executions(marks, "x0-lr0.1-s0") == 1  # the second sweep reused the run
    monkeypatch.delenv("FEDLAB_RESULTS")
    sweep(W.noisy_descent, [{"lr": 0.2, "marker_dir": marks}], [0], executor="sequential", progress=False)
    assert len(ResultStore(tmp_path / "shared")) == 1


def test_group_by_config_keeps_order_and_skips_failures():
    from fedlab.experiments import group_by_config

    recs = [{"config": {"a": 1}, "seed": 0, "result": 1}, {"config": {"a": 2}, "seed": 0, "result": 2},
            {"config": {"a": 1}, "seed": 1, "result": 3}, {"config": {"a": 2}, "seed": 1, "result": None, "error": "x"}]
    groups = group_by_config(recs)
    assert [[r["result"] for r in g] for g in groups] == [[1, 3], [2]]
    with pytest.raises(TypeError, match="records\\[0\\]"):
        group_by_config([{"config": {}}])


# ----------------------------------------------------------------------------------- faults

def _script(body: str) -> str:
    return textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(HERE)!r})
        import _sweep_workers as W
        from fedlab.experiments import grid, sweep
    """) + textwrap.dedent(body)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie waiting to be reaped is dead
        return f.read().split(")")[-1].split()[0] != "Z"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads process states from /proc")
def test_killing_a_sweep_kills_its_workers(tmp_path):
    marks, res = tmp_path / "marks", tmp_path / "res"
    marks.mkdir()
    body = f"""
        if __name__ == "__main__":
            sweep(W.slow_run, grid(x=range(6), marker_dir={str(marks)!r}, sleep=1.5), [0], store={str(res)!r},
                  executor="processes", max_workers=2, progress=False)
    """
    proc = subprocess.Popen([sys.executable, "-c", _script(body)], env={**os.environ, "TQDM_DISABLE": "1"})
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(list(marks.glob("start-*"))) < 2:
            assert proc.poll() is None
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    workers = [int(p.name.split("-")[-1]) for p in marks.glob("start-*")]
    time.sleep(2.5)  # longer than a run: an orphan would finish its run and mark it
    assert workers and not [pid for pid in workers if _alive(pid)]
    assert not list(marks.glob("end-*")) and not list(Path(res).glob("*.json"))


def test_two_sweeps_on_one_store_compute_each_run_once(tmp_path):
    marks, res = tmp_path / "marks", tmp_path / "res"
    marks.mkdir()
    body = f"""
        recs = sweep(W.noisy_descent, grid(lr=0.5, x=range(8), marker_dir={str(marks)!r}, sleep=0.2), [0, 1],
                     store={str(res)!r}, executor="sequential", progress=False)
        assert len(recs) == 16 and all(r["result"] is not None for r in recs)
    """
    env = {**os.environ, "TQDM_DISABLE": "1", "OMP_NUM_THREADS": "1"}
    procs = [subprocess.Popen([sys.executable, "-c", _script(body)], env=env) for _ in range(2)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    counts = [W.executions(marks, f"x{x}-lr0.5-s{s}") for x in range(8) for s in (0, 1)]
    assert counts == [1] * 16
    assert len(_json_files(res)) == 16 and not list(Path(res).glob(".*.claim"))


def test_records_are_standard_json_with_a_checksum_and_group_readable(tmp_path):
    store = ResultStore(tmp_path)
    key = store.save({"a": 1}, {"nan": float("nan"), "inf": [float("inf"), 1.0]}, seed=0, fn="f")
    file = tmp_path / f"{key}.json"
    text = file.read_text()
    assert "NaN" not in text and "Infinity" not in text
    record = json.loads(text)  # standard JSON
    assert record["result"]["nan"] == {"__float__": "nan"} and len(record["checksum"]) == 64
    loaded = store.load({"a": 1}, 0, "f")["result"]
    assert np.isnan(loaded["nan"]) and loaded["inf"] == [float("inf"), 1.0]
    assert file.stat().st_mode & 0o777 == 0o644
    record["result"]["inf"][1] = 2.0  # edited content: the checksum no longer matches
    file.write_text(json.dumps(record))
    with pytest.warns(RuntimeWarning, match="checksum"):
        assert not store.has({"a": 1}, 0, "f")


def test_a_record_without_its_checksum_is_recomputed(tmp_path):
    store = ResultStore(tmp_path)
    [rec] = sweep(W.noisy_descent, [{"lr": 0.5, "x": 0}], [0], store=store, executor="sequential", progress=False)
    file = tmp_path / f"{rec['key']}.json"
    edited = json.loads(file.read_text())
    del edited["checksum"]
    edited["result"]["loss"] = -1.0  # an edited result whose checksum was removed
    file.write_text(json.dumps(edited))
    with pytest.warns(RuntimeWarning, match="missing fields: checksum"):
        assert not store.has({"lr": 0.5, "x": 0}, 0, W.noisy_descent)
    [again] = sweep(W.noisy_descent, [{"lr": 0.5, "x": 0}], [0], store=store, executor="sequential", progress=False)
    assert again["result"] == rec["result"] and "checksum" in json.loads(file.read_text())


def test_a_folder_in_place_of_a_record_is_named(tmp_path):
    store = ResultStore(tmp_path)
    folder = tmp_path / f"{store.key({'a': 1}, 0, 'f')}.json"
    folder.mkdir()
    with pytest.raises(ValueError, match=f"the result record '{folder}' is a folder, not a file; remove it"):
        store.has({"a": 1}, 0, "f")


def test_stale_temporary_files_are_removed_when_the_store_opens(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    from fedlab.experiments.store import _HOST
    stale = tmp_path / f".0123456789abcdef.{_HOST}.{dead}.x1y2.tmp"
    live = tmp_path / f".0123456789abcdef.{_HOST}.{os.getpid()}.x1y2.tmp"
    other = tmp_path / ".0123456789abcdef.otherhost.1.x1y2.tmp"
    for p in (stale, live, other):
        p.write_text("{")
    removed = ResultStore(tmp_path).remove_stale_temporary_files() + [stale] * (not stale.exists())
    assert not stale.exists() and live.exists() and other.exists() and stale in removed


def test_a_full_disk_names_the_store(tmp_path, monkeypatch):
    import errno
    store = ResultStore(tmp_path)

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(OSError, match=rf"result store '{tmp_path}' \(the disk is full\)"):
        store.save({"a": 1}, 1.0, seed=0, fn="f")
    monkeypatch.undo()
    assert not list(tmp_path.iterdir())


def test_a_script_without_a_main_guard_is_explained(tmp_path):
    script = tmp_path / "no_guard.py"
    script.write_text(_script("""
        sweep(W.noisy_descent, grid(lr=0.5, x=range(2)), [0], executor="processes", max_workers=1, progress=False)
    """))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "TQDM_DISABLE": "1"})
    assert proc.returncode != 0
    assert 'if __name__ == "__main__":' in proc.stderr


def test_kept_workers_serve_the_next_sweeps_until_something_changes(monkeypatch):
    from fedlab.experiments import KEEP_WORKERS_ENV, close_workers

    def pids():
        return {r["result"] for r in sweep(W.worker_pid, [{}], [0, 1], executor="processes", max_workers=1,
                                           progress=False)}

    monkeypatch.delenv(KEEP_WORKERS_ENV, raising=False)
    assert pids() != pids()                              # by default every sweep starts its own workers
    ctrl_c = sweep(W.ignores_ctrl_c, [{}], [0], executor="processes", max_workers=1, progress=False)
    assert ctrl_c[0]["result"] is True                   # Ctrl-C is the sweep's to handle, not an idle worker's
    monkeypatch.setenv(KEEP_WORKERS_ENV, "1")
    try:
        first = pids()
        assert len(first) == 1 and pids() == first       # kept: the next sweep runs on the same worker
        monkeypatch.setenv("FEDLAB_TEST_MARKER", "changed")
        changed = pids()
        assert changed != first                          # the environment changed: new workers
        close_workers()
        assert pids() != changed
    finally:
        close_workers()
