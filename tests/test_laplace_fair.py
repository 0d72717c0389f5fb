"""helpers.laplace_fair (issue 52, item 7): the validation grid's widening and refinement, the
declaration, the refusal to score on test data without a committed plan, and one flavour's
phase-1 record on a toy network (CPU, one thread, a few seconds)."""
import json
import subprocess
from types import SimpleNamespace

import pytest
import torch
from torch.nn import functional as F

from helpers import laplace_fair as P
from helpers.layers import mlp
from helpers.utils import one_thread


def test_a_best_value_at_the_grid_end_is_widened_until_interior_then_refined():
    calls = []

    def nll(d):  # minimum at delta = 10^6.4
        calls.append(d)
        return (torch.tensor(d).log10().item() - 6.4) ** 2
    g = P.grid_search(nll)
    assert g["interior"] and not g["at_cap"] and g["widened_decades"] == 3
    assert g["best_decade_log10"] == 6
    assert g["chosen_log10"] == 6.5  # the refinement's nearest point (4 per decade)
    logs = [c[0] for c in g["curve"]]
    assert logs == sorted(logs) and logs[0] == -4 and logs[-1] == 7
    assert len(calls) == len(g["curve"])  # each point evaluated once


def test_a_minimum_below_the_grid_widens_downwards():
    g = P.grid_search(lambda d: abs(torch.tensor(d).log10().item() + 6))
    assert g["interior"] and g["chosen_log10"] == -6 and g["curve"][0][0] == -7


def test_a_curve_still_falling_at_the_cap_is_reported_at_the_cap():
    g = P.grid_search(lambda d: 1.0 / (1.0 + d))  # falls for ever: MAP's limit
    assert g["at_cap"] and not g["interior"]
    assert g["chosen_log10"] == P.GRID["cap_log10"][1]
    assert max(c[0] for c in g["curve"]) == P.GRID["cap_log10"][1]


def test_the_plan_declares_the_rules_and_is_what_the_file_holds():
    p = P.plan()
    assert p["seeds"] == list(range(10)) and set(p["flavours"]) == set(P.FLAVOURS)
    grid = p["choices"]["val_grid"]
    assert "never a test image" in grid["validation_images"] and "2000" in grid[
        "validation_images"]
    assert "widening" in grid and "cap" in grid and "refinement" in grid
    assert "95 % interval" in p["failed_fit"] and "committed" in p["scoring"]["requires"]
    from helpers.utils import PROJECT_ROOT
    committed = PROJECT_ROOT / "results" / P.A.NB / P.FOLDER / "plan.json"
    assert json.loads(committed.read_text()) == p


def _git(root, *args):
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def test_test_scoring_refuses_without_a_committed_unchanged_plan(tmp_path, monkeypatch):
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "config", "user.email", "t@t")
    _git(tmp_path, "config", "user.name", "t")
    (tmp_path / "other").write_text("x")
    _git(tmp_path, "add", "other")
    _git(tmp_path, "commit", "-qm", "first")
    plan = tmp_path / "plan.json"
    with pytest.raises(P.PlanNotCommitted, match="does not exist"):
        P.require_committed_plan(plan, tmp_path)
    plan.write_text("{}\n")
    with pytest.raises(P.PlanNotCommitted, match="not committed"):
        P.require_committed_plan(plan, tmp_path)
    _git(tmp_path, "add", "plan.json")
    with pytest.raises(P.PlanNotCommitted, match="not committed"):  # staged is not committed
        P.require_committed_plan(plan, tmp_path)
    _git(tmp_path, "commit", "-qm", "plan")
    assert P.require_committed_plan(plan, tmp_path) == "plan.json"
    plan.write_text('{"changed": 1}\n')
    with pytest.raises(P.PlanNotCommitted, match="differs"):
        P.require_committed_plan(plan, tmp_path)
    # the command refuses with the reason, before loading any data
    import tools.laplace_fair as T
    from helpers import utils
    monkeypatch.setattr(utils, "PROJECT_ROOT", tmp_path)
    monkeypatch.setattr(P, "plan_path", lambda: plan)
    with pytest.raises(SystemExit, match="refusing to score on test data.*differs"):
        T.main(["score"])


