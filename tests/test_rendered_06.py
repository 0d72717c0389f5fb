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
    assert "- BBB's curve runs above the diagonal in every such bin (right more often than it " \
           "claims: under-confident)." in text
    assert "- MAP's curve runs below the diagonal in every such bin (over-confident)." in text
    assert "- IVON's curve crosses the diagonal (2 of 3 bins above)." in text
    assert "closest first: IVON 0.010, BBB 0.100, MAP 0.133." in text
    assert "Only 341 (MAP) to 574 (BBB) of the 541 test images" in text
    assert "below 0.87 (the lowest 13 of the 15 bins)" in text and "seed 0 of 3" in text
    # the same bins, the methods swapped: the words swap with them
    s = _v1({"map": _rel(under, 500), "bbb": _rel(over, 100), "ivon": _rel(near, 300)})
    text = A.reliability_text(s)
    assert "- MAP's curve runs above the diagonal" in text
    assert "- BBB's curve runs below the diagonal in every such bin (over-confident)" in text
    assert "closest first: IVON 0.010, MAP 0.100, BBB 0.133" in text
    assert "Only 200 (BBB) to 600 (MAP)" in text  # the bin at 0.65 lies below the cut
    # two methods on each side: plural words, one list of counts
    s = _v1({"map": _rel(over, 10), "ensemble": _rel(over, 10), "bbb": _rel(under, 10),
             "ivon": _rel(near, 10), "mc_dropout": _rel(near, 10)})
    text = A.reliability_text(s)
    assert "- MAP's and the ensemble's curves run below the diagonal" in text
    assert "- IVON's and MC dropout's curves cross the diagonal (2 and 2 of 3 bins above)." \
        in text
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


def _v1_table(auroc, ece=None, nll_rot=None):
    """A version-1 summary for the table readings: ``auroc`` {method: per-seed AUROCs}."""
    ece = ece or {}
    rows = []
    for m, a in auroc.items():
        rows.append({"method": m, "label": A.LABELS[m], "seeds": [0, 1, 2],
                     "test_error": _m([0.6] * 3 if m == "laplace_diag" else [0.015] * 3),
                     "nll": _m([0.05] * 3), "ece": _m([ece.get(m, 0.005)] * 3),
                     "auroc_entropy": _m(a), "train_time_ratio": _m([3.7 if m == "bbb" else 1] * 3),
                     "rotation": {"angle": [0, 90, 180], "error": [0.015, 0.9, 0.9],
                                  "nll": (nll_rot or {}).get(m, [0.05, 8.0, 9.0]),
                                  "ece": [0.01, 0.2, 0.2] if m == "bbb" else [0.02, 0.3, 0.3]}})
    return {"metrics": {"rows": rows, "per_seed": [{"method": "laplace_diag", "seed": 0}]}}


def _set(s, method, key, mean, sd):
    """Plant an exact mean and sd in a row of a version-1 summary."""
    row = next(r for r in s["metrics"]["rows"] if r["method"] == method)
    row[key] = {**row[key], "mean": mean, "sd": sd}


def test_version1_table_reading_defines_the_spread_and_names_the_rest():
    s = _v1_table({"bbb": [0.93, 0.94, 0.95], "ensemble": [0.93, 0.935, 0.94],
                   "ivon": [0.92, 0.92, 0.92], "map": [0.91, 0.92, 0.93],
                   "mc_dropout": [0.86, 0.87, 0.88], "laplace_diag": [0.5, 0.5, 0.5]})
    text = A.summary_text(s)
    assert f"*Within one seed spread* of the best mean means {A.SPREAD_RULE}." in text
    assert "  - Best: BBB (AUROC 0.940 ± 0.010).\n  - Within one seed spread of it: deep " \
           "ensemble (5) (0.935 ± 0.005)." in text
    assert "  - Outside it: IVON (0.920 ± 0.000), MAP (0.920 ± 0.010) and MC dropout (0.870 " \
           "± 0.010)." in text
    assert "printed precision" not in text  # every side is plain from the printed numbers
    assert "Why MC dropout is lowest was not tested" in text
    assert "The row of all-layer diagonal Laplace fails (60 % error). It predicted by " \
           "sampling" in text and "*linearised (GLM) predictive* (the network replaced" in text
    assert "found to underfit" in text and "This row is no verdict" in text
    assert "issue" not in text and text.count("\n- ") == 3
    assert "the lowest ECE is shared by BBB, deep ensemble (5), IVON, MAP and MC dropout " \
           "(0.0050 each)." in text and "Next" not in text
    # BBB alone ahead, MC dropout not last: no "why" sentence, no band
    s = _v1_table({"bbb": [0.97, 0.97, 0.97], "ensemble": [0.93, 0.935, 0.94],
                   "mc_dropout": [0.92, 0.92, 0.92], "map": [0.91, 0.91, 0.91]})
    text = A.summary_text(s)
    assert "Best: BBB (AUROC 0.970 ± 0.000)." in text
    assert "Within one seed spread of it" not in text
    assert "More than one seed spread behind it: deep ensemble (5) (0.935 ± 0.005), MC dropout " \
           "(0.920 ± 0.000) and MAP (0.910 ± 0.000)." in text
    assert "Why MC dropout" not in text and "Failed row" not in text


def test_version1_table_reading_says_when_the_printed_digits_do_not_decide():
    s = _v1_table({"bbb": [0.94] * 3, "ivon": [0.92] * 3, "laplace_ll_kron": [0.92] * 3,
                   "ensemble": [0.92] * 3, "map": [0.90] * 3},
                  ece={"ivon": 0.0032, "laplace_ll_kron": 0.00376, "ensemble": 0.00381})
    # IVON outside by 0.00007: the printed gap (0.938 - 0.927) equals its printed sd (0.011)
    # last-layer Laplace inside by 0.00001: the printed gap (0.938 - 0.926) exceeds its sd (0.011)
    _set(s, "laplace_ll_kron", "auroc_entropy", 0.92649, 0.01103)
    _set(s, "bbb", "auroc_entropy", 0.93751, 0.0065)
    _set(s, "ivon", "auroc_entropy", 0.92660, 0.01084)
    text = A.summary_text(s)
    assert "Within one seed spread of it: last-layer Laplace (0.926 ± 0.011)." in text
    assert "- Last-layer Laplace is inside by less than the printed precision: its gap to BBB, " \
           "0.01102, is no larger than the larger of the two sds (last-layer Laplace's), " \
           "0.01103." in text
    assert "- IVON is outside by less than the printed precision: its gap to BBB, 0.0109, is " \
           "larger than the larger of the two sds (IVON's), 0.0108." in text
    assert "MAP is" not in text  # MAP's side is plain from the printed numbers
    # means that print alike at four decimals are a tie, ordered with more digits
    assert "IVON the lowest ECE (0.0032). Next, equal at four decimals: last-layer Laplace " \
           "(0.00376) and deep ensemble (5) (0.00381)." in text
    s2 = _v1_table({"bbb": [0.94] * 3, "ivon": [0.92] * 3, "map": [0.90] * 3},
                   ece={"ivon": 0.0032, "map": 0.0045})
    text = A.summary_text(s2)
    assert "IVON the lowest ECE (0.0032). Next: MAP (0.0045)." in text and "equal at" not in text
    # a tie for the lowest: no single winner is named
    s3 = _v1_table({"bbb": [0.94] * 3, "ivon": [0.92] * 3, "map": [0.90] * 3},
                   ece={"ivon": 0.00321, "map": 0.00318})
    text = A.summary_text(s3)
    assert "the lowest ECE is shared, at four decimals, by MAP (0.00318) and IVON (0.00321). " \
           "Next: BBB (0.0050 each)" not in text
    assert "the lowest ECE is shared, at four decimals, by MAP (0.00318) and IVON (0.00321). " \
           "Next: BBB (0.0050)." in text
    assert "IVON the lowest ECE" not in text


def test_version1_table_reading_with_one_seed_and_one_leader():
    s = _v1_table({"bbb": [0.6], "map": [0.5], "mc_dropout": [0.4]},
                  ece={"bbb": 0.2, "map": 0.3, "mc_dropout": 0.35})
    for r in s["metrics"]["rows"]:
        r["seeds"] = [0]
    bbb = next(r for r in s["metrics"]["rows"] if r["method"] == "bbb")
    bbb["test_error"], bbb["nll"] = _m([0.01]), _m([0.04])
    text = A.summary_text(s)
    assert "(version 1: descriptive, 1 seed, no declared test)" in text
    assert "Within one seed spread" not in text and "seed spread behind" not in text
    assert "  - Best: BBB (AUROC 0.600).\n  - The others (one seed, so no spread): MAP (0.500) " \
           "and MC dropout (0.400)." in text
    assert "BBB has the lowest test error, NLL and ECE (0.2000). Next lowest ECE: MAP " \
           "(0.3000)." in text and "BBB the lowest ECE" not in text


def test_version1_rotation_and_answer_readings():
    s = _v1_table({"bbb": [0.94] * 3, "ivon": [0.93] * 3, "map": [0.92] * 3},
                  nll_rot={"ivon": [0.05, 7.0, 8.5], "map": [0.04, 9.0, 10.0]})
    text = A.rotation_text(s)
    assert "Every working method's error climbs from under 2 % (unrotated) to at least 90 % " \
           "by 90°." in text and "alike" not in text
    assert "(elsewhere MAP at 0°; IVON at 90° and 180°)" in text
    assert "MAP has the highest NLL from 90° on." in text
    assert "version 3 (section 7) has no rotation experiment" in text
    s = _v1_table({"bbb": [0.94] * 3, "map": [0.92] * 3}, nll_rot={"bbb": [0.01, 1.0, 1.0]})
    text = A.rotation_text(s)
    assert "lowest NLL at 3 of 3 angles;" in text and "elsewhere" not in text
    text = A.answer_text(_v1_table({"bbb": [0.94] * 3, "map": [0.92] * 3},
                                   ece={"bbb": 0.006, "map": 0.004}))
    assert text.startswith("**The answer** (version 1, 3 seeds).\n\n- BBB reaches the best")
    assert "- BBB does not reach the best ECE (MAP's 0.0040 against BBB's 0.0060, a gap larger " \
           "than one seed spread)." in text
    assert "3.7 times longer than MAP, above the 3× asked (counting the SGD network" in text


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
    assert "higher on 3 of 4 paired seeds" in text and "not one of the plan's" in text
    assert "referee" not in text and "set by its prior precision" in text
    s = _v3({"map": {"nll": [0.06, 0.06, 0.06, 0.06]},
             "laplace_ll_kron": {"nll": [0.05, 0.05, 0.05, 0.07]}}, {})
    text = R.laplace_vs_map_text(s)
    assert "(0.0550) is lower than that of the MAP networks it wraps (0.0600)" in text
    assert "higher on 1 of 4 paired seeds" in text
    assert R.laplace_vs_map_text(_v3({"map": {"nll": [0.1]}}, {}, seeds=[0])) == ""


