"""Notebook 06's rendered readings (helpers.alternatives, helpers.alternatives_report) that
replaced typed sentences: planted records come out in the words, the words follow the numbers
(each function is tried on at least two planted outcomes), and each function runs on the
committed results and shows their numbers."""
import json
import statistics
from pathlib import Path

import pytest

from helpers import alternatives as A
from helpers import alternatives_final as F
from helpers import alternatives_report as R

ROOT = Path(__file__).resolve().parent.parent


def _m(vals, seeds=None):
    return {"per_seed": list(vals), "mean": statistics.fmean(vals),
            "sd": statistics.stdev(vals) if len(vals) > 1 else None,
            "seeds": list(seeds if seeds is not None else range(len(vals)))}


# ---- version 1 (helpers.alternatives) ----

def _searches(wd, decay, epochs, lr, ivon_epochs, wall_s=600.0):
    sweep = {"wall_s": wall_s,
             "config": {"space": {"grid": {"weight_decay": [0.0, 1e-5, 1e-4],
                                           "lr_decay": [0.955, 1.0]}}, "max_epochs": 50},
             "metrics": {"trials": [{}] * 6,
                         "chosen": {"config": {"weight_decay": wd, "lr_decay": decay},
                                    "epochs": epochs}}}
    ivon = {"config": {"grid": [{"lr": 0.2, "hess_init": 0.1}, {"lr": 0.5, "hess_init": 0.1}],
                       "epochs": 30},
            "metrics": {"chosen": {"hp": {"lr": lr, "hess_init": 0.1}, "epochs": ivon_epochs}}}
    return {"map": sweep, "ivon": ivon}


def test_choice_edges_follow_the_records():
    text = A.choice_edges_text({}, _searches(1e-4, 0.955, 50, 0.2, 20, wall_s=517.0))
    assert "weight decay 0.0001, the largest of the 3 values searched (0, 1e-05, 0.0001)" in text
    assert "50 epochs, the search's cap" in text and "6 trials, 8.6 minutes" in text
    assert "learning rate 0.2, the smaller of the two searched (0.2, 0.5)" in text
    assert "20 of at most 30 epochs" in text and "might do better with a wider search" in text
    text = A.choice_edges_text({}, _searches(1e-5, 0.955, 35, 0.5, 30))
    assert "weight decay 1e-05, inside the 3 values searched" in text
    assert "35 of at most 50 epochs" in text and "30 epochs, the search's cap" in text
    assert "learning rate 0.5, the larger of the two searched" in text
    # a search of one value per setting, inside its epoch cap: no edge, and it says so
    one = _searches(1e-4, 1.0, 10, 0.2, 10)
    one["map"]["config"]["space"]["grid"] = {"weight_decay": [1e-4]}
    one["ivon"]["config"]["grid"] = [{"lr": 0.2, "hess_init": 0.1}]
    text = A.choice_edges_text({}, one)
    assert "the only value searched" in text and "No choice sits at an end of its grid" in text
    assert A.choice_edges_text({}, {"map": None, "ivon": None}) == ""


def _rel(points, low_counts, n_bins=15):
    """Reliability bins: ``points`` [(confidence, accuracy)] in the top bins (100 images each),
    ``low_counts`` images spread over the bins below."""
    conf, acc, count = [None] * n_bins, [None] * n_bins, [0] * n_bins
    for i, (c, a) in enumerate(points):
        b = n_bins - len(points) + i
        conf[b], acc[b], count[b] = c, a, 100
    count[0] = low_counts
    return {"centres": [(b + 0.5) / n_bins for b in range(n_bins)], "confidence": conf,
            "accuracy": acc, "count": count}


def _v1(rel, errs=None, rot=None, seeds=(0, 1, 2)):
    """A version-1 summary: one row per method of ``rel`` ({method: reliability bins})."""
    errs = errs or {}
    rows = []
    for m, r in rel.items():
        e = errs.get(m, 0.015)
        rows.append({"method": m, "label": A.LABELS[m], "seeds": list(seeds),
                     "test_error": _m([e] * len(seeds), seeds), "reliability_seed0": r,
                     "rotation": (rot or {}).get(m, {"angle": [0, 90, 180],
                                                      "error": [e, 0.9, 0.9],
                                                      "nll": [0.05, 8.0, 9.0], "ece": [0, 0, 0]})})
    return {"metrics": {"rows": rows, "per_seed": []}}


