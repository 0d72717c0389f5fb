"""The paper's own protocol: the summed cost, the screening designs, the campaign driver."""
import json
import os
import socket
from collections import Counter
from itertools import combinations

import pytest
import torch

from helpers import paper_protocol as P
from helpers.elbo import elbo
from helpers.layers import BayesMLP
from helpers.priors import GaussianPrior
from helpers.profiles import L9, PAPER_FIXED, PAPER_SPACES


def test_l9_is_an_orthogonal_array():
    assert len(L9) == 9
    for a, b in combinations(range(4), 2):
        assert Counter((row[a], row[b]) for row in L9) == Counter(
            {(i, j): 1 for i in range(3) for j in range(3)})


def test_every_method_gets_nine_distinct_trials_inside_the_papers_ranges():
    for method in PAPER_SPACES:
        points = P.design(method)
        assert len(points) == 9
        assert len({json.dumps(p, sort_keys=True) for p in points}) == 9
        lrs = {p["lr"] for p in points}
        assert max(lrs) == pytest.approx(1e-3) and min(lrs) == pytest.approx(1e-5)
    mixture = P.design("bbb_mixture")
    for key in ("pi", "neg_log_sigma1", "neg_log_sigma2", "lr"):
        assert Counter(p[key] for p in mixture) == Counter({v: 3 for v in PAPER_SPACES[
            "bbb_mixture"][key]})


def test_fixed_settings_are_plain_sgd_on_the_summed_cost_from_a_random_start():
    assert PAPER_FIXED["optimizer"] == "sgd" and PAPER_FIXED["momentum"] == 0.0
    assert PAPER_FIXED["lr_decay"] == 1.0 and PAPER_FIXED["reduction"] == "sum"
    assert PAPER_FIXED["init_from"] is None and PAPER_FIXED["batch_size"] == 128


def test_summed_cost_is_the_mean_cost_times_the_batch_size():
    torch.manual_seed(0)
    model = BayesMLP(6, (5,), 3, prior=GaussianPrior(1.0))
    x, y = torch.randn(8, 6), torch.randint(0, 3, (8,))
    grads = {}
    for reduction in ("mean", "sum"):
        torch.manual_seed(1)
        model.zero_grad()
        elbo(model, x, y, kl_weight=0.1, reduction=reduction).loss.backward()
        grads[reduction] = [p.grad.clone() for p in model.parameters()]
    for gm, gs in zip(grads["mean"], grads["sum"]):
        torch.testing.assert_close(gs, 8 * gm)
    with pytest.raises(ValueError, match="reduction"):
        elbo(model, x, y, kl_weight=0.1, reduction="average")


def test_a_claim_of_a_live_process_holds_and_a_dead_ones_is_taken_over(tmp_path):
    cfg = P.screen_configs("sgd", 50, P.settings("smoke"))[0]
    job = P.Job("screen", cfg, tmp_path / "x.json")
    path = P._claim_path(job)
    path.parent.mkdir(parents=True)
    path.write_text(f"{socket.gethostname()}:{os.getppid()}")  # alive: our parent
    assert not P.claim(job)
    path.write_text(f"{socket.gethostname()}:{2 ** 22 + 12345}")  # no such process
    assert P.claim(job)
    assert path.read_text() == f"{socket.gethostname()}:{os.getpid()}"
    P.release(job)
    assert not path.exists()
    path.write_text("another-host:1")  # another machine's claim: alive while recently touched
    assert not P.claim(job)
    old = path.stat().st_mtime - P.STALE_S - 10
    os.utime(path, (old, old))
    assert P.claim(job)


def test_the_smoke_campaign_runs_every_stage_and_the_search_sees_no_test_set(shared_data,
                                                                               monkeypatch):
    import helpers as H
    monkeypatch.setenv("BBB_DATA_DIR", str(shared_data))
    s = P.settings("smoke")
    data = H.load_mnist(scale="paper", n_train=s["n_train"], n_test=s["n_eval"])
    with pytest.raises(ValueError, match="unknown methods"):
        P.drive(data, s, log=lambda m: None, methods=["adam"])
    # a process restricted to one method runs that method's jobs, every stage, and nothing else
    assert P.drive(data, s, log=lambda m: None, poll_s=0.01, methods=["sgd"]) > 0
    done = [json.loads(p.read_text())["config"]["method"]
            for p in P.root().glob("*/*.json") if p.parent.name in ("search", "runs")]
    assert done and set(done) == {"sgd"}
    assert P.drive(data, s, log=lambda m: None, poll_s=0.01) > 0
    ready, remaining = P.plan_jobs(s)
    assert ready == [] and remaining == 0
    search = [json.loads(p.read_text()) for p in (P.root() / "search").glob("*.json")]
    assert len(search) == 4 * (s["trials"] + s["keep"])
    for rec in search:
        assert "test_error" not in rec["metrics"]
        assert all("test_error" not in row for row in rec["history"])
    runs = [json.loads(p.read_text()) for p in (P.root() / "runs").glob("*.json")]
    assert sorted(r["config"]["method"] for r in runs) == sorted(PAPER_SPACES)
    for rec in runs:
        assert len(rec["history"]) == s["final_epochs"]
        assert all("test_error" in row for row in rec["history"])
        assert rec["code"]["commit"] is None or len(rec["code"]["commit"]) == 40
        chosen = P.chosen(s, rec["config"]["method"])
        assert {k: v for k, v in chosen["config"].items() if k not in ("H", "seed", "epochs")} \
            == {k: v for k, v in rec["config"].items() if k not in ("H", "seed", "epochs")}
    # a second pass trains nothing
    assert P.drive(data, s, log=lambda m: None, poll_s=0.01) == 0
    # the notebook's readings render at a width the paper never ran (the smoke profile's)
    rows = P.summary(s)
    rec = {"rows": rows, "analysis": P.analysis(rows)}
    assert all(H not in P.PAPER_TABLE1["bbb_mixture"] for H in s["widths"])
    text = P.what_it_shows(rec)
    assert "a width the paper did not run" in text
    assert P.takeaway(rec).startswith("- Trained as the paper says") and "paper's" not in \
        P.takeaway(rec).split("section 7):")[1].split(";")[0]