def test_subset_ece_follows_the_numbers():
    full = {"map": {"ece": [0.004] * 4}, "bbb": {"ece": [0.004] * 4}}
    s = _v3(full, {"map": {"ece": [0.008, 0.008, 0.008, 0.002]}, "bbb": {"ece": [0.007] * 4},
                   "laplace_kron": {"ece": [0.07] * 4}})
    text = R.subset_ece_text(s)
    assert "2,000-image subset" in text
    assert "larger than on the full test sets for every method in Tables 6.2 and 6.4 (2 of 2)" \
        in text
    assert "on 7 of 8 method-seed pairs" in text
    assert "0.0065" not in text  # the means are in the two tables, not repeated
    assert "Laplace (all layers KFAC)" not in text  # scored on the subset only
    s = _v3(full, {"map": {"ece": [0.008] * 4}, "bbb": {"ece": [0.003] * 4}})
    text = R.subset_ece_text(s)
    assert "for 1 of the 2 methods in Tables 6.2 and 6.4 (not for BBB (scale mixture))" in text
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
    assert "- Error: 1.80 % and 1.70 % (MAP 1.70 %); ECE: 0.116 and 0.070 (MAP 0.008)." in text
    assert "Both fits' ECE is more than twice their error rate" in text
    assert "their mean confidence lies at least 0.080 and 0.036 below the accuracy" in text
    assert "Their NLL above MAP's therefore comes with this under-confidence" in text
    assert "highest AUROC" not in text  # BBB's subset AUROC (0.95) is the highest: no note
    # ECEs within twice the error rate: no direction claimed
    text = R.laplace_note(_v3({}, _subset(0.05, 0.06, 0.017, 0.07)))
    assert "The ECE of Laplace (all layers KFAC) is more than twice its error rate" in text
    assert "its mean confidence lies at least 0.036" in text
    assert "For Laplace (all layers diagonal) the ECE is at most twice the error rate" in text
    text = R.laplace_note(_v3({}, _subset(0.05, 0.06, 0.04, 0.07)))
    assert "below the accuracy" not in text and "does not tell on which side" in text
    # an all-layer fit with the best subset AUROC is named, with its prediction cost
    sub = _subset(0.018, 0.116, 0.017, 0.07)
    sub["laplace_kron"]["auroc_entropy"] = [0.97] * 4
    s = _v3({}, sub)
    s["cost"] = {"bbb": {"predict_s_10k": 4.0}, "laplace_kron": {"predict_s_10k": 4000.0}}
    text = R.laplace_note(s)
    assert "- Laplace (all layers KFAC) has the highest AUROC on the subset (0.970; BBB " \
           "0.950), at 4,000 s per 10,000 predictions on one CPU thread (1,000× BBB's)." in text


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
    assert text.startswith("- **All-layer Laplace.** With weights sampled through the whole "
                           "network (version 1) the fits erred on 60 % and 70 % of the test "
                           "digits.")
    assert "With the linearised predictive (version 3) they err on 1.80 % and 1.70 % of the " \
           "subset (MAP 1.70 %)." in text
    # the two versions' MAP networks differ: a literature match, not a shown cause
    assert "no same-network comparison; it is consistent with [Immer et al. (2021)]" in text
    assert "needs" not in text
    assert "Both fits are under-confident" in text and "0.116" not in text
    # version 1's rows made with the linearised predictive: no claim about weight sampling
    text = R.laplace_takeaway(s, _v1_laplace(stale=False))
    assert "Immer" not in text and "60 %" not in text
    assert "errs on 1.80 % and 1.70 %" in text
    # ECE within twice the error: the numbers, no direction
    text = R.laplace_takeaway(_v3({}, _subset(0.05, 0.06, 0.04, 0.07)), None)
    assert "under-confident" not in text and "ECE: 0.060 and 0.070 (MAP 0.008)" in text
    assert R.laplace_takeaway(_v3({}, {}), None) == ""


def _v1_rows(au, ece, seeds=(0, 1, 2)):
    rows = [{"method": m, "seeds": list(seeds), "test_error": _m([0.015] * 3),
             "auroc_entropy": _m(au[m]), "ece": _m([ece[m]] * 3)} for m in au]
    return {"metrics": {"rows": rows, "per_seed": []},
            "config": {"seeds": list(seeds),
                       "chosen": {"map": {"lr": 1e-3, "lr_decay": 0.955, "weight_decay": 1e-4,
                                          "epochs": 50}}}}


def _v1_search_records(dropout=0.25):
    def sweep(n, cap, metric, chosen=None):
        return {"config": {"max_epochs": cap, "metric": metric, "scheduler": {"name": "ASHA"},
                           "space": {"grid": {"lr_decay": [0.955, 1.0]}}},
                "metrics": {"trials": [{}] * n, "chosen": chosen}}
    return {"map": sweep(6, 50, "val_nll"),
            "mc_dropout": sweep(6, 50, "val_nll", {"config": {"dropout": dropout, "lr": 1e-3,
                                                              "lr_decay": 0.955,
                                                              "weight_decay": 0.0},
                                                   "epochs": 20}),
            "bbb": sweep(64, 60, "val_error"),
            "ivon": {"config": {"grid": [{}, {}], "epochs": 30}}}


def _v3_recs(dropout=0.4):
    return {("mc_dropout", 0): {"setting": {"dropout": dropout, "lr": 3e-4, "lr_decay": 1.0,
                                            "weight_decay": 1e-4, "epochs": 55}},
            ("map", 0): {"setting": {"lr": 3e-4, "lr_decay": 1.0, "weight_decay": 1e-3,
                                     "epochs": 60}}}


def test_version1_takeaway_describes_what_changed_and_names_no_cause():
    ece = {"map": 0.007, "mc_dropout": 0.004, "bbb": 0.006, "laplace_ll_kron": 0.0038}
    au1 = {"map": [0.92] * 3, "mc_dropout": [0.87] * 3, "bbb": [0.94] * 3,
           "laplace_ll_kron": [0.93] * 3}
    v1 = _v1_rows(au1, ece)
    v3 = _v3({"map": {"ece": [0.004] * 4, "auroc_entropy": [0.88] * 4},
              "mc_dropout": {"ece": [0.005] * 4, "auroc_entropy": [0.96] * 4},
              "bbb": {"ece": [0.004] * 4, "auroc_entropy": [0.92] * 4},
              "laplace_ll_kron": {"ece": [0.0226] * 4, "auroc_entropy": [0.91] * 4}}, {})
    text = R.version1_text(v3, v1, _v1_search_records(), _v3_recs())
    assert text.startswith("- **Version 1 against version 3** (a description: no test compares "
                           "the versions")
    assert "  - MC dropout's AUROC: 0.870 in version 1 (the lowest of its working methods), " \
           "0.960 in version 3 (the highest on the full test sets)." in text
    assert "  - Last-layer Laplace's ECE: 0.0038 in version 1, 0.0226 in version 3." in text
    assert "  - Seeds: 0–2 → 0–3." in text
    assert "Version 1: 2–64 trials per method, epoch caps of 30–60, early stopping in some, a " \
           "learning-rate decay among the settings; BBB's chosen by validation error. " \
           "Version 3: 16 trials each, 60 epochs, no early stopping" in text
    assert "MC dropout's chosen setting (in both versions from its own validation-NLL search): " \
           "dropout 0.25 → 0.4; learning rate 0.001 → 0.0003; learning-rate decay per epoch " \
           "0.955 → none; weight decay 0 → 0.0001; 20 → 55 epochs." in text
    assert "MAP's chosen setting, under the Laplace fit: learning rate 0.001 → 0.0003; " \
           "learning-rate decay per epoch 0.955 → none; weight decay 0.0001 → 0.001; 50 → 60 " \
           "epochs." in text
    for cause in ("moved the results", "with its own search", "because", "Equal searches"):
        assert cause not in text
    # MC dropout in the middle in version 3, same dropout rate, same seeds: no rank words, and
    # only what differs is listed
    v3["table"]["mc_dropout"]["full"]["auroc_entropy"] = _m([0.90] * 4, range(4))
    text = R.version1_text(v3, _v1_rows(au1, ece, seeds=range(4)),
                           _v1_search_records(dropout=0.4), _v3_recs(dropout=0.4))
    assert "MC dropout's AUROC: 0.870 in version 1, 0.900 in version 3." in text
    assert "lowest" not in text and "Seeds:" not in text and "dropout 0.4" not in text
    assert "learning rate 0.001 → 0.0003" in text
    # no version 1 record: nothing to compare
    assert R.version1_text(v3, {}, {}, {}) == ""


# ---- version 3: the answer, section 6's question, the notes ----

def _fam(nll, auroc):
    """Plan-like families from {rival: verdict} per score (Holm p 0.24 for a MAP NLL claim)."""
    fam = {"test NLL": {f"bbb < {m} on nll": {"verdict": v, "p_holm": 0.24 if m == "map" else
                                              0.01} for m, v in nll.items()},
           "OOD AUROC (entropy)": {f"{m} < bbb on auroc_entropy": {"verdict": v, "p_holm": 0.01}
                                   for m, v in auroc.items()}}
    return fam


NR = "not resolved at 10 seeds"


def _answered(fam, full, subset=None, ratio=1.9):
    s = _v3(full, subset or {})
    s.update(families=fam, cost={"bbb": {"train_ratio_to_map": ratio}}, seeds=list(range(10)))
    return s


def test_the_answer_is_bullets_joined_with_and():
    fam = _fam({"map": NR, "mc_dropout": "reversed", "ensemble": "reversed", "ivon": NR,
                "laplace_ll_kron": "holds", "laplace_diag": "holds"},
               {"map": "holds", "mc_dropout": "reversed", "laplace_kron": "reversed",
                "ivon": NR, "ensemble": NR})
    sub = {"map": {"nll": [0.05] * 4}, "laplace_ll_kron": {"nll": [0.065] * 4},
           "laplace_diag": {"nll": [0.17] * 4}}
    text = R.answer_line(_answered(fam, {}, sub))
    assert "- It loses to MC dropout and deep ensemble (5) on test NLL, and to MC dropout and " \
           "Laplace (all layers KFAC) on OOD AUROC." in text
    assert "- Its wins (claims that hold): on test NLL over Laplace (last layer) and Laplace " \
           "(all layers diagonal) (fits that score worse than MAP itself), and on OOD AUROC " \
           "over MAP." in text
    assert "subset: 0.0650 and 0.1700, against MAP's 0.0500." in text
    assert "- Against MAP itself, the NLL claim is not resolved at 10 seeds (Holm p 0.24)." in text
    assert "- Against IVON, ten seeds do not separate it on either score." in text
    assert "- On OOD AUROC, ten seeds do not separate it from deep ensemble (5)." in text
    assert "1.9× as long as MAP" in text and text.count("**Answer (version 3).**") == 1
    # no loss, a win over a fit better than MAP: no "worse than MAP" words, no number line
    fam = _fam({"map": "holds", "laplace_ll_kron": "holds"}, {"map": NR})
    sub = {"map": {"nll": [0.07] * 4}, "laplace_ll_kron": {"nll": [0.06] * 4}}
    text = R.answer_line(_answered(fam, {}, sub))
    assert "BBB loses to no rival." in text and "loses to MC" not in text
    assert "on test NLL over MAP and Laplace (last layer)." in text
    assert "worse than MAP itself" not in text and "against MAP's" not in text
    assert "Against MAP itself" not in text  # its NLL claim is resolved
    assert "- On OOD AUROC, ten seeds do not separate it from MAP." in text


