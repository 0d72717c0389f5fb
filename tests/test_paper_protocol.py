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