def test_one_flavours_phase_one_record_on_a_toy_network():
    torch.manual_seed(0)
    x, y = torch.randn(300, 10), torch.randint(0, 3, (300,))
    net = mlp(10, (12, 12), 3)
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    for _ in range(150):
        opt.zero_grad()
        F.cross_entropy(net(x), y).backward()
        opt.step()
    net.eval()
    data = SimpleNamespace(x_train=x, y_train=y)
    xv, yv = torch.randn(80, 10), torch.randint(0, 3, (80,))
    with one_thread():
        rec = P.fit_flavour(net, data, "laplace_ll_kron", xv, yv, progress_fn=lambda m: None)
    assert len(rec["plan_v3_prior_precision"]) == 1  # plan v3: one scalar
    assert len(rec["marglik_layerwise"]["prior_precision"]) == 2  # weight, bias
    g = rec["val_grid"]
    assert g["val_nll"] == min(v for _, v in g["curve"])
    assert all(c["max_abs_difference"] <= 1e-5 for k, c in rec["fast_vs_library"].items()
               if k in P.CHOICES)


def test_the_library_refuses_a_per_tensor_prior_on_a_last_layer_fit_without_the_expansion():
    """Why ``last_layer_per_tensor_prior`` exists (laplace-torch 0.3); if the library ever
    accepts it, this test fails and the expansion can go."""
    from laplace import Laplace
    from torch.utils.data import DataLoader, TensorDataset
    torch.manual_seed(0)
    x, y = torch.randn(60, 5), torch.randint(0, 3, (60,))
    net = mlp(5, (6, 6), 3).eval()
    la = Laplace(net, "classification", subset_of_weights="last_layer", hessian_structure="kron")
    la.fit(DataLoader(TensorDataset(x, y), batch_size=30))
    with pytest.raises(ValueError, match="Diagonal or scalar prior"):
        la.optimize_prior_precision(method="marglik", prior_structure="layerwise", n_steps=2)
    P.last_layer_per_tensor_prior(la)
    la.optimize_prior_precision(method="marglik", prior_structure="layerwise", n_steps=2)
    # the library's factory never hands out the expanded class
    again = Laplace(net, "classification", subset_of_weights="last_layer", hessian_structure="kron")
    assert type(again) is not type(la) and type(again).__name__ == type(la).__name__
    assert la.prior_precision.shape == (2,)
    diag = la.prior_precision_diag
    assert diag.shape == (3 * 6 + 3,) and torch.equal(diag[:18], la.prior_precision[0].expand(18))


def test_the_summary_counts_interior_grids_and_takes_medians():
    def flavour(n_prior, log10, interior, nll):
        return {"val_grid": {"prior_precision": 10.0 ** log10, "chosen_log10": log10,
                             "interior": interior, "val_nll": nll},
                "marglik_layerwise": {"prior_precision": [10.0] * n_prior, "val_nll": nll + 1},
                "plan_v3_val_nll": nll + 1, "cpu_s": 2.0,
                "fast_vs_library": {"val_grid": {"max_abs_difference": 1e-7},
                                    "marglik_layerwise": {"max_abs_difference": 3e-7},
                                    "cpu_s": 1.0}}
    recs = {s: {"seed": s, "map_val_nll": 0.5, "cpu_s": 10.0,
                "flavours": {f: flavour(2 if f == "laplace_ll_kron" else 6, s, s != 1, 0.4)
                             for f in P.FLAVOURS}} for s in (0, 1, 2)}
    out = P.summary(recs)
    assert out["seeds"] == [0, 1, 2] and not out["complete"] and out["cpu_s"] == 30.0
    ll = out["flavours"]["laplace_ll_kron"]
    assert ll["val_grid"]["interior"] == 2 and ll["val_grid"]["median_log10"] == 1
    assert ll["val_grid"]["val_nll_minus_map"] == pytest.approx([-0.1] * 3)
    assert ll["marglik_layerwise"]["median_log10_per_tensor"] == [1.0, 1.0]
    assert ll["fast_vs_library_max"] == 3e-7