def test_section_6_question_with_version_3_numbers():
    full = {"map": {"auroc_entropy": [0.88] * 4, "ece": [0.0041, 0.0039, 0.0043, 0.0041]},
            "mc_dropout": {"auroc_entropy": [0.958] * 4, "ece": [0.005] * 4},
            "bbb": {"auroc_entropy": [0.922] * 4, "ece": [0.0042] * 4}}
    s = _answered(_fam({}, {"mc_dropout": "reversed", "map": "holds"}), full)
    text = R.question_text(s)
    assert "(full test sets, 10 seeds)" in text and "within 3× MAP's training time?" in text
    assert "- **AUROC**: BBB's 0.922 does not reach MC dropout's 0.958, the highest; the " \
           "plan's test finds BBB worse than MC dropout (reversed)." in text
    assert "- **ECE**: BBB's 0.0042 does not reach MAP's 0.0041, the lowest, a gap inside one " \
           "seed spread (the ECE is not tested in version 3)." in text
    assert "- **Training time**: BBB 1.9× MAP's, within the 3× asked." in text
    # BBB best on both, slower than the budget
    full["bbb"] = {"auroc_entropy": [0.97] * 4, "ece": [0.001] * 4}
    s = _answered(_fam({}, {"mc_dropout": NR, "map": "holds"}), full, ratio=3.5)
    text = R.question_text(s)
    assert "BBB's 0.970 is the highest, ahead of MC dropout's 0.958; the plan's test does " \
           "not separate them (not resolved at 10 seeds)." in text
    assert "BBB's 0.0010 is the lowest, ahead of MAP's 0.0041, a gap larger than one seed " \
           "spread" in text
    assert "BBB 3.5× MAP's, above the 3× asked." in text
    s["interim"] = True
    assert R.question_text(s) == "" and R.question_text(None) == ""


def _v1_answer(bbb_auroc, bbb_ece, ratio):
    rows = [{"method": m, "seeds": [0, 1, 2], "test_error": _m([0.015] * 3),
             "auroc_entropy": _m([a] * 3), "ece": _m([e] * 3), "train_time_ratio": _m([r] * 3)}
            for m, a, e, r in (("map", 0.92, 0.007, 1.0), ("ivon", 0.926, 0.0032, 0.8),
                               ("bbb", bbb_auroc, bbb_ece, ratio))]
    return {"metrics": {"rows": rows, "per_seed": []}}


def test_version_1_is_marked_superseded_only_by_a_complete_version_3():
    full = {"map": {"auroc_entropy": [0.88] * 4, "ece": [0.0041] * 4},
            "mc_dropout": {"auroc_entropy": [0.958] * 4, "ece": [0.005] * 4},
            "bbb": {"auroc_entropy": [0.922] * 4, "ece": [0.0042] * 4}}
    v3 = _answered(_fam({}, {}), full, ratio=1.9)
    text = R.superseded_text(_v1_answer(0.937, 0.006, 3.7), v3)
    assert text.startswith("**Superseded by version 3.**")
    assert "its answer differs on AUROC and training time." in text
    # version 1 already behind on AUROC and within the budget: only the ECE part differs
    v3["table"]["bbb"]["full"]["ece"] = _m([0.001] * 4, range(4))
    text = R.superseded_text(_v1_answer(0.90, 0.006, 2.0), v3)
    assert "its answer differs on ECE." in text
    text = R.superseded_text(_v1_answer(0.90, 0.001, 2.0), v3)
    assert "its answer agrees on all three parts." in text
    v3["interim"] = True
    assert R.superseded_text(_v1_answer(0.937, 0.006, 3.7), v3) == ""
    assert R.superseded_text(None, v3) == ""


def _ivon_recs(ivon_epochs=60, ivon_batch=128):
    return {("map", 0): {"setting": {"epochs": 60, "batch_size": 128}},
            ("ivon", 0): {"setting": {"epochs": ivon_epochs, "batch_size": ivon_batch}}}


def test_ivon_cost_says_what_the_records_explain():
    s = {"seeds": [0], "cost": {"ivon": {"train_ratio_to_map": 2.23}}}
    v1 = {"metrics": {"rows": [{"method": "ivon", "train_time_ratio": _m([0.77] * 3)}]},
          "config": {"chosen": {"map": {"epochs": 50}, "ivon": {"epochs": 20}}}}
    text = R.ivon_cost_text(s, _ivon_recs(), v1)
    assert "designed to cost about as much as Adam per step, yet here it trains 2.2× as long " \
           "as MAP" in text
    assert "Both train 60 epochs with batches of 128 images" in text
    assert "neither more steps nor more than one sample per step explains the gap; where the " \
           "time goes was not measured" in text
    assert "Version 1 measured about 1.9× MAP's time per epoch (20 epochs against MAP's 50)" \
        in text
    text = R.ivon_cost_text(s, _ivon_recs(ivon_batch=64))
    assert "Both train" not in text and "may explain part of it" in text
    assert "Version 1" not in text
    assert R.ivon_cost_text({"seeds": [0], "cost": {}}, _ivon_recs()) == ""


def test_robustness_reading_lists_near_misses_as_bullets():
    fam = {"test NLL": {"bbb < mc_dropout on nll": {"verdict": "reversed", "p_holm": 0.004},
                        "bbb < map on nll": {"verdict": NR, "p_holm": 0.5}}}
    rob = {"test NLL": {"bbb < mc_dropout on nll": {"verdicts": ["reversed"] * 3,
                                                    "p_holm": [0.003, 0.01, 0.028]},
                        "bbb < map on nll": {"verdicts": [NR] * 3, "p_holm": [0.4, 0.5, 0.6]}}}
    text = R.robustness_text({"families": fam, "mc_robustness": rob})
    assert "every one of the 2 verdicts stays the same." in text
    # the one rule (Terms): a decided verdict, the test's Holm p printed first, then why
    assert text.endswith("Near the threshold (as defined under Terms):\n\n- BBB vs MC dropout "
                         "(test NLL, BBB worse): Holm p 0.004, but up to 0.028 under other "
                         "draws.")
    assert R.near_label(0.031, [0.039, 0.046]) == ("Holm p 0.031; 0.039–0.046 under other "
                                                   "draws: near the threshold")
    assert R.near_label(0.004, [0.003, 0.004]) == ""  # neither in [0.01, 0.1)
    assert "2 of 3 other draws put it across 0.05" in R.near_label(0.04, [0.06, 0.07, 0.03])
    # a not-resolved claim whose other draws reach below 0.1 is not flagged, but said apart
    fam["test NLL"]["bbb < map on nll"]["p_holm"] = 0.16
    rob["test NLL"]["bbb < map on nll"]["p_holm"] = [0.095, 0.12, 0.13]
    text = R.robustness_text({"families": fam, "mc_robustness": rob})
    near = text.split("Near the threshold")[1].split("Not resolved in the test")[0]
    assert "MAP" not in near and "BBB vs MAP (test NLL): Holm p 0.160; 0.095–0.130" in text
    fam["test NLL"]["bbb < map on nll"]["p_holm"] = 0.5
    rob["test NLL"]["bbb < map on nll"]["p_holm"] = [0.4, 0.5, 0.6]
    text = R.robustness_text({"families": fam, "mc_robustness": rob})
    assert "predictive seeds" not in text and "Monte-Carlo" not in text  # plain words
    assert "MAP (test NLL)" not in text
    # a changed verdict is named; nothing near the threshold: no list
    rob["test NLL"]["bbb < mc_dropout on nll"] = {"verdicts": ["reversed", NR, "reversed"],
                                                  "p_holm": [0.003, 0.2, 0.004]}
    text = R.robustness_text({"families": fam, "mc_robustness": rob})
    assert "<" not in text
    assert "1 of 2 verdicts stay the same under all 3: changed: BBB vs MC " \
           "dropout (test NLL): BBB worse → BBB worse, not resolved at 10 seeds, BBB worse." \
        in text
    assert "Near the threshold" not in text
    assert R.robustness_text({"families": fam, "mc_robustness": {}}) == ""


def test_the_hardware_line_is_one_line_and_the_detail_stays():
    cpu = {"device": "cpu", "cpu": "AMD EPYC", "threads": 1, "torch": "2.14"}
    gpu = {"device": "cuda:0", "gpu": "NVIDIA H200", "torch": "2.11"}
    recs = {("map", 0): {"method": "map", "machine": cpu},
            ("bbb", 0): {"method": "bbb", "machine": cpu},
            ("laplace_kron", 3): {"method": "laplace_kron", "machine": gpu}}
    text = R.hardware_line(recs)
    assert text == ("**Hardware.** 2 runs on one CPU thread (AMD EPYC); 1 all-layer Laplace fit "
                    "on a GPU (NVIDIA H200), around MAP's CPU-trained networks. Details: the "
                    "notebook's last cell.") and "\n" not in text
    recs[("ivon", 1)] = {"method": "ivon", "machine": gpu}
    assert "2 runs (IVON and Laplace (all layers KFAC)) on a GPU" in R.hardware_line(recs)
    del recs[("ivon", 1)], recs[("laplace_kron", 3)]
    assert R.hardware_line(recs).endswith("(AMD EPYC). Details: the notebook's last cell.")
    assert R.hardware_line({}) == ""


def test_search_reading_names_only_the_least_uncertain_edges(monkeypatch):
    picks = {"map": {"lr": 3e-4, "weight_decay": 1e-3}, "mc_dropout": {"lr": 3e-4, "dropout": 0.4},
             "bbb": {"lr": 3e-4, "rho_init": -7.0}, "ivon": {"lr": 0.3, "hess_init": 10.0}}
    monkeypatch.setattr(R.A, "chosen", lambda m: {"config": picks[m], "epochs": 60})
    text = R.search_text()
    assert text == ("BBB's choice (initial ρ −7) and IVON's (initial Hessian 10) sit at the end of "
                    "their grids with the least initial posterior uncertainty: a wider grid "
                    "could move them further toward a deterministic network.")
    picks["bbb"]["rho_init"] = -5.0
    assert R.search_text().startswith("IVON's choice (initial Hessian 10) sits at the end of "
                                      "its grid")
    picks["ivon"]["hess_init"] = 1.0
    assert R.search_text().startswith("No Bayesian method's choice sits")
    monkeypatch.setattr(R.A, "chosen", lambda m: None if m == "ivon" else
                        {"config": picks[m], "epochs": 60})
    assert R.search_text() == "Still searching: IVON."


def _ps(verdicts, precisions=(5.79, 1e4, 50.0), mc_change=False, repro=0.0):
    """A prior-check summary: ``verdicts`` {setting: (NLL claim's, AUROC claim's)}."""
    from helpers import laplace_prior_check as P
    means = {"marglik": (0.0734, 0.917), "gridsearch_val": (0.0608, 0.886),
             "map_weight_decay": (0.0613, 0.893)}
    st = {}
    for (k, p) in zip(P.SETTINGS, precisions):
        tests = {c: {"verdict": v, "p_holm": 0.01} for c, v in zip(P.CLAIMS, verdicts[k])}
        mc = {c: {"verdicts": [("reversed" if mc_change else v)] * 3, "p_holm": [0.01] * 3}
              for c, v in zip(P.CLAIMS, verdicts[k])}
        st[k] = {"prior_precision": [p] * 10, "tests": tests, "mc": mc,
                 "mean": {"nll": means[k][0], "auroc_entropy": means[k][1], "ece": 0.01}}
    return {"seeds": list(range(10)), "settings": st,
            "marglik_reproduces_plan": {"nll": repro, "auroc_entropy": 0.0}}