def _row(key, H, errs):
    return {"key": key, "H": H, "seeds": list(range(len(errs))), "test_error": errs}


def test_analysis_follows_the_plan_two_sided_and_paired():
    rows = [_row("sgd", 400, [0.0180, 0.0185, 0.0190, 0.0183, 0.0188]),
            _row("dropout", 400, [0.0150, 0.0152, 0.0149, 0.0151, 0.0153]),
            _row("bbb_gaussian", 400, [0.0170, 0.0172, 0.0171, 0.0169, 0.0173]),
            _row("bbb_mixture", 400, [0.0195, 0.0199, 0.0201, 0.0197, 0.0203])]
    res = P.analysis(rows)
    fam = res["orderings"][400]
    assert fam["dropout < SGD"]["verdict"] == "holds"
    assert fam["scale mixture < Gaussian prior"]["verdict"] == "reversed"
    assert fam["BBB (scale mixture) < SGD"]["verdict"] in ("reversed", "not resolved at 5 seeds")
    assert all(r["family_size"] == 3 for r in fam.values())
    assert res["comparable"][400]["verdict"] == "not shown comparable at 5 seeds"
    assert res["cells"]["dropout_h400"]["verdict"] == "matches the paper"
    assert res["cells"]["bbb_mixture_h400"]["verdict"].startswith("worse than the paper by 0.63")
    # unpaired seeds are dropped, not compared across seeds
    rows[0]["seeds"] = [5, 6, 7, 8, 9]
    assert P.analysis(rows)["orderings"][400]["dropout < SGD"]["verdict"] == "not measured yet"


def test_a_run_resumed_on_another_machine_names_both_and_their_speeds():
    """A run started on a GPU and finished on a CPU says so, with seconds per epoch per machine
    read from its per-epoch history (wall_s carries over the resume)."""
    from helpers import paper_protocol as P
    gpu = {"gpu": "NVIDIA H100 80GB HBM3", "cpu": "Intel Xeon", "threads": 1}
    cpu = {"cpu": "AMD EPYC", "threads": 1}
    hist = [{"epoch": e, "wall_s": 2.0 * e if e <= 3 else 6.0 + 10.0 * (e - 3)} for e in range(1, 6)]
    rec = {"machine": cpu, "history": hist,
           "segments": [{"from_epoch": 0, "machine": gpu}, {"from_epoch": 3, "machine": gpu},
                        {"from_epoch": 3, "machine": cpu}]}
    assert P.hardware(rec) == "NVIDIA H100 80GB HBM3; AMD EPYC, 1 thread from epoch 3"
    speeds = P.segment_speeds(rec)
    assert [(w, n) for w, n, _ in speeds] == [("NVIDIA H100 80GB HBM3", 3),
                                               ("AMD EPYC, 1 thread", 2)]
    assert abs(speeds[0][2] - 2.0) < 1e-9 and abs(speeds[1][2] - 10.0) < 1e-9
    one = {"machine": cpu, "history": hist}  # no segments: one machine
    assert P.hardware(one) == "AMD EPYC, 1 thread" and P.segment_speeds(one)[0][1] == 5


def test_code_version_is_the_code_the_process_loaded(monkeypatch):
    """A commit made while a long run goes on must not be named as that run's code: the version
    is read once per process (the driver reads it before its first job) and kept."""
    from helpers import campaign
    reads = []

    def fake():
        reads.append(1)
        return {"commit": f"c{len(reads)}", "dirty": False}
    monkeypatch.setattr(campaign, "_LOADED", None)
    monkeypatch.setattr(campaign, "_read_code_version", fake)
    first = campaign.code_version()
    first["commit"] = "tampered"
    assert campaign.code_version() == {"commit": "c1", "dirty": False} and len(reads) == 1