# ---- phase 2: the test sets ----

def _toy_fit(structure):
    from laplace import Laplace
    from torch.utils.data import DataLoader, TensorDataset
    torch.manual_seed(0)
    x, y = torch.randn(200, 6), torch.randint(0, 3, (200,))
    net = mlp(6, (8, 8), 3)
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    for _ in range(100):
        opt.zero_grad()
        F.cross_entropy(net(x), y).backward()
        opt.step()
    net.eval()
    la = Laplace(net, "classification", subset_of_weights="all", hessian_structure=structure)
    la.fit(DataLoader(TensorDataset(x, y), batch_size=50))
    la.prior_precision = torch.tensor([3.0, 5.0, 2.0, 7.0, 1.5, 4.0])
    return la


@pytest.mark.parametrize("structure", ["kron", "diag"])
def test_phase_two_scores_are_plan_v3s_scores_of_the_same_fit(structure):
    """``_set_scores`` (fast predictive, samples drawn as plan v3 drew them) gives the scores
    plan v3's own path (``ALT.laplace_probs`` / ``laplace_samples`` through ``F._scores``) gives,
    under the object's prior precision and under another one."""
    from helpers import alternatives as ALT
    from helpers import alternatives_final as AF
    from helpers import laplace_glm as G
    la = _toy_fit(structure)
    torch.manual_seed(1)
    x_in, y, x_out = torch.randn(70, 6), torch.randint(0, 3, (70,)), torch.randn(50, 6) * 3
    deltas = {"own": la.prior_precision.clone(), "other": torch.tensor(40.0)}
    with one_thread():
        got = P._set_scores(G.FastGLM(la), x_in, y, x_out, deltas, batch_size=16, n_samples=5,
                            seed=7)
    for name, d in deltas.items():
        la.prior_precision = d
        want = AF._scores(ALT.laplace_probs(la, x_in, batch_size=16),
                          ALT.laplace_probs(la, x_out, batch_size=16),
                          ALT.laplace_samples(la, x_in, 5, batch_size=16, seed=7),
                          ALT.laplace_samples(la, x_out, 5, batch_size=16, seed=7), y)
        for k in AF.SCORES:
            assert got[name][k] == pytest.approx(want[k], abs=1e-5), (name, k)
    assert got["own"]["nll"] != pytest.approx(got["other"]["nll"], abs=1e-4)


