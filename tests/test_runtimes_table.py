"""tools/runtimes_table.py: each row of docs/reading.md's table of long runs times the runs of the
version its notebook reports, read from their own records. Every row is checked on planted
records (conftest points BBB_RESULTS_DIR at an empty folder): each holds a time of its own, and
decoys (earlier versions' files, a campaign still running) hold times that would show if read."""
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import runtimes_table as RT  # noqa: E402

DECOY = 1e6  # a decoy's seconds: 278 h, far above every planted row
CUDA = {"device": "cuda:0"}


def _put(rel, rec):
    from helpers.utils import results_dir
    path = results_dir() / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rec))


def _sgd(H, seed=0, **kw):
    return {"method": "sgd", "H": H, "epochs": 5, "lr": 1e-3, "optimizer": "adam", "seed": seed,
            **kw}


@pytest.fixture
def planted():
    """Plant one small record set per row (and decoys); return {row's path in its label:
    (seconds, count or None, on a GPU)}."""
    v1, pp, v3 = "01_mnist_classification/plan_v1", "01_mnist_classification/paper_protocol", \
        "06_alternatives/v3"
    # notebook 01, plan v1: a search trial resumed once (its row spans both processes), the SGD
    # network the warm-started trials start from, the search's summary (not a run record)
    _put(f"{v1}/search/h400/sgd/t1.json", {"process_wall_s": 100.0, "row": {"wall_s": 300.0}})
    _put(f"{v1}/search/h400/source/s.json", {"metrics": {"train_wall_s": 50.0},
                                             "process_wall_s": 60.0})
    _put(f"{v1}/search/h400/sgd.json", {"trials": [{"wall_s": DECOY}]})
    _put(f"{v1}/runs/h400/sgd/r.json", {"metrics": {"train_wall_s": 1000.0},
                                        "process_wall_s": 900.0})
    _put(f"{v1}/runs/h400/warm_start_source/w.json", {"metrics": {"train_wall_s": 150.0},
                                                      "process_wall_s": 200.0})
    # the paper's protocol: version 1's search and final runs (one at 2x1200 partly on a GPU);
    # version 2 is a campaign still running: not timed
    _put(f"{pp}/search/t.json", {"metrics": {"train_wall_s": 30.0}, "process_wall_s": 40.0})
    _put(f"{pp}/runs/a.json", {"config": _sgd(400), "metrics": {"train_wall_s": 500.0},
                               "process_wall_s": 400.0, "machine": {"device": "cpu"}})
    _put(f"{pp}/runs/b.json", {"config": _sgd(1200), "metrics": {"train_wall_s": 700.0},
                               "process_wall_s": 100.0, "machine": {"device": "cpu"},
                               "segments": [{"machine": CUDA}, {"machine": {"device": "cpu"}}]})
    _put(f"{pp}/v2/search/x.json", {"process_wall_s": DECOY})
    # the earlier Table 1 and searches: no reported run is theirs
    _put("01_mnist_classification/table1.json", {"metrics": {"rows": [{"runs": ["old"]}]}})
    _put("01_mnist_classification/sweep/old.json", {"wall_s": DECOY})
    _put("05_uncertainty/sweep/old.json", {"wall_s": DECOY})
    # 02, 03 (the earlier runs it reports; plan v3's campaign is running), 04
    _put("02_regression_uncertainty/fits.json", {"wall_s": 70.0})
    for i, n in enumerate(("tuning", "reported_paper", "reported_keep_all")):
        _put(f"03_contextual_bandit/{n}.json", {"wall_s": float(i + 1)})
    _put("03_contextual_bandit/plan_v3_runs/screen/x.json", {"wall_s": DECOY})
    from helpers.classification import RunConfig
    src = RunConfig.from_dict(_sgd(1200, epochs=7))
    net = RunConfig.from_dict({**_sgd(1200), "method": "bbb_mixture", "init_from": "sgd",
                               "init_epochs": 7})
    assert net.init_source().name == src.name
    _put("04_pruning/snr.json", {"metrics": {"models": [{"name": net.name}], "complete": True}})
    _put(f"01_mnist_classification/runs/{net.name}.json",
         {"config": net.__dict__, "metrics": {"train_wall_s": 80.0}})
    _put(f"01_mnist_classification/runs/{src.name}.json",
         {"config": src.__dict__, "metrics": {"train_wall_s": 20.0}})
    _put("04_pruning/v2/networks/n.json", {"process_wall_s": 90.0})
    _put("04_pruning/v3/networks/m.json", {"process_wall_s": 10.0})
    # 05 and 06: plan v3's final runs and searches; notebook 06's earlier summary, 05's earlier
    # OOD runs and its conv net (an exercise now) are decoys
    for i, m in enumerate(RT.OOD_METHODS):
        _put(f"{v3}/final/{m}/seed0.json", {"process_wall_s": float(i + 1), "train_s": DECOY})
    for i, m in enumerate(RT.MORE_06):
        _put(f"{v3}/final/{m}/seed0.json",
             {"process_wall_s": 100.0, "machine": CUDA if i == 0 else {"device": "cpu"}})
    for m in RT.OOD_SEARCHES:
        _put(f"{v3}/search/{m}/t.json", {"process_wall_s": 5.0, "row": {"wall_s": 4.0}})
    _put(f"{v3}/search/ivon/t.json", {"process_wall_s": 7.0})
    _put(f"{v3}/laplace_fair/seed0.json", {"wall_s": 11.0, "cpu_s": DECOY})
    _put(f"{v3}/laplace_fair/test/seed0.json", {"wall_s": 13.0})
    _put(f"{v3}/laplace_fair/summary.json", {"wall_s": DECOY})
    _put(f"{v3}/device_check/x.json", {"process_wall_s": DECOY})
    _put("05_uncertainty/priors_2d.json", {"wall_s": 30.0})
    _put("05_uncertainty/ood.json", {"metrics": {"rows": [{"train_wall_s": DECOY}]}})
    _put("05_uncertainty/bbb_conv_net.json", {"metrics": {"train_wall_s": DECOY}})
    _put("06_alternatives/summary.json",
         {"metrics": {"per_seed": [{"seed": 0, "method": "ivon", "train_s": DECOY}]}})
    return {
        f"`{v1}/search/`": (360.0, 2, False),
        f"`{v1}/runs/`": (1200.0, 2, False),
        f"`{pp}/search/`": (40.0, 1, False),
        "2×400 (01): the final runs": (500.0, 1, False),
        "2×1200 (01): the final runs": (700.0, 1, True),
        "`02_regression_uncertainty/fits.json`": (70.0, None, False),
        "reported_keep_all}.json`": (6.0, None, False),
        "`01_mnist_classification/runs/`": (100.0, None, False),
        "`04_pruning/{v2,v3}/networks/`": (100.0, 2, False),
        f"ensemble and BBB, `{v3}/final/`": (10.0, 4, False),
        f"MAP's), `{v3}/search/`": (15.0, 3, False),
        f"MAP's networks), `{v3}/final/`": (400.0, 4, True),
        f"`{v3}/search/ivon/`": (7.0, 1, False),
        f"`{v3}/laplace_fair/`": (24.0, 2, False),
        "`05_uncertainty/priors_2d.json`": (30.0, None, False),
    }