def _ps_per_seed(ps, nll):
    """Give every setting of a planted prior check per-seed NLLs ({setting: value})."""
    for k, v in nll.items():
        ps["settings"][k]["per_seed"] = {"nll": [v] * 4}
        ps["settings"][k]["mean"]["nll"] = v
    ps["seeds"] = list(range(4))
    return ps


def test_prior_check_reading_is_short_bullets():
    v3 = _v3({"map": {"nll": [0.0608] * 4, "auroc_entropy": [0.884] * 4}}, {})
    ps = _ps({"marglik": ("holds", NR), "gridsearch_val": (NR, "holds"),
              "map_weight_decay": (NR, NR)})
    text = R.prior_check_text(ps, v3)
    lines = text.splitlines()
    assert all(len(x) < 260 for x in lines) and sum(x.startswith("- ") for x in lines) == 6
    assert "(5.79 → 50 → 1e+04) the row's NLL improves (0.0734 → 0.0613 → 0.0608) while its " \
           "AUROC falls (0.917 → 0.893 → 0.886)" in text
    assert "MAP's own network: AUROC 0.884, NLL 0.0608." in text
    assert "on 10 of 10 seeds" in text
    # 0.0734 and 0.0613 lie above MAP's 0.0608, the grid's 0.0608 is planted equal: one left
    assert "With the precision set by marginal likelihood (the plan's) and N × MAP's weight " \
           "decay the interval of fit − MAP lies above zero: failed fits" in text
    assert "With the precision set by grid search on validation NLL, the fit is *indistinguishable from MAP* " \
           "on NLL" in text
    assert "and the plan's test applied gives NLL: not resolved at 10 seeds; AUROC: BBB " \
           "better." in text
    assert "reproduces the plan's own records exactly." in text
    assert "holds" not in text and "verdict" not in text  # no verdict words on failed fits
    # every setting above MAP: no outcome at all; a shaky outcome is named where one is drawn
    ps = _ps_per_seed(_ps({k: ("holds", "holds") for k in ("marglik", "gridsearch_val",
                                                           "map_weight_decay")}),
                      {"marglik": 0.07, "gridsearch_val": 0.061, "map_weight_decay": 0.062})
    text = R.prior_check_text(ps, v3)
    assert "Under every setting tried the interval of fit − MAP lies above zero: failed fits" \
        in text
    assert "BBB better" not in text
    ps = _ps({"marglik": ("holds", NR), "gridsearch_val": ("reversed", NR),
              "map_weight_decay": ("holds", "holds")}, precisions=(5.79, 100.0, 50.0),
             mc_change=True, repro=1e-6)
    ps["settings"]["map_weight_decay"]["mean"]["nll"] = 0.0600
    text = R.prior_check_text(ps, v3)
    assert "top of its range" not in text and "(largest difference: NLL 1e-06" in text
    assert "N × MAP's weight decay, the plan's test applied gives NLL: BBB better; AUROC: BBB " \
           "better (BBB's extra sampling seeds change the NLL and AUROC outcome" in text


def test_prior_check_rows_give_failed_fits_no_verdict():
    v3 = _v3({"map": {"nll": [0.0608] * 4}}, {})
    ps = _ps_per_seed(_ps({k: ("holds", "holds") for k in ("marglik", "gridsearch_val",
                                                           "map_weight_decay")}),
                      {"marglik": 0.07, "gridsearch_val": 0.0600, "map_weight_decay": 0.062})
    for k in ps["settings"]:
        for c in ps["settings"][k]["tests"]:
            ps["settings"][k]["tests"][c]["t_test"] = {"mean_diff": -0.01, "ci": [-0.02, -0.005]}
    header, rows = R.prior_check_rows(ps, v3)
    out = {r[0]: r for r in rows}
    assert out["marginal likelihood (the plan's)"][-1] == R.FAILED_FIT
    assert out["grid search on validation NLL"][-1] == "NLL: BBB better; AUROC: BBB better"
    # BBB − it: the NLL claim's a − b as it is, the AUROC claim's sign turned
    assert out["N × MAP's weight decay"][6] == "−0.0100 [−0.0200, −0.0050]"
    assert out["N × MAP's weight decay"][7] == "+0.010 [+0.005, +0.020]"
    assert out["grid search on validation NLL"][3] == "—"  # equal per seed: no interval


def _story(nll_fit=0.0734, ll_on="full"):
    """A version-3 summary for the story: MAP, MC dropout, IVON and last-layer Laplace."""
    full = {"map": {"nll": [0.0608, 0.0610, 0.0606, 0.0608]},
            "mc_dropout": {"nll": [0.053] * 4}, "ivon": {"nll": [0.057] * 4},
            "laplace_ll_kron": {"nll": [nll_fit, nll_fit + 0.001, nll_fit - 0.001, nll_fit]}}
    s = _v3(full, {})
    tt = lambda m, lo, hi: {"mean_diff": m, "ci": [lo, hi]}  # noqa: E731
    s["families"] = {
        "test NLL": {
            "bbb < map on nll": {"verdict": NR, "p_holm": 0.24, "on": "full",
                                 "t_test": tt(-0.0021, -0.0059, 0.0016)},
            "bbb < mc_dropout on nll": {"verdict": "reversed", "p_holm": 0.004, "on": "full",
                                        "t_test": tt(0.0052, 0.0027, 0.0078)},
            "bbb < laplace_ll_kron on nll": {"verdict": "holds", "p_holm": 3e-5, "on": ll_on,
                                             "t_test": tt(-0.0147, -0.0182, -0.0111)}},
        "OOD AUROC (entropy)": {
            "map < bbb on auroc_entropy": {"verdict": "holds", "p_holm": 0.031, "on": "full",
                                           "t_test": tt(-0.0376, -0.0615, -0.0136)},
            "ivon < bbb on auroc_entropy": {"verdict": NR, "p_holm": 0.65, "on": "full",
                                            "t_test": tt(-0.0064, -0.0203, 0.0078)}}}
    s["cost"] = {"map": {"train_ratio_to_map": 1.0, "predict_s_10k": 0.14},
                 "bbb": {"train_ratio_to_map": 1.9, "predict_s_10k": 4.1},
                 "mc_dropout": {"train_ratio_to_map": 1.1, "predict_s_10k": 4.6}}
    return s


def test_a_laplace_row_worse_than_its_map_network_is_a_failed_fit():
    s = _story()
    failed = R.failed_fits(s)
    assert set(failed) == {"laplace_ll_kron"} and failed["laplace_ll_kron"]["up"] == 4
    assert failed["laplace_ll_kron"]["diff"]["mean_diff"] == pytest.approx(0.0734 - 0.0608)
    assert R.failed_fits(_story(nll_fit=0.0600)) == {}  # better than MAP: a rival
    # mean above MAP's but the interval of fit − MAP contains zero: equal to MAP, not failed
    s_eq = _story(nll_fit=0.0609)
    assert s_eq["table"]["laplace_ll_kron"]["full"]["nll"]["mean"] > \
        s_eq["table"]["map"]["full"]["nll"]["mean"]
    assert R.failed_fits(s_eq) == {}
    assert R.nll_status({"ci": [-0.00004, 0.0001]}, 0.06083, 0.0608) == "equal"
    assert R.nll_status({"ci": [0.0001, 0.0003]}, 0.0610, 0.0608) == "failed"
    words = {(e["score"], e["rival"]): e["word"] for e in R.effects(s)}
    assert words[("test NLL", "laplace_ll_kron")] == R.FAILED_FIT  # the plan said "holds"
    assert words[("test NLL", "mc_dropout")] == "BBB worse"
    assert words[("OOD AUROC", "map")] == "BBB better"
    assert words[("OOD AUROC", "ivon")] == NR
    words = {(e["score"], e["rival"]): e["word"] for e in R.effects(_story(nll_fit=0.06))}
    assert words[("test NLL", "laplace_ll_kron")] == "BBB better"
    text = R.failed_fit_text(s)
    assert "Laplace (last layer) (full test sets): NLL 0.0734 against MAP's 0.0608" in text
    assert "worse on 4 of 4 seeds" in text
    assert R.failed_fit_text(_story(nll_fit=0.06)) == ""


def row_is(rows, rival, score):
    return next(r for r in rows if r[1] == rival and r[0].startswith(score))


def test_effects_are_bbb_minus_rival_with_intervals():
    s = _story()
    es = {(e["score"], e["rival"]): e for e in R.effects(s)}
    auroc = es[("OOD AUROC", "map")]  # the claim "map < bbb": a − b is MAP − BBB
    assert auroc["mean"] == pytest.approx(0.0376) and auroc["ci"] == pytest.approx([0.0136, 0.0615])
    header, rows = R.effect_rows(s)
    # BBB's AUROC against MAP is notebook 05's claim: its table, not repeated here
    assert not [r for r in rows if r[1] == "MAP" and r[0].startswith("OOD")]
    # the raw p beside the Holm p and its multiplier, so that the correction can be checked
    assert header[5:7] == ["p", "Holm p (× m)"]
    assert row_is(rows, "MAP", "test NLL")[3:7] == ["−0.0021", "[−0.0059, +0.0016]", "—", "0.24"]
    for c in s["families"]["test NLL"].values():  # with the raw p recorded: p and (× m)
        c["t_test"]["p"] = c["p_holm"] / 3
    rows = R.effect_rows(s)[1]
    e_map = next(e for e in R.effects(s) if e["rival"] == "map" and e["score"] == "test NLL")
    m = R._holm_rank(s, R._claim_of(s, e_map), 0.08)[0]
    assert row_is(rows, "MAP", "test NLL")[5:7] == ["0.08", f"0.24 (× {m})"]
    row = row_is(rows, "IVON", "OOD")
    assert row[3:5] == ["+0.006", "[−0.008, +0.020]"] and row[6] == "0.65"
    fit = [r for r in rows if r[-1] == R.FAILED_FIT]  # a failed fit: its raw p, no Holm p
    assert fit and all(r[5] != "—" and r[6] == r[7] == "—" for r in fit)
    text = R.effects_text(s)
    # each bound, and what it means against the largest decided difference on that score
    assert "- MAP, test NLL: rules out BBB being more than 0.0059 better or 0.0016 worse, so " \
           "BBB being 0.0052 worse, not 0.0052 better; resolvable: 0." in text  # 0.0052: BBB − MC dropout
    assert "(test NLL: 0.0052, BBB − MC dropout; OOD AUROC: 0.038, BBB − MAP)" in text
    assert "- IVON, OOD AUROC: rules out BBB being more than 0.020 better or 0.008 worse, so " \
           "0.038 either way; resolvable: 0." in text
    assert R._excludes({"digits": 3, "ci": [-0.05, 0.05], "lower_better": False}, 0.03) \
        .endswith("but not 0.030 either way")
    # the smallest resolvable difference: at the Holm bar the interval of that width excludes 0
    e = next(e for e in R.effects(s) if e["word"].startswith("not resolved") and e["ci"]
             and (e["family"], e["rival"]) not in R.IN_NOTEBOOK_05)
    need = R.needed_effect(s, e)
    hw = (e["ci"][1] - e["ci"][0]) / 2
    assert hw * (1 - 1e-9) <= need < 3 * hw  # a Holm bar at or below 0.05: at least the half-width
    assert f"resolvable: {need:.{e['digits']}f}" in text
    assert "- MC dropout" not in text  # resolved: no bullet (it is named as the yardstick)