def test_reliability_reading_follows_the_bins():
    under = [(0.65, 0.80), (0.75, 0.85), (0.90, 0.95)]
    over = [(0.65, 0.50), (0.75, 0.60), (0.90, 0.80)]
    near = [(0.65, 0.66), (0.75, 0.74), (0.90, 0.91)]
    s = _v1({"map": _rel(over, 241), "bbb": _rel(under, 474), "ivon": _rel(near, 300)})
    text = A.reliability_text(s)
    assert "BBB's curve runs above the diagonal in every such bin" in text
    assert "under-confident" in text
    assert "MAP's runs below the diagonal in every such bin (over-confident)" in text
    assert "IVON's (2 of 3 bins above) crosses the diagonal" in text
    assert "closest first: IVON 0.010, BBB 0.100, MAP 0.133" in text
    assert "Only 341 (MAP) to 574 (BBB) of the 541 test images" in text
    assert "below 0.87 (the lowest 13 of the 15 bins)" in text and "seed 0 of 3" in text
    # the same bins, the methods swapped: the words swap with them
    s = _v1({"map": _rel(under, 500), "bbb": _rel(over, 100), "ivon": _rel(near, 300)})
    text = A.reliability_text(s)
    assert "MAP's curve runs above the diagonal" in text
    assert "BBB's runs below the diagonal in every such bin (over-confident)" in text
    assert "closest first: IVON 0.010, MAP 0.100, BBB 0.133" in text
    assert "Only 200 (BBB) to 600 (MAP)" in text  # the bin at 0.65 lies below the cut
    # a failing row (error >= 1/2) is not read, as the figure does not draw it
    s = _v1({"map": _rel(over, 10), "bbb": _rel(under, 10), "laplace_diag": _rel(near, 10)},
            errs={"laplace_diag": 0.6})
    assert "Laplace" not in A.reliability_text(s)
    assert "nothing to read" in A.reliability_text(_v1({"map": _rel([], 50)}))


def test_failed_rotation_reading_follows_the_curves():
    rot = {"map": {"angle": [0, 90], "error": [0.015, 0.9], "nll": [0.05, 9.0], "ece": [0, 0]},
           "bbb": {"angle": [0, 90], "error": [0.017, 0.9], "nll": [0.06, 8.0], "ece": [0, 0]},
           "laplace_diag": {"angle": [0, 90], "error": [0.6, 0.9], "nll": [1.86, 3.68],
                            "ece": [0, 0]},
           "laplace_kron": {"angle": [0, 90], "error": [0.7, 0.9], "nll": [2.22, 3.78],
                            "ece": [0, 0]}}
    errs = {"laplace_diag": 0.6, "laplace_kron": 0.7}
    s = _v1({m: _rel([], 1) for m in rot}, errs=errs, rot=rot)
    text = A.failed_rotation_text(s)
    assert "all-layer diagonal Laplace and all-layer KFAC Laplace" in text
    assert "start at 0° with 60–70 % error and an NLL of 1.86–2.22" in text
    assert "against 1.5–1.7 % and 0.05–0.06 for the working methods" in text
    assert "peaks at 3.68–3.78 (the working methods': 8.00–9.00)" in text
    assert "flatter NLL is not robustness" in text and "means over 3 seeds" in text
    # a failing row whose NLL climbs as high as the working methods': no robustness sentence
    rot["laplace_kron"]["nll"] = [2.22, 12.0]
    del rot["laplace_diag"]
    s = _v1({m: _rel([], 1) for m in rot}, errs=errs, rot=rot)
    text = A.failed_rotation_text(s)
    assert "curve of all-layer KFAC Laplace" in text and "starts at 0° with 70 % error" in text
    assert "peaks at 12.00" in text and "not robustness" not in text
    # no failing row: nothing to say
    del rot["laplace_kron"]
    assert A.failed_rotation_text(_v1({m: _rel([], 1) for m in rot}, rot=rot)) == ""


# ---- version 3 (helpers.alternatives_report) ----

def _v3(full, subset, seeds=range(4)):
    """A version-3 summary: ``full`` / ``subset`` {method: {score: per-seed values}}."""
    table = {}
    for on, part in (("full", full), ("subset", subset)):
        for m, scores in part.items():
            table.setdefault(m, {})[on] = {k: _m(v, seeds) for k, v in scores.items()}
    return {"table": table, "families": {}, "interim": False, "seeds": list(seeds)}


def test_underconfidence_bound():
    assert R.underconfidence(0.018, 0.116) == pytest.approx(0.08)
    assert R.underconfidence(0.02, 0.03) < 0  # ECE within twice the error: no direction