def _planted(nll_by_flavour, seeds=(0, 1, 2, 3)):
    """Phase-1 and phase-2 records and plan v3's records in which MAP's NLL is 0.06 on every
    set, BBB's 0.05, and each flavour's two choices have the NLL ``nll_by_flavour[f]`` plus a
    small per-seed wobble (same for both choices)."""
    score = lambda nll, au=0.9: {"test_error": 0.02, "nll": nll, "brier": 0.03,  # noqa: E731
                                 "ece": 0.01, "auroc_entropy": au, "auroc_mi": au}
    wob = [0.0, 0.0004, -0.0003, 0.0001, 0.0002]
    plan_recs, phase1, scores = {}, {}, {}
    for s in seeds:
        plan_recs[("map", s)] = {"full": score(0.06, 0.88), "subset": score(0.06, 0.88)}
        plan_recs[("bbb", s)] = {"full": score(0.05 + wob[s] / 2, 0.92),
                                 "subset": score(0.05 + wob[s] / 2, 0.92), "mc_repeats": None}
        phase1[s] = {"map_val_nll": 0.07, "flavours": {}}
        scores[s] = {"cpu_s": 5.0, "flavours": {}}
        for f in P.FLAVOURS:
            plan_recs[(f, s)] = {"full": score(0.2), "subset": score(0.2), "failed": None}
            v = nll_by_flavour[f] + wob[s]
            scores[s]["flavours"][f] = {
                c: {"prior_precision": [10.0, 100.0], "full": score(v, 0.88 + wob[s]),
                    "subset": score(v, 0.88 + wob[s])} for c in P.CHOICES}
            scores[s]["flavours"][f]["plan_v3_minus_record"] = {
                "full": {"nll": 1e-7 * s}, "subset": {"nll": 0.0, "auroc_mi": 2e-6}}
            phase1[s]["flavours"][f] = {
                "val_grid": {"chosen_log10": 12 if s else 5, "interior": s == 0,
                             "at_cap": s != 0, "prior_precision": 10.0 ** 5,
                             "curve": [[4, 0.08], [5, 0.069], [12, 0.07]]},
                "marglik_layerwise": {"prior_precision": [10.0, 100.0], "val_nll": 0.09}}
    claims = {"test NLL": [f"bbb < {f} on nll" for f in ("map", *P.FLAVOURS)],
              "OOD AUROC (entropy)": [f"{f} < bbb on auroc_entropy"
                                      for f in ("map", *P.FLAVOURS)]}
    plan_v3 = {"tests": {"families": claims, "alpha": 0.05}}
    return scores, phase1, plan_recs, plan_v3


def test_the_analysis_applies_the_failed_fit_rule_and_tests_only_the_other_rows():
    nll = {"laplace_ll_kron": 0.07, "laplace_diag": 0.06, "laplace_kron": 0.055}
    out = P.analysis(*_planted(nll))
    fl = out["flavours"]
    assert fl["laplace_ll_kron"]["val_grid"]["outcome"] == "failed fit"
    assert fl["laplace_diag"]["val_grid"]["outcome"] == "equal to MAP"
    assert fl["laplace_kron"]["marglik_layerwise"]["outcome"] == "better than MAP"
    assert fl["laplace_ll_kron"]["val_grid"]["tests"] is None  # no verdict on a failed fit
    t = fl["laplace_kron"]["val_grid"]["tests"]
    assert set(t) == set(P.CLAIMS["laplace_kron"])
    nll_claim = t["bbb < laplace_kron on nll"]
    assert nll_claim["on"] == "subset" and nll_claim["family_size"] == 4
    assert nll_claim["t_test"]["mean_diff"] == pytest.approx(-0.005 + statistics_mean_wobble(),
                                                             abs=1e-9)
    assert fl["laplace_diag"]["val_grid"]["at_cap"] == 3 and \
        fl["laplace_diag"]["val_grid"]["interior"] == 1
    assert fl["laplace_diag"]["val_grid"]["median_log10"] == 12
    assert fl["laplace_ll_kron"]["marglik_layerwise"]["median_log10_per_tensor"] == [1.0, 2.0]
    assert out["reproduction_max_abs_difference"]["laplace_kron full cpu"]["nll"] == \
        pytest.approx(3e-7)
    assert out["claims_on"] == {"laplace_ll_kron": "full", "laplace_diag": "subset",
                                "laplace_kron": "subset"}
    v = fl["laplace_kron"]["validation"]["1"]
    assert v["curve"][0] == [4, pytest.approx(0.01)] and v["chosen_log10"] == 12
    # the same row worse than MAP everywhere: a failed fit, no tests
    nll["laplace_kron"] = 0.065
    out = P.analysis(*_planted(nll))
    assert out["flavours"]["laplace_kron"]["val_grid"]["outcome"] == "failed fit"
    assert out["flavours"]["laplace_kron"]["val_grid"]["tests"] is None


def statistics_mean_wobble():
    """BBB's wobble is half the row's: BBB − row = −0.005 − mean(wobble) / 2."""
    wob = [0.0, 0.0004, -0.0003, 0.0001]
    return -sum(wob) / len(wob) / 2