def test_the_headline_answers_in_two_sentences():
    short = R.short_answer(_story())
    # plain sentences first: who beats BBB on what, the cost of the cheapest of them, whom BBB
    # beats; no verdict word or test term before Terms
    assert short.startswith("**The answer.** BBB is worth it on OOD AUROC only, at this budget: "
                            "MC dropout beats BBB on test NLL; MC dropout trains in 1.1× MAP's "
                            "time against BBB's 1.9×. BBB's only tested win over the planned rivals: in [notebook 05](05_uncertainty.ipynb)'s "
                            "tests, OOD AUROC over MAP (by 0.038). Against IVON, 4 seeds "
                            "resolve no difference on either score. The Laplace approximation, with laplace-torch's default prior, scores a "
                            "worse test NLL than the MAP network it wraps, so it gets no verdict.")
    # short (reader r19): three or four sentences before Terms, the recipe moved below them
    assert len(short.split()) < 120 and "notebook 01" not in short
    import re
    assert "Holm" not in short and "failed fit" not in short
    assert "[" not in re.sub(r"\[[^\]]+\]\([^)]*\)", "", short)  # links only, no interval
    # no term that Terms defines later: no flag word, no δ, no 'warm start'
    assert "threshold" not in short and "δ" not in short and "warm" not in short
    assert "No final run yet" in R.short_answer(None)
    assert "narrowly" not in short  # a size word for a Holm-p flag misled (reader r18)


def test_the_answer_lists_every_win_with_its_size_and_weak_evidence(monkeypatch):
    """The first screen names every decided win (notebook 05's), each with its size; how many
    decided comparisons, wins and losses alike, are close calls (the flag counted both ways);
    every rival no score separates from BBB (IVON); the refits' lead said to be the lead over
    MAP, not a separate win (reader r19)."""
    monkeypatch.setenv("BBB_RESULTS_DIR", str(ROOT / "results"))
    s, nb05, fair = R.load_summary(), R.load_nb05(), R.load_fair()
    if s is None or nb05 is None or not fair:
        pytest.skip("no final runs")
    short = R.short_answer(s, nb05, fair)
    e = next(e for e in R.effects(s) if e["rival"] == "map" and e["key"] == "auroc_entropy")
    assert f"OOD AUROC over MAP (by {e['mean']:.3f})" in short
    near = R.near_threshold(s, nb05)
    losses = [k for k in near if next(x for x in R.effects(s) if (x["family"], x["rival"]) == k)
              ["word"] == R.WORDS["reversed"]]
    assert losses  # a loss is flagged too (MC dropout on NLL, under other draws)
    k = len(near) + sum(c["near"] for c in R.nb05_ece(nb05))
    assert f" {k} of the " in short and "wins and losses together, are close calls" in short
    assert "only tested wins over the planned rivals" in short  # the refit's win: restated
    assert "Against IVON, 10 seeds resolve no difference on either score." in short
    assert "tuned on validation data" in short and "restates BBB − MAP" in short
    assert "its one decided comparison with BBB (Table 6.6: BBB better on OOD AUROC than the " \
           "last-layer fit, a close call)" in short  # Table 6.6's seventh decided verdict
    assert "the same OOD AUROC lead over" not in short  # not counted as a win of its own
    assert "all in" not in short and "narrowly" not in short


def test_the_method_states_the_predictive_samples(monkeypatch):
    """How many samples each sampling method's predictive averages, from the final records."""
    monkeypatch.setenv("BBB_RESULTS_DIR", str(ROOT / "results"))
    if R.load_summary() is None:
        pytest.skip("no final runs")
    text = R.samples_text()
    k = R._test_samples("bbb")
    assert k and f"MC dropout, BBB and IVON average {k} samples" in text
    assert "the Laplace fits use none" in text


def test_the_headline_in_detail():
    text = R.headline_text(_story())
    assert text.startswith("**The answer in detail** (4 paired seeds; ")
    assert "pilot" not in text  # the box says how the grids were placed
    assert "each number: BBB − rival [95 % interval]; verdicts as defined under Terms):" in text
    # one sentence per score, each with its own sign convention
    assert "On test NLL (lower is better), BBB is worse than MC dropout (+0.0052 [+0.0027, " \
           "+0.0078]) and not resolved at 4 seeds against MAP (−0.0021 [−0.0059, +0.0016])." \
        in text
    # one verdict word: "not resolved", with its interval, as in the tables
    assert "On OOD AUROC (higher is better; MAP: tested in [notebook 05](05_uncertainty.ipynb))" \
           ", BBB is better than MAP (+0.038 [+0.014, +0.061]) and not resolved at 4 seeds " \
           "against IVON (+0.006 [−0.008, +0.020])." in text
    assert "separated" not in text
    assert "Laplace: with δ by the marginal likelihood, the fit is a failed fit (no verdict; " \
           "section 4)." in text
    # what the plan's own tests say without the rule added after the test numbers, plainly
    assert "Without the failed-fit rule the plan's tests would " \
           "read: BBB better than last-layer Laplace on test NLL" in text
    assert "#the-failed-fits-plainly" in text
    # the failed fit's own intervals stay in Table 6.3, out of the answer
    assert "unjudged" not in text
    assert "holds" not in text and text.count(". ") <= 7
    text = R.headline_text(_story(nll_fit=0.06))
    assert "failed fit" not in text and "Laplace (last layer)" not in text
    assert "better than last-layer Laplace (−0.0147" in text
    assert "No final run yet" in R.headline_text(None)


def test_story_takeaways_and_figures(monkeypatch):
    import matplotlib
    matplotlib.use("Agg")
    s = _story()
    text = R.story_takeaways(s)
    # the verdict first, in words (the answer has the numbers), then the cost
    assert text.startswith("- **Verdict.** Is BBB worth it here? On OOD AUROC only, at this "
                           "budget: on test NLL, MC dropout beats BBB; on OOD AUROC, no rival "
                           "beats BBB, BBB beats MAP; intervals: Table 6.3.")
    assert text.count("failed fit") == 1  # the Laplace fits' lack of a verdict: the caveat
    assert text.index("**Verdict.**") < text.index("**Cost**") < text.index("**Caveats.**")
    # the intervals are said once, in the answer and Table 6.3: the takeaways point there
    assert "+0.0052" not in text and "intervals: Table 6.3" in text
    assert "MC dropout (1.1×) beats BBB with less training than BBB's 1.9×; to predict " \
           "10,000 images MC dropout takes 4.6 s against BBB's 4.1 s." in text
    assert "machine load" not in text  # said once, under Table 6.2 (reader r18)
    assert "machine load" in R.cost_note(s) or not s.get("cost")
    assert "an ensemble counts all its members" in text  # the measure, as in Table 6.2
    assert "Laplace is not yet compared" in text and "Caveats." in text
    assert "better than MAP" not in text  # the answer is not repeated
    assert "Laplace is not yet compared" not in R.story_takeaways(_story(nll_fit=0.06))
    for m in ("map", "mc_dropout", "ivon", "laplace_ll_kron"):
        for k in ("auroc_entropy", "ece"):
            s["table"][m]["full"][k] = s["table"][m]["full"]["nll"]
    fig = R.summary_figure(s)
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert "Laplace\nlast\nlayer\n(failed)" in labels
    fig = R.effects_figure(s)
    rows = [t.get_text() for ax in fig.axes for t in ax.get_yticklabels()]
    assert "BBB vs Laplace (last layer)" not in rows and "BBB vs MC dropout" in rows
    # notebook 05's AUROC claims are drawn too, marked as tested there
    assert "BBB vs MAP\n(tested in notebook 05)" in rows


def test_takeaways_point_to_the_answer_and_do_not_repeat_it(monkeypatch):
    monkeypatch.setattr(R, "load_v1", lambda: None)
    fam = _fam({"mc_dropout": "reversed", "map": NR}, {"mc_dropout": "reversed", "map": "holds"})
    s = _answered(fam, {})
    text = R.takeaways_text(s)
    assert text == ("- **The answer is version 3's** (section 7, below its claims table): with "
                    "equal search budgets and 10 paired seeds, other methods beat BBB on both "
                    "tested scores, test NLL and OOD AUROC. Version 1's answer (section 6) is "
                    "superseded.")
    fam = _fam({"mc_dropout": NR}, {"mc_dropout": "reversed"})
    text = R.takeaways_text(_answered(fam, {}))
    assert "other methods beat BBB on OOD AUROC, none on test NLL" in text
    text = R.takeaways_text(_answered(_fam({"map": "holds"}, {"map": NR}), {}))
    assert "no method beats BBB on either tested score" in text
    ps = _ps({"marglik": ("holds", NR), "gridsearch_val": (NR, "holds"),
              "map_weight_decay": (NR, NR)})
    text = R.takeaways_text(_answered(fam, {}), ps=ps)
    assert "the plan's test on NLL and AUROC gives other outcomes under other precisions" in text
    assert "holds only" not in text  # the check's outcomes stay in section 7
    ps = _ps({k: ("holds", NR) for k in ("marglik", "gridsearch_val", "map_weight_decay")})
    assert "prior precision" not in R.takeaways_text(_answered(fam, {}), ps=ps)
    assert "interim" in R.takeaways_text({"interim": True})
    assert "no final run" in R.takeaways_text(None)


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
    assert "method-seed pairs" in text and "2,000-image subset" in text
    text = R.laplace_note(v3)
    for m in F.ALL_LAYER:
        assert f"{t[m]['subset']['ece']['mean']:.3f}" in text
    text = R.laplace_takeaway(v3, v1)
    for m in F.ALL_LAYER:
        assert f"{100 * t[m]['subset']['test_error']['mean']:.2f} %" in text
    text = R.version1_text(v3)
    assert "what moved these numbers is not known" in text and "Searches. Version 1:" in text
    assert f"{rows['mc_dropout']['auroc_entropy']['mean']:.3f}" in text
    assert f"{t['mc_dropout']['full']['auroc_entropy']['mean']:.3f}" in text
    # version 3's answer is rendered once, after the claims table; section 6's question with
    # version 3's numbers; version 1's answer marked superseded
    text = R.answer_line(v3)
    assert text.count("Answer (version 3)") == 1 and ", and to " in text
    assert f"{v3['cost']['bbb']['train_ratio_to_map']:.1f}×" in text
    text = R.question_text(v3)
    assert f"{t['bbb']['full']['auroc_entropy']['mean']:.3f}" in text
    assert f"{t['bbb']['full']['ece']['mean']:.4f}" in text
    assert R.superseded_text(v1, v3).startswith("**Superseded by version 3.**")
    text = R.ivon_cost_text(v3, v1=v1)
    assert f"{v3['cost']['ivon']['train_ratio_to_map']:.1f}× as long as MAP" in text
    assert "\n" not in R.hardware_line() and R.hardware_text().startswith("**Hardware.**")
    ps = R.load_prior_check()
    if ps is not None:
        text = R.prior_check_text(ps, v3)
        assert all(x.startswith(("- ", "**")) for x in text.splitlines() if x)
        assert f"{ps['settings']['marglik']['mean']['nll']:.4f}" in text
    text = R.takeaways_text(v3, v1, ps)
    assert "Answer (version 3)" not in text and "holds only" not in text
    # the story: every Laplace row above its MAP network's NLL is a failed fit, with no verdict
    failed = R.failed_fits(v3)
    for m, x in failed.items():
        assert x["nll"] > x["map_nll"]
        assert all(e["word"] == R.FAILED_FIT for e in R.effects(v3) if e["rival"] == m)
    text = R.headline_text(v3)
    assert text.startswith("**The answer in detail**") and "holds" not in text
    assert R.short_answer(v3).startswith("**The answer.** ")
    for e in R.effects(v3):
        if e["word"] in R.WORDS.values():
            assert R._effect(e) in text  # every verdict with its interval
    text = R.story_takeaways(v3, ps)
    assert text.startswith("- **Verdict.** Is BBB worth it here? ")
    for e in R.effects(v3):  # every rival that beats BBB is named in the verdict
        if e["word"] == R.WORDS["reversed"]:
            assert R.SHORT[e["rival"]] in text.splitlines()[0]
    assert f"than BBB's {v3['cost']['bbb']['train_ratio_to_map']:.1f}×" in text
    if ps is not None:
        header, rows = R.prior_check_rows(ps, v3)
        for r, k in zip(rows, ps["settings"]):  # failed: the interval of fit − MAP above 0
            lo = float(r[3].split("[")[1].split(",")[0].replace("−", "-"))
            assert (r[-1] == R.FAILED_FIT) == (lo > 0)
            assert r[-1].startswith("indistinguishable from MAP") == (lo <= 0 <= float(
                r[3].split(", ")[1].rstrip("]").replace("−", "-")))
        # the plan's three Laplace rows stay failed fits: their intervals lie well above zero
        assert set(failed) == {m for m in F.LAPLACE if m in t}
        for m, x in failed.items():
            assert x["diff"]["ci"][0] > 0
    # version 1's readings: the seed spread defined where first used, every outside method named
    text = A.summary_text(v1)
    assert "issue 34" not in text and A.SPREAD_RULE in text
    for m in A.working(v1):
        assert f"{m['auroc_entropy']['mean']:.3f}" in text
    assert "no rotation experiment" in A.rotation_text(v1)
    json.dumps([text])  # plain text