def test_laplace_vs_map_follows_the_seeds():
    s = _v3({"map": {"nll": [0.06, 0.06, 0.06, 0.06]},
             "laplace_ll_kron": {"nll": [0.07, 0.07, 0.05, 0.08]}}, {})
    text = R.laplace_vs_map_text(s)
    assert "NLL (0.0675) is higher than that of the MAP networks it wraps (0.0600)" in text
    assert "higher of the two on 3 of 4 paired seeds" in text and "not one of the plan's" in text
    s = _v3({"map": {"nll": [0.06, 0.06, 0.06, 0.06]},
             "laplace_ll_kron": {"nll": [0.05, 0.05, 0.05, 0.07]}}, {})
    text = R.laplace_vs_map_text(s)
    assert "(0.0550) is lower than that of the MAP networks it wraps (0.0600)" in text
    assert "on 1 of 4 paired seeds" in text
    assert R.laplace_vs_map_text(_v3({"map": {"nll": [0.1]}}, {}, seeds=[0])) == ""


def test_subset_ece_follows_the_numbers():
    full = {"map": {"ece": [0.004] * 4}, "bbb": {"ece": [0.004] * 4}}
    s = _v3(full, {"map": {"ece": [0.008, 0.008, 0.008, 0.002]}, "bbb": {"ece": [0.007] * 4},
                   "laplace_kron": {"ece": [0.07] * 4}})
    text = R.subset_ece_text(s)
    assert "2,000-image subset" in text
    assert "larger than on the full test sets for every method scored on both (2 of 2)" in text
    assert "on 7 of 8 method-seed pairs" in text and "MAP 0.0065 against 0.0040" in text
    assert "Laplace (all layers KFAC)" not in text  # scored on the subset only
    s = _v3(full, {"map": {"ece": [0.008] * 4}, "bbb": {"ece": [0.003] * 4}})
    text = R.subset_ece_text(s)
    assert "for 1 of the 2 methods scored on both (not for BBB (scale mixture))" in text
    s = _v3(full, {"map": {"ece": [0.002] * 4}, "bbb": {"ece": [0.003] * 4}})
    assert "for none of the 2 methods" in R.subset_ece_text(s)


def _subset(diag_err, diag_ece, kron_err, kron_ece):
    return {"map": {"test_error": [0.017] * 4, "ece": [0.008] * 4, "nll": [0.05] * 4},
            "laplace_diag": {"test_error": [diag_err] * 4, "ece": [diag_ece] * 4,
                             "nll": [0.17] * 4, "auroc_entropy": [0.90] * 4},
            "laplace_kron": {"test_error": [kron_err] * 4, "ece": [kron_ece] * 4,
                             "nll": [0.12] * 4, "auroc_entropy": [0.91] * 4},
            "bbb": {"auroc_entropy": [0.95] * 4}}


def test_laplace_note_follows_the_numbers():
    s = _v3({}, _subset(0.018, 0.116, 0.017, 0.07))
    text = R.laplace_note(s)
    assert "Laplace (all layers diagonal) ECE 0.116, NLL 0.170, error 1.80 %" in text
    assert "against MAP's ECE 0.008, NLL 0.050, error 1.70 %" in text
    assert "they are less confident than they should be" in text
    assert "at least 0.080 and 0.036 below the accuracy" in text
    # ECEs within twice the error rate: no direction claimed
    text = R.laplace_note(_v3({}, _subset(0.05, 0.06, 0.017, 0.07)))
    assert "it is less confident than it should be" in text and "0.036" in text
    assert "For Laplace (all layers diagonal) the ECE is at most twice the error rate" in text
    text = R.laplace_note(_v3({}, _subset(0.05, 0.06, 0.04, 0.07)))
    assert "less confident" not in text and "does not tell on which side" in text


def _v1_laplace(stale):
    rows = [{"method": m, "seeds": [0, 1, 2], "test_error": _m([e] * 3),
             "ece": _m([0.1] * 3), "auroc_entropy": _m([0.5] * 3)}
            for m, e in (("map", 0.017), ("laplace_diag", 0.6), ("laplace_kron", 0.7))]
    per_seed = [{"method": m, "seed": 0} if stale else
                {"method": m, "seed": 0, "laplace": A.laplace_settings(m)}
                for m in ("laplace_diag", "laplace_kron")]
    return {"metrics": {"rows": rows, "per_seed": per_seed}}


def test_laplace_takeaway_follows_both_versions():
    s = _v3({}, _subset(0.018, 0.116, 0.017, 0.07))
    text = R.laplace_takeaway(s, _v1_laplace(stale=True))
    assert text.startswith("- All-layer Laplace needs its linearised predictive")
    assert "err on 60 % and 70 % of the test digits" in text
    assert "err on 1.80 % and 1.70 % of the subset's (MAP 1.70 %)" in text
    assert "both fits are less confident than they should be: ECE 0.116 and 0.070" in text
    # version 1's rows made with the linearised predictive: no claim about weight sampling
    text = R.laplace_takeaway(s, _v1_laplace(stale=False))
    assert "needs its linearised predictive" not in text and "60 %" not in text
    assert "errs on 1.80 % and 1.70 %" in text
    # ECE within twice the error: the numbers, no direction
    text = R.laplace_takeaway(_v3({}, _subset(0.05, 0.06, 0.04, 0.07)), None)
    assert "less confident" not in text and "with ECE 0.060 and 0.070 (MAP 0.008" in text
    assert R.laplace_takeaway(_v3({}, {}), None) == ""