def _row(rows, key):
    hits = [r for r in rows if key in r[0]]
    assert len(hits) == 1, f"{key!r}: {len(hits)} rows match in {[r[0] for r in rows]}"
    return hits[0]


def test_every_row_times_the_reported_runs_from_their_own_records(planted):
    rows = RT.steps()
    assert len(rows) == len(planted), [r[0] for r in rows]
    for key, (seconds, n, gpu) in planted.items():
        what, s, command, counted = _row(rows, key)
        assert s == pytest.approx(seconds), what
        assert counted, what
        if n is not None:
            assert f": {n} " in what, what
        assert ("on a GPU" in what) == gpu, what
    # no decoy (an earlier version's file, a campaign still running) leaked into any row
    assert sum(r[1] for r in rows) == pytest.approx(sum(v[0] for v in planted.values()))


def test_each_row_names_the_command_that_retrains_its_runs(planted):
    rows = {key: _row(RT.steps(), key)[2] for key in planted}
    assert rows["2×400 (01): the final runs"] == \
        "`python tools/paper_protocol.py run --version=1`"
    assert rows["2×1200 (01): the final runs"].endswith("--version=1 --widths 1200`")
    assert "PROTOCOL=plan_v1" in rows["`01_mnist_classification/plan_v1/runs/`"]
    assert rows["`01_mnist_classification/runs/`"] == "`make retrain ONLY=04`"
    assert "final --methods map mc_dropout ensemble bbb" in \
        rows["ensemble and BBB, `06_alternatives/v3/final/`"]
    assert "laplace_fair.py" in rows["`06_alternatives/v3/laplace_fair/`"]


def test_a_missing_record_leaves_its_row_unknown_and_the_others_alone(planted):
    from helpers.utils import results_dir
    for p in (results_dir() / "06_alternatives/v3/search/ivon").glob("*.json"):
        p.unlink()
    rows = RT.steps()
    assert _row(rows, "`06_alternatives/v3/search/ivon/`")[1] is None
    assert _row(rows, "MAP's), `06_alternatives/v3/search/`")[1] == pytest.approx(15.0)


def test_a_record_is_timed_by_its_longest_clock():
    # resumed: the training time spans both processes, process_wall_s only the last one
    assert RT.record_seconds({"metrics": {"train_wall_s": 700.0}, "process_wall_s": 100.0}) == 700
    # whole: the process adds the evaluation to the training
    assert RT.record_seconds({"metrics": {"train_wall_s": 90.0}, "process_wall_s": 100.0}) == 100
    assert RT.record_seconds({"row": {"wall_s": 300.0}, "process_wall_s": 100.0}) == 300
    assert RT.record_seconds({"wall_s": 5.0}) == 5
    assert RT.record_seconds({"metrics": None, "train_s": 9.0}) is None


def test_the_table_sums_the_rows_and_names_no_machine(planted):
    body = RT.body()
    assert "every run above, from nothing (sum) | 59 min |" in body  # 3,562 s planted
    assert "2-D priors (05)" in body and "conv net" not in body.split("(05)")[0]
    for name in ("AMD", "EPYC", "Intel", "Xeon", "NVIDIA", "H200"):
        assert name not in body
    assert "59 min summed over the runs" in RT.summary()