# ---- section 4: the Laplace fits with a fair prior precision ----

def _fair(nll_ml, nll_grid, cap_seeds=(1, 2, 3), seeds=(0, 1, 2, 3)):
    """A fair-fit analysis (helpers.laplace_fair.analysis) of planted records: MAP's NLL 0.06,
    BBB's 0.05; every flavour's marginal-likelihood row at ``nll_ml``, its grid row at
    ``nll_grid`` (a small per-seed wobble), the grid at the cap on ``cap_seeds``."""
    from helpers import laplace_fair as P
    sc = lambda nll, au: {"test_error": 0.02, "nll": nll, "brier": 0.03, "ece": 0.01,  # noqa
                          "auroc_entropy": au, "auroc_mi": au}
    wob = [0.0, 0.0004, -0.0003, -0.0001]
    plan_recs, phase1, scores = {}, {}, {}
    for s in seeds:
        plan_recs[("map", s)] = {"full": sc(0.06, 0.88), "subset": sc(0.06, 0.88)}
        plan_recs[("bbb", s)] = {"full": sc(0.05, 0.92 + wob[s]),
                                 "subset": sc(0.05, 0.92 + wob[s]), "mc_repeats": None}
        phase1[s] = {"map_val_nll": 0.07, "flavours": {}}
        scores[s] = {"cpu_s": 5.0, "flavours": {}}
        for f in P.FLAVOURS:
            plan_recs[(f, s)] = {"full": sc(0.2, 0.9), "subset": sc(0.2, 0.9), "failed": None}
            scores[s]["flavours"][f] = {
                "marglik_layerwise": {"prior_precision": [10.0, 100.0],
                                      "full": sc(nll_ml + wob[s], 0.95),
                                      "subset": sc(nll_ml + wob[s], 0.95)},
                "val_grid": {"prior_precision": 1e5, "full": sc(nll_grid + wob[s], 0.88 + wob[s]),
                             "subset": sc(nll_grid + wob[s], 0.88 + wob[s])},
                "plan_v3_minus_record": {"subset": {"nll": 2e-6, "auroc_entropy": 0.0,
                                                    "auroc_mi": 1e-7}}}
            cap = s in cap_seeds
            phase1[s]["flavours"][f] = {
                "val_grid": {"chosen_log10": 12 if cap else 5, "interior": not cap,
                             "at_cap": cap, "curve": [[4, 0.08], [5, 0.0699], [12, 0.07]]},
                "marglik_layerwise": {"prior_precision": [10.0, 100.0], "val_nll": 0.09}}
    claims = {"test NLL": [f"bbb < {f} on nll" for f in ("map", *P.FLAVOURS)],
              "OOD AUROC (entropy)": [f"{f} < bbb on auroc_entropy"
                                      for f in ("map", *P.FLAVOURS)]}
    return P.analysis(scores, phase1, plan_recs, {"tests": {"families": claims, "alpha": 0.05}})


def _fair_summary(seeds=range(4)):
    """A plan analysis beside ``_fair``: BBB's and MAP's per-seed scores as ``_fair`` plants
    them, and the plan's claims (MAP and the three Laplace rows) with planted raw p values."""
    from helpers import laplace_fair as P
    wob = [0.0, 0.0004, -0.0003, -0.0001]
    seeds = list(seeds)
    col = lambda vals: {"seeds": seeds, "per_seed": vals,  # noqa: E731
                        "mean": sum(vals) / len(vals)}
    table = {"map": {on: {"nll": col([0.06] * 4), "auroc_entropy": col([0.88] * 4)}
                     for on in ("full", "subset")},
             "bbb": {on: {"nll": col([0.05] * 4),
                          "auroc_entropy": col([0.92 + w for w in wob])}
                     for on in ("full", "subset")}}
    fams = {"test NLL": {"bbb < map on nll": {"t_test": {"p": 0.001}}},
            "OOD AUROC (entropy)": {"map < bbb on auroc_entropy": {"t_test": {"p": 0.002}}}}
    for f in P.FLAVOURS:
        fams["test NLL"][f"bbb < {f} on nll"] = {"t_test": {"p": 0.5}}
        fams["OOD AUROC (entropy)"][f"{f} < bbb on auroc_entropy"] = {"t_test": {"p": 0.9}}
    return {"seeds": seeds, "table": table, "families": fams, "interim": False}


def test_fair_fit_table_and_reading_follow_the_outcomes():
    fair = _fair(nll_ml=0.07, nll_grid=0.06)
    header, rows = R.fair_rows(fair)
    assert header[4] == "fit − MAP, NLL [95 %]" and rows[0][3] == "0.0600"
    assert header[2] == "δ chosen over 4 seeds (marginal likelihood: per-tensor medians)"
    out = {(r[0], r[1]): r for r in rows[1:]}
    ml = out[(R.LABELS["laplace_kron"], R.FAIR_CHOICES["marglik_layerwise"])]
    grid = out[(R.LABELS["laplace_kron"], R.FAIR_CHOICES["val_grid"])]
    assert ml[-1] == R.FAILED_FIT
    assert ml[2] == "10^1 to 10^2 per tensor" and ml[4].startswith("+0.0100 [")
    assert grid[-1] == "indistinguishable from MAP"
    # the grid's split, not a median: 3 seeds at the cap, the fourth at 10^5
    assert grid[2] == "3 of 4 at the cap (10^12); the other 1: 10^5"
    # the tests: only rows that are not failed fits, each claim on the images the plan uses
    summary = _fair_summary()
    header, tests = R.fair_test_rows(fair, summary)
    assert header[2] == "tested on" and len(tests) == 3 * 2
    on = {(r[0].split(",")[0], r[1]): r for r in tests}
    ll = on[(R.LABELS["laplace_ll_kron"], "test NLL")]
    kr = on[(R.LABELS["laplace_kron"], "test NLL")]
    assert ll[2] == "full test sets" and ll[7] == "same as tested"
    assert kr[2] == "2,000 + 2,000 subset" and kr[7].startswith("−0.0100 [")
    assert kr[3].startswith("−0.0100 [")  # BBB − it on NLL, tested
    assert kr[6] == "BBB better" and ll[8].startswith("−0.0100")  # BBB − MAP beside it
    checked = 0
    for r in tests:  # Holm's multiplier: its p against the family's other raw p
        if r[4] == "—":  # a difference the same on every seed: no t-test
            continue
        checked += 1
        p, holm = float(r[4]), r[5]
        m = int(holm.split("× ")[1].rstrip(")"))
        assert float(holm.split(" ")[0]) == pytest.approx(min(1.0, m * p), rel=0.05)
    assert checked >= 3
    text = R.fair_tests_text(fair, summary)
    assert "*Images.*" in text and "restate BBB − MAP's, though their verdicts need not" in text
    assert "*Holm.*" not in text  # no AUROC p here (the same difference on every seed)
    from helpers import laplace_fair as P
    for k, f in enumerate(P.FLAVOURS):  # plant AUROC p values: 0.001 < 0.002 (MAP's) < ...
        t = fair["flavours"][f]["val_grid"]["tests"][P.CLAIMS[f][1]]
        t["t_test"] = {**t["t_test"], "p": [0.001, 0.01, 0.02][k]}
    text = R.fair_tests_text(fair, summary)
    assert "family of 4; the other 3 claims" in text
    assert "last-layer Laplace: p 0.0010, 0 smaller, × 4" in text
    assert "all-layer KFAC Laplace: p 0.0200, 1 smaller (MAP), × 3" in text
    text = R.fair_text(fair)
    assert "(4 seeds;" in text and "with it last-layer Laplace, all-layer diagonal Laplace " \
        "and all-layer KFAC Laplace are failed fits (test NLL 0.0700, 0.0700, 0.0700 against " \
        "MAP's 0.0600)" in text
    # the grid's split per fit (at the cap, and the range of the others), not a median
    assert "on 3 of 4 seeds (last-layer Laplace), 3 of 4 seeds (all-layer diagonal Laplace)" \
        in text and "the other seeds choose 10^5 (last-layer Laplace)" in text
    assert "median" not in text.split("*The validation grid")[1]
    assert "largest difference: NLL" not in text  # the rescoring check lives in docs/lab_log.md
    # the same last-layer δ in last-layer and all-layer KFAC Laplace, said and explained
    assert R.kfac_last_layer_match(fair) == 0.0 and "*Why two ranges are identical.*" in text
    kr = fair["flavours"]["laplace_kron"]["validation"]
    first = next(iter(kr))
    kr[first]["marglik_log10_per_tensor"] = [1.0, 1.5]
    assert R.kfac_last_layer_match(fair) == 0.5 and "identical" not in R.fair_text(fair)
    # effects repeat BBB − MAP's (why the verdicts still differ: below Table 6.6)
    assert "With δ tuned on validation NLL they stay close to MAP's network: BBB − them " \
           "repeats BBB − MAP (Table 6.6)." == R.fair_answer(fair)
    assert "compare as MAP does" not in R.fair_answer(fair)
    assert "still gives" not in R.fair_answer(fair)  # the plan's fits were per tensor already
    # the marginal likelihood below MAP, the grid never at the cap: other words
    fair = _fair(nll_ml=0.055, nll_grid=0.059, cap_seeds=())
    text = R.fair_text(fair)
    assert "no fit is a failed fit" in text and "on 0 of 4 seeds (last-layer Laplace)" in text
    rows = R.fair_rows(fair)[1]
    assert all(r[-1] == "better than MAP" for r in rows[1:])
    assert len(R.fair_test_rows(fair, _fair_summary())[1]) == 6 * 2  # every row tested
    assert "the fits are better than MAP on NLL" in R.fair_answer(fair)
    assert "close to MAP's network" not in R.fair_answer(fair)
    t = R.story_takeaways(_story(), fair=fair)
    assert "with the marginal likelihood's prior precision 0 of 3 fits fail" in t
    assert "no verdict of its own" not in t  # better than MAP: tested, not MAP in effect
    assert "refit" not in t and "not yet compared" not in t