def _v1_rows(au, ece):
    rows = [{"method": m, "seeds": [0, 1, 2], "test_error": _m([0.015] * 3),
             "auroc_entropy": _m(au[m]), "ece": _m([ece[m]] * 3)} for m in au]
    return {"metrics": {"rows": rows, "per_seed": []}}


def test_version1_leaders_follow_the_numbers(monkeypatch):
    ece = {"map": 0.007, "bbb": 0.006, "ensemble": 0.0038, "ivon": 0.0032}
    tight = {"map": [0.92, 0.92, 0.93], "bbb": [0.93, 0.94, 0.94],
             "ensemble": [0.93, 0.935, 0.935], "ivon": [0.90, 0.90, 0.90]}
    text = R.version1_leaders(_v1_rows(tight, ece))
    assert "BBB (scale mixture) and deep ensemble (5) within one seed spread of the best OOD " \
           "AUROC (best: BBB (scale mixture), 0.937; 3 seeds)" in text
    assert "the two lowest ECEs for IVON (0.0032) and deep ensemble (5) (0.0038)" in text
    apart = dict(tight, ensemble=[0.80, 0.81, 0.80])
    ece2 = dict(ece, bbb=0.001)
    text = R.version1_leaders(_v1_rows(apart, ece2))
    assert "BBB (scale mixture) alone with the best OOD AUROC (0.937" in text
    assert "the two lowest ECEs for BBB (scale mixture) (0.0010) and IVON (0.0032)" in text
    # version1_text carries the reading of whichever version-1 record it loads
    monkeypatch.setattr(R, "load_v1", lambda: _v1_rows(apart, ece2))
    v3 = _v3({"map": {"ece": [0.004] * 4, "auroc_entropy": [0.9] * 4},
              "bbb": {"ece": [0.005] * 4, "auroc_entropy": [0.9] * 4}}, {})
    assert "alone with the best OOD AUROC" in R.version1_text(v3)
    monkeypatch.setattr(R, "load_v1", lambda: None)
    assert "found" not in R.version1_text(v3)


# ---- on the committed results ----

def test_the_readings_run_on_the_committed_results(monkeypatch):
    monkeypatch.setenv("BBB_RESULTS_DIR", str(ROOT / "results"))
    v1, v3 = R.load_v1(), R.load_summary()
    if v1 is None or v3 is None:
        pytest.skip("no committed results of notebook 06")
    rows = {r["method"]: r for r in v1["metrics"]["rows"]}
    searches = A.load_searches()
    text = A.choice_edges_text(v1, searches)
    chosen = searches["map"]["metrics"]["chosen"]
    assert f"{chosen['config']['weight_decay']:g}" in text and f"{chosen['epochs']} " in text
    text = A.reliability_text(v1)
    total = sum(rows["map"]["reliability_seed0"]["count"])
    assert f"of the {total:,} test images" in text and "seed 0 of" in text
    assert "MAP" in text and "BBB" in text
    failed = [m for m in rows if rows[m]["test_error"]["mean"] >= 0.5]
    text = A.failed_rotation_text(v1)
    assert (text == "") == (not failed)
    for m in failed:
        assert A.SHORT[m] in text
    if failed:
        start = [rows[m]["rotation"]["nll"][rows[m]["rotation"]["angle"].index(0)] for m in failed]
        assert f"{min(start):.2f}" in text and f"{max(start):.2f}" in text
    t = v3["table"]
    text = R.laplace_vs_map_text(v3)
    assert f"{t['laplace_ll_kron']['full']['nll']['mean']:.4f}" in text
    assert f"{t['map']['full']['nll']['mean']:.4f}" in text
    text = R.subset_ece_text(v3)
    assert f"MAP {t['map']['subset']['ece']['mean']:.4f} against " \
           f"{t['map']['full']['ece']['mean']:.4f}" in text
    text = R.laplace_note(v3)
    for m in F.ALL_LAYER:
        assert f"ECE {t[m]['subset']['ece']['mean']:.3f}" in text
    text = R.laplace_takeaway(v3, v1)
    for m in F.ALL_LAYER:
        assert f"{100 * t[m]['subset']['test_error']['mean']:.2f} %" in text
    text = R.version1_text(v3)
    assert f"{rows['ivon']['ece']['mean']:.4f}" in text
    json.dumps([text])  # plain text