def test_fair_fits_render_from_the_committed_results(monkeypatch):
    monkeypatch.setenv("BBB_RESULTS_DIR", str(ROOT / "results"))
    fair = R.load_fair()
    if fair is None:
        pytest.skip("no fair-fit analysis committed")
    header, rows = R.fair_rows(fair)
    assert len(rows) == 1 + 3 * 2
    for r in rows[1:]:  # the outcome word follows the interval of fit − MAP
        lo = float(r[4].split("[")[1].split(",")[0].replace("−", "-"))
        hi = float(r[4].split(", ")[1].rstrip("]").replace("−", "-"))
        word = R.FAILED_FIT if lo > 0 else "better than MAP" if hi < 0 else "indistinguishable from MAP"
        assert r[-1] == word
    # the tests: one row per claim on every refit that is not a failed fit, each on the images
    # the refits' analysis tested it on (its claims_on), the verdict by Holm p alone
    s = R.load_summary()
    header, tests = R.fair_test_rows(fair, s)
    kept = [(r[0], r[1]) for r in rows[1:] if r[-1] != R.FAILED_FIT]
    assert len(tests) == 2 * len(kept)
    by_label = {R.LABELS[f]: f for f in fair["flavours"]}
    for r in tests:
        f = by_label[r[0].split(", δ by")[0]]
        assert r[2] == R.TESTED_ON[fair["claims_on"][f]]
        assert (r[7] == "same as tested") == (fair["claims_on"][f] == "full")
        assert r[6].startswith("not resolved") == (float(r[5].split(" ")[0]) >= 0.05), r
        # a decided verdict whose Holm p lies in the band carries the flag, as in Table 6.3
        decided = not r[6].startswith("not resolved")
        assert ("near the threshold" in r[6]) == (decided and R.is_near(float(r[5].split(" ")[0])))
    # the AUROC rows on the full sets: BBB − MAP beside them is notebook 05's BBB vs MAP
    v2 = R.load_nb05()
    if v2 is not None:
        m05 = R.nb05_claims(v2)["map"]
        full = [r for r in tests if r[1] == "OOD AUROC" and r[2] == "full test sets"]
        assert full and all(r[8].startswith(f"{m05['mean']:+.3f}".replace("-", "−"))
                            for r in full)
    text = R.fair_tests_text(fair, s, v2)
    assert "*Holm.*" in text and "tested in [notebook 05]" in text
    text = R.fair_text(fair)
    assert f"MAP's test NLL {fair['map']['full']['nll']:.4f}" in text or \
        f"MAP's {fair['map']['full']['nll']:.4f}" in text
    rep = fair["reproduction_max_abs_difference"]
    assert max(v["nll"] for v in rep.values()) < 1e-4  # plan v3's δ reproduces its rows
    assert "not been run" not in text


def test_the_paper_numbers_beside_table_6_2_come_from_where_notebook_01_keeps_them():
    from helpers.classification import PAPER_TABLE1
    s = _v3({m: {"test_error": [0.0186] * 4} for m in ("map", "mc_dropout", "bbb")}, {})
    text = R.paper_text(s)
    assert f"BBB with the scale-mixture prior {100 * PAPER_TABLE1['bbb_mixture'][400]:.2f} %" in text
    assert f"dropout {100 * PAPER_TABLE1['dropout'][400]:.2f} %" in text
    assert "(ours after at most 60 epochs: Table 6.2)" in text and "1.86" not in text
    assert "(01_mnist_classification.ipynb)" in text and R.paper_text(None) == ""


def test_the_holm_families_are_named_with_the_notebook_that_tests_each_claim():
    text = R.families_text(_story())
    lines = [x for x in text.splitlines() if x.startswith("- ")]
    assert lines[0] == ("- *test NLL* (3 claims): BBB against MAP, MC dropout and last-layer "
                        "Laplace; all tested here (Table 6.3).")
    assert lines[1].startswith("- *OOD AUROC* (2 claims): BBB against MAP and IVON; MAP tested "
                               "in [notebook 05](05_uncertainty.ipynb)")
    assert lines[1].endswith("IVON here (Table 6.3).")
    s = _story()
    for c in s["families"]["test NLL"].values():
        c["family_size"] = 7  # the size Holm used, where the analysis records it
    assert "*test NLL* (7 claims)" in R.families_text(s)


def test_the_failed_fit_rule_says_whether_a_plan_declared_it(monkeypatch, tmp_path):
    from helpers import alternatives_plan as AP
    from helpers import laplace_fair as LF
    monkeypatch.setenv("BBB_RESULTS_DIR", str(tmp_path))
    main = tmp_path / AP.NB / AP.PLAN.name
    refit = LF.plan_path()
    main.parent.mkdir(parents=True)
    refit.parent.mkdir(parents=True)
    main.write_text(json.dumps({"tests": {"alpha": 0.05}}))
    refit.write_text(json.dumps({"failed_fit": "a Laplace row whose ..."}))
    s = _story()
    text = R.failed_fit_plain(s, fair={"seeds": [0]})
    assert "The rule is not in the [analysis plan]" in text and "added after" in text
    assert "declared it in [their own plan]" in text
    assert "last-layer Laplace scores worse than BBB on test NLL (BBB − it −0.0147 " \
           "[−0.0182, −0.0111])" in text
    main.write_text(json.dumps({"failed_fit": "declared"}))
    assert "The rule is part of the [analysis plan]" in R.failed_fit_plain(s, fair=None)
    assert R.failed_fit_plain(_story(nll_fit=0.06)) == ""  # no failed fit, nothing to say
    # the committed plans: the analysis plan lacks the rule, the refits' plan has it
    monkeypatch.setenv("BBB_RESULTS_DIR", str(ROOT / "results"))
    if R.load_summary() is not None and R.load_fair() is not None:
        text = R.failed_fit_plain(R.load_summary(), R.load_fair())
        assert "The rule is not in the" in text and "declared it in [their own plan]" in text


def test_table_6_1_names_its_settings_in_words_and_defines_eligible():
    header, rows = R.search_rows()
    assert "choice*: learning rate, own setting, epochs" in header
    assert not any("_" in cell for r in rows for cell in r)  # no code names
    assert R.search_note().startswith("\\* *Eligible*: a trial that ran all 60 epochs")


def test_the_prior_figure_marks_the_cap_count_and_labels_below_zero():
    import matplotlib
    matplotlib.use("Agg")
    fair = _fair(nll_ml=0.07, nll_grid=0.06)
    for f in fair["flavours"].values():
        for v in f["validation"].values():
            v["marglik_log10_per_tensor"] = v.get("marglik_log10_per_tensor") or [1.0, 2.0]
            v["marglik_minus_map"] = v.get("marglik_minus_map", 0.02)
            v["curve"] = [[4, 0.01], [5, -0.0002], [12, 0.0]]
    fig = R.fair_figure(fair)
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert texts.count("n = 3\nat the cap") == 3  # cap_seeds (1, 2, 3), every flavour
    ticks = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert ticks[:3] == ["−0.001", "−0.0001", "0"], ticks  # below zero: a decade apart
    assert fig.axes[0].get_ylim()[0] == -0.001  # the floor: the decade past the lowest value
    for f in fair["flavours"].values():
        for v in f["validation"].values():
            v["curve"] = [[4, 0.01], [5, -0.0003], [12, 0.0]]
    ticks = [t.get_text() for t in R.fair_figure(fair).axes[0].get_yticklabels()]
    assert ticks[:3] == ["−0.001", "−0.0001", "0"], ticks  # the linear band's edge labelled
    for f in fair["flavours"].values():
        for v in f["validation"].values():
            v["curve"] = [[4, 0.01], [5, -0.00005], [12, 0.0]]
    ticks = [t.get_text() for t in R.fair_figure(fair).axes[0].get_yticklabels()]
    assert ticks[:2] == ["−0.0001", "0"], ticks  # within the linear band: its edge alone
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "marginal likelihood: the seeds' median" in labels


def test_the_prior_figure_draws_the_marginal_likelihood_at_its_true_values():
    seeds = [{"marglik_minus_map": y, "marglik_log10_per_tensor": t}
             for y, t in [(0.01, [1.0, 2.0]), (0.03, [0.5, 2.5]), (0.02, [1.0, 3.0])]]
    m = R._marglik_summary(seeds)
    assert (m["y"], m["y_lo"], m["y_hi"]) == (0.02, 0.01, 0.03)  # no offset: the stored values
    assert (m["x"], m["x_lo"], m["x_hi"]) == (1.5, 0.5, 3.0)


def test_notebook_06_stays_under_5000_words(tmp_path):
    import sys
    sys.path.insert(0, str(ROOT / "tests"))
    from test_rendered_01_r10 import rendered_words
    n = rendered_words(ROOT / "notebooks" / "06_alternatives.ipynb")
    assert 1000 < n <= 5000, n  # issue 52: each notebook at most 5,000 rendered words


def test_the_details_page_is_current_and_the_notebook_links_it(monkeypatch, tmp_path):
    """docs/06_details.md holds what left the notebook (checks, the subset's table, the refits
    in full), rendered from the committed results: regenerated, it equals the committed page;
    each anchor the notebook links to exists on it."""
    import re
    monkeypatch.setenv("BBB_RESULTS_DIR", str(ROOT / "results"))
    s, fair, v2 = R.load_summary(), R.load_fair(), R.load_nb05()
    if s is None:
        pytest.skip("no committed analysis of notebook 06")
    page = (ROOT / R.DETAILS).read_text()
    assert page == R.details_text(s, fair, v2), \
        "docs/06_details.md is stale: python -m helpers.alternatives_report --write"
    assert "](05_uncertainty.ipynb)" not in page and "](../notebooks/05_uncertainty.ipynb)" in page
    assert R.main(["--check"]) == 0
    cells = json.loads((ROOT / "notebooks" / "06_alternatives.ipynb").read_text())["cells"]
    nb = "\n".join(["".join(c["source"]) for c in cells] + [
        "".join(o.get("data", {}).get("text/markdown", [])) for c in cells
        for o in c.get("outputs", [])])
    anchors = {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-")
               for h in re.findall(r"^## (.+)$", page, re.M)}
    linked = set(re.findall(r"06_details\.md#([\w\-]+)", nb))
    assert linked and linked <= anchors, linked - anchors
    # the moved material is on the page, and the notebook keeps only its brief forms
    # the subset's table lives in the details; the notebook names it only as a link there
    assert "**Table 6.4. The plan's subset**" in page and "**Table 6.4." not in nb
    assert nb.count("Table 6.4") == nb.count("[Table 6.4](../docs/06_details.md#the-plans-subset)")
    assert R.robustness_text(s, skip=set(R.failed_fits(s)), nb05=v2) in page
    brief = R.robustness_text(s, skip=set(R.failed_fits(s)), nb05=v2, brief=True)
    assert brief in nb and "Near the threshold (as defined" not in nb
    if fair is not None:
        assert "*Why two ranges are identical.*" in page and "ranges are identical" not in nb
        assert R.fair_text(fair, brief=True) in nb
        assert R.fair_text(fair, brief=True).startswith("**What the refits show.** With the ")
        # the brief forms keep what no table shows: each fit's AUROC − MAP's with its interval
        au = fair["flavours"]["laplace_kron"]["val_grid"]["fit_minus_map_auroc"]
        assert R._small_ci(*R._diff(au), 3) in R.fair_text(fair, brief=True)
        tests = R.fair_tests_text(fair, s, v2, brief=True)
        assert "restate BBB − MAP on OOD AUROC" in tests and "06_details.md#why-near" in tests
        # Table 6.6: the tested columns in the notebook, all nine on the page
        assert "## Table 6.6 in full" in page and "06_details.md#table-66-in-full" in nb
        for r in R.fair_test_rows(fair, s)[1]:
            assert r[7] in page and r[3] in nb
        # the answer names no refit verdict of its own: it sends the reader to Table 6.6
        assert "Table 6.6" in R.fair_answer(fair)
        assert not any(w in R.fair_answer(fair) for w in R.WORDS.values())
        assert "*Holm.*" not in tests  # the multipliers, row by row: the details page only
    # a stale page fails the check
    monkeypatch.setattr(R, "DETAILS", str((tmp_path / "stale.md").relative_to(tmp_path)))
    from helpers import utils
    monkeypatch.setattr(utils, "PROJECT_ROOT", tmp_path)
    (tmp_path / "stale.md").write_text(page + "x")
    assert R.main(["--check"]) == 1


def test_families_text_brief_counts_each_family():
    s = _story()
    text = R.families_text(s, brief=True)
    assert text.startswith("**The Holm families.** One per score, ")
    for family, claims in s["families"].items():
        assert f"{R.SCORE_OF.get(family, (None, family))[1]} (" in text
    assert R.families_text(None, brief=True) == ""


def test_the_plans_verdicts_without_the_failed_fit_rule_are_said_plainly(monkeypatch):
    """Reader r17: what the plan's own tests say against the failed fits, both directions,
    rendered from the committed results (the plan's Holm p and verdicts), in the answer, below
    the failed fits and on the details page; the near-threshold flag of a row whose Holm p lies
    outside the band says which draw puts it there; the plan's one last-layer δ is stated."""
    monkeypatch.setenv("BBB_RESULTS_DIR", str(ROOT / "results"))
    s, fair = R.load_summary(), R.load_fair()
    if s is None:
        pytest.skip("no final runs")
    failed = R.failed_fits(s)
    es = [e for e in R.effects(s) if e["rival"] in failed]
    text = R.without_rule(s)
    for e in es:
        if e["verdict"] == "reversed":  # a loss for BBB the rule withholds: its numbers said
            assert f"BBB worse than {R.SHORT[e['rival']]} ({R._effect(e)}, Holm p " \
                f"{e['p_holm']:.2g})" in text
    if all(e["verdict"] == "holds" for e in es if e["key"] == "nll") and len(failed) > 1:
        assert f"BBB better than all {len(failed)} (Holm p " in text
    # below the failed fits a pointer to the answer's account, not a second copy (reader r18);
    # the numbers (Holm p) on the details page
    assert text not in R.failed_fit_text(s) and "#the-failed-fits-plainly" in text
    assert "the answer in detail ([details](../docs/06_details.md#the-failed-fits-plainly))" \
        in R.failed_fit_text(s)
    assert text.split(" ([details]")[0] + "." in R.details_text(s, fair, R.load_nb05())
    assert R.without_rule(s, numbers=False) in R.headline_text(s, R.load_nb05())
    plain = R.failed_fit_plain(s, fair)
    assert ("On OOD AUROC, by the plan's own test," in plain) == any(
        e["verdict"] in ("holds", "reversed") for e in es if e["key"] == "auroc_entropy")
    near = R.near_threshold(s)
    for row in R.effect_rows(s)[1]:
        if "under another draw" in row[-1]:
            key = next(k for k in near if R.SHORT[k[1]] in (row[1], "the " + row[1]))
            assert "but up to" in near[key] and row[-1].split(": ")[1].split(" ")[0] in near[key]
    plan = R.plan_delta_log10()
    if plan is not None and fair is not None:
        assert f"the plan's one δ (10^{plan:.2f}, median over the seeds)" in \
            R.fair_text(fair, brief=True)
    assert R.without_rule({"families": {}, "table": {}}) == ""


def test_notebook_06_text_carries_no_history_words():
    """How we got there lives in docs/: the committed notebook's prose and rendered outputs
    (link targets included) name no plan version, commit, referee or issue number."""
    import re
    nb = json.loads((ROOT / "notebooks" / "06_alternatives.ipynb").read_text())
    texts = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]
    texts += ["".join(o.get("data", {}).get("text/markdown", "")) + "".join(o.get("text", ""))
              for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])]
    words = re.compile(r"version \d|plan[-_ ]v\d|\bcommit|referee|issue \d", re.I)
    hits = [m.group(0) for t in texts for m in words.finditer(t)]
    assert not hits, f"history words in notebook 06: {hits}"


def test_notebook_05s_claims_which_bbb_and_the_sigma_placeholder(monkeypatch, tmp_path):
    """Table 6.3 carries notebook 05's three AUROC claims read from notebook 05's summary, with
    its near-threshold flag; the answer marks near-threshold verdicts; the line saying which BBB
    ran reads the plan and the records; the σ line stays empty until its check exists."""
    monkeypatch.setenv("BBB_RESULTS_DIR", str(ROOT / "results"))
    s, v2 = R.load_summary(), R.load_nb05()
    if s is None or v2 is None:
        pytest.skip("no committed analysis of notebooks 05 and 06")
    theirs = R.nb05_claims(v2)
    assert set(theirs) == {"map", "mc_dropout", "ensemble"}
    header, rows = R.effect_rows(s, v2)
    marked = [r for r in rows if "tested in notebook 05" in r[-1]]
    assert len(marked) == 3 and len(rows) == len(R.effect_rows(s)[1]) + 3
    for r in marked:
        rival = next(k for k, v in R.LABELS.items() if v == r[1])
        assert r[6].startswith(f"{theirs[rival]['p_holm']:.2g} (× ")
        assert ("near the threshold" in r[-1]) == theirs[rival]["near"]
    near = R.near_threshold(s, v2)
    for r in rows:  # the table flags what the answer and the figure flag (one rule)
        rival = next(k for k, v in R.LABELS.items() if v == r[1])
        fam = next(f for f, (_, sc, _d) in R.SCORE_OF.items() if sc == r[0])
        if "tested in notebook 05" not in r[-1]:
            assert ("near the threshold" in r[-1]) == ((fam, rival) in near), r
    unresolved05 = [k for k, c in theirs.items() if c["word"].startswith("not resolved")]
    for k in unresolved05:  # notebook 05's unresolved intervals are read below the table too
        their = {"digits": 3, "ci": theirs[k]["ci"], "lower_better": False}  # notebook 05's
        big = max(abs(c["mean"]) for c in theirs.values() if c["word"] in R.WORDS.values())
        assert f"{R.SHORT[k][0].upper() + R.SHORT[k][1:]}, OOD AUROC: " \
            f"{R._excludes(their, big)}; resolvable: " in R.effects_text(s, v2)
        from helpers import ood_plan as O  # notebook 05's smallest resolvable difference, one number
        x = next(x for x in O.effects(v2) if x["rival"] == k and x["metric"] == "auroc_entropy")
        assert f"resolvable: {O.needed_difference(v2, x)[0]:.3f}." in R.effects_text(s, v2)
    text = R.headline_text(s, v2)
    ece = R.nb05_ece(v2)  # notebook 05's ECE claims: the answer's ECE bullet, its flags
    assert text.count("near the threshold") == len(near) + sum(c["near"] for c in ece)
    for key, words in near.items():  # the test's Holm p before the flag, as in Terms
        assert words.startswith("Holm p ") and words.endswith(": near the threshold")
    if ece:
        wins = [c for c in ece if c["word"] == R.WORDS["holds"]]
        assert "On ECE (lower is better; tested in [notebook 05](05_uncertainty.ipynb)), BBB " \
            "has a lower 15-bin ECE than" in text and "better calibrated" not in text
        assert "*ECE: tested in [notebook 05](05_uncertainty.ipynb)*" in R.not_tested_text(v2)
        assert "shown, not tested" not in R.not_tested_text(v2).split("*Cost")[0]
        for c in wins:
            assert f"{R._fmt(c['mean'], 4)} [{R._fmt(c['ci'][0], 4)}" in R.ece_text(v2)
        t = R.story_takeaways(s, fair=R.load_fair(), nb05=v2)
        assert "percentage points" not in t  # ECE in Table 6.2's units
        # the intervals are said once, in the answer in detail; the takeaway points there
        assert "intervals: the answer)" in t and "better calibrated" not in t
        for c in wins:
            assert f"{R._fmt(c['mean'], 4)} [{R._fmt(c['ci'][0], 4)}, " \
                f"{R._fmt(c['ci'][1], 4)}]" not in t and R.SHORT[c["rival"]] in t
    assert R.headline_text(s).count("near the threshold") == len(R.near_threshold(s))
    # which BBB: the plan's prior and samples, the records' test samples and notebook 01's error
    plan = json.loads((ROOT / "results" / "06_alternatives" / "plan_v3.json").read_text())
    base = plan["searches"]["bbb"]["base"]
    line = R.bbb_run_text(s)
    assert f"π = {base['pi']:g}" in line
    # the search's predictive samples: in the details, beside why validation NLL is not test NLL
    assert f"average {plan['budget']['eval_samples']} predictive samples there" \
        in R.search_vs_test_text(s)
    # every rival short of notebook 01 too (its plain and dropout rows), said with the numbers
    for m, (here, there) in R._nb01_rivals(s).items():
        assert f"{R.LABELS[m]} {here:.2f} % against " in line  # named as notebook 01 names it
        assert f"{'plain' if m == 'map' else 'dropout'} network's {there:.2f} %" in line
    assert f"{100 * s['table']['bbb']['full']['test_error']['mean']:.2f} %" in line
    nb01 = R._nb01_bbb()
    if nb01:
        assert f"{100 * nb01['mean']:.2f} % for [notebook 01]" in line
    assert "edges of its grid (initial ρ and epochs)" in line
    assert "not measured" in R.search_vs_test_text(s)
    # the σ line: nothing until results/06_alternatives/v3/bbb_sigma_check.json exists
    monkeypatch.setenv("BBB_RESULTS_DIR", str(tmp_path))
    assert R.sigma_check_text() == ""
    path = tmp_path / "06_alternatives" / R.SIGMA_CHECK
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"text": "σ moved."}))
    assert R.sigma_check_text().endswith("σ moved.")
    path.write_text(json.dumps({"other": 1}))
    assert "bbb_sigma_check.json" in R.sigma_check_text()
    s2 = {**s, "interim": True}
    assert R.scores_title(s2).endswith("**Table 6.2. Full test sets** (MNIST and Fashion-MNIST).")
    assert R.scores_title(s2) != R.scores_title(s)
