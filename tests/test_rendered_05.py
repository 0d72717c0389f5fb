"""Notebook 05's readings, rendered from its records (helpers.uncertainty): planted records come
out as their numbers, and each reading's wording (orderings, "every method" / "every method but",
under- or over-confident, at chance or not) follows the numbers, so that a different outcome
gives a different sentence. The last tests run every reading on the committed results."""
import json
import statistics
from pathlib import Path

import pytest
import torch

from helpers import uncertainty as U

ROOT = Path(__file__).resolve().parent.parent
KINDS = U.KINDS


def _m(vals):
    return {"per_seed": list(vals), "mean": statistics.fmean(vals),
            "sd": statistics.stdev(vals) if len(vals) > 1 else None}


def _summary(auroc, mi=None, ece=None, err=None, data="MNIST"):
    """{(data, kind): summary entry} from {kind: per-seed AUROCs} (and ECE, error, MI)."""
    out = {}
    for k, a in auroc.items():
        out[(data, k)] = {"seeds": list(range(len(a))), "auroc_entropy": _m(a),
                          "auroc_mi": None if k == "deterministic" or mi is None else _m(mi[k]),
                          "ece": _m((ece or {}).get(k, [0.005] * len(a))),
                          "test_error": _m((err or {}).get(k, [0.02] * len(a)))}
    return out


def _sweep(epochs, cap=50):
    return {"config": {"max_epochs": cap}, "metrics": {"chosen": {"epochs": epochs}}}


# ---- section 2: the searches ----

def _search(epochs, val, warm=(), chosen_from=None):
    trials = [{"config": {"init_from": "sgd"}, "epochs_run": e} for e in warm]
    trials.append({"config": {"init_from": None}, "epochs_run": epochs})
    return {"config": {"max_epochs": 50, "scheduler": {"grace_period": 5}},
            "metrics": {"chosen": {"epochs": epochs, "val": val,
                                   "config": {"init_from": chosen_from}}, "trials": trials}}


def test_search_words_define_rungs_and_say_where_the_choice_starts():
    words = U.search_words({"deterministic_mnist": _search(10, 0.07),
                            "bbb_mnist": _search(40, 0.05, warm=(5, 5, 50))})
    assert words.startswith("**What the searches chose** (scored by validation NLL, at most 50 "
                            "epochs per trial;")
    assert "- On MNIST: the single network 10, BBB 40 epochs (lowest validation NLL: BBB)." \
        in words
    assert "BBB's search also tried *warm starts*" in words
    assert "Of these, ASHA stopped at its first rung 2 of 3" in words
    assert "*rungs*" not in words  # section 2 defines the rungs; not again here
    assert "first rung 2 of 3 on MNIST (1 ran all 50 epochs)" in words
    assert "BBB's chosen settings start from random weights." in words
    # the chosen BBB trial is a warm start: the words follow
    words = U.search_words({"deterministic_mnist": _search(10, 0.04),
                            "bbb_mnist": _search(40, 0.05, warm=(5, 5), chosen_from="sgd")})
    assert "BBB's chosen settings start warm on MNIST." in words
    assert "(lowest validation NLL: the single network)" in words
    assert "start from random weights" not in words
    # no warm start at all: no word on rungs
    words = U.search_words({"deterministic_mnist": _search(10, 0.04)})
    assert "rung" not in words and "warm" not in words


# ---- section 3: the version-1 tables ----

def test_ood_caption_labels_the_table():
    assert U.ood_caption(2, "MNIST", (0, 1, 2)) == (
        "**Table 2** (version 1). Trained on MNIST, shown Fashion-MNIST; seeds 0, 1, 2. Mean ± "
        "sd over seeds, per-seed values in brackets.")
    assert U.ood_caption(3, "FashionMNIST", (0,)).endswith("shown MNIST; seed 0. One seed, so "
                                                           "no sd.")


def test_ood_text_names_each_leader_once():
    au = {"deterministic": (0.77, 0.78), "mc_dropout": (0.86, 0.88), "bbb": (0.93, 0.94),
          "ensemble": (0.80, 0.81)}
    ece = {"deterministic": (0.005, 0.005), "mc_dropout": (0.004, 0.004),
           "bbb": (0.009, 0.0096), "ensemble": (0.003, 0.003)}
    summary = _summary(au, ece=ece)
    fashion = {k: {"seeds": [0], "auroc_entropy": _m([a]), "ece": _m([e]),
                   "test_error": _m([0.1])}
               for k, a, e in (("deterministic", 0.71, 0.03), ("mc_dropout", 0.82, 0.007),
                               ("bbb", 0.84, 0.006), ("ensemble", 0.79, 0.015))}
    summary.update({("FashionMNIST", k): v for k, v in fashion.items()})
    text = U.ood_text(summary)
    assert "(version 1: descriptive, no declared test; 2 seeds trained on MNIST)" in text
    assert "- Trained on MNIST, BBB has the highest AUROC of the entropy on Fashion-MNIST " \
        "(0.935 ± 0.007); the next is MC dropout (0.870 ± 0.014). BBB is ahead of MC dropout " \
        "on every seed, by 0.06–0.07." in text
    assert "the deep ensemble (0.805" not in text  # the table lists the rest, not the prose
    # the disclosure sits beside the AUROC reading, with its link
    assert "This is not a clean held-out test of BBB: its recipe was first picked on this test " \
        "AUROC, and its search keeps arms from then ([docs/choices.md](../docs/choices.md), " \
        "entry 8)." in text
    assert "- BBB's mean ECE (0.0093) is the highest of the four; the deep ensemble's (0.0030) " \
        "is the lowest." in text
    assert "1 seed, so no ordering is established), BBB has both the highest AUROC (0.840) and " \
        "the lowest ECE (0.0060)." in text
    assert "notebook 06" not in text
    # another method has the lowest ECE trained on Fashion-MNIST; BBB behind MC dropout on MNIST
    summary[("FashionMNIST", "ensemble")]["ece"] = _m([0.001])
    summary[("MNIST", "mc_dropout")]["auroc_entropy"] = _m([0.95, 0.97])
    text = U.ood_text(summary)
    assert "BBB has the highest AUROC (0.840) and the deep ensemble the lowest ECE (0.0010)" in text
    assert "MC dropout has the highest AUROC of the entropy on Fashion-MNIST (0.960 ± 0.014); " \
        "the next is BBB (0.935 ± 0.007)." in text
    assert "BBB is behind MC dropout on every seed, by 0.02–0.03." in text
    assert "both" not in text


def test_ood_text_counts_the_seeds_behind_the_lowest_error():
    au = {"deterministic": (0.77, 0.78, 0.79), "mc_dropout": (0.86, 0.88, 0.87),
          "bbb": (0.93, 0.94, 0.95), "ensemble": (0.80, 0.81, 0.82)}
    err = {"deterministic": (0.0225, 0.0205, 0.0206), "mc_dropout": (0.0167, 0.0148, 0.0141),
           "bbb": (0.0162, 0.0174, 0.0164), "ensemble": (0.0193, 0.0178, 0.0182)}
    text = U.ood_text(_summary(au, err=err))
    assert "- MC dropout has the lowest test error (1.52 ± 0.13 % against BBB's 1.67 ± 0.06 %), " \
        "below BBB's on 2 of the 3 seeds." in text
    err["mc_dropout"] = (0.0150, 0.0148, 0.0141)  # below on every seed
    text = U.ood_text(_summary(au, err=err))
    assert "below BBB's on every seed." in text and "2 of the 3" not in text
    err["bbb"] = (0.0100, 0.0101, 0.0102)  # BBB lowest: no comparison with itself
    text = U.ood_text(_summary(au, err=err))
    assert "- BBB has the lowest test error (1.01 ± 0.01 %)." in text and "below" not in text


# ---- section 4: the entropy histograms ----

N_BINS = U.ENTROPY_BINS[2]


def _hist(first, high, total=1000):
    """A histogram with ``first`` images in bin 0, ``high`` from bin 20 (above 1.15 nats)
    and the rest in bin 5."""
    h = [0] * N_BINS
    h[0], h[20], h[5] = first, high, total - first - high
    return h


def _rel(bins):
    """Reliability record of 15 bins from {bin index: (accuracy, confidence, count)}."""
    rel = {"centres": [(i + 0.5) / 15 for i in range(15)], "accuracy": [None] * 15,
           "confidence": [None] * 15, "count": [0] * 15}
    for i, (a, c, k) in bins.items():
        rel["accuracy"][i], rel["confidence"][i], rel["count"][i] = a, c, k
    return rel


def _row(data, kind, seed, first_in=900, first_out=300, high_out=100, auroc=0.8, ece=0.005,
         err=0.02, rel=None):
    return {"data": data, "kind": kind, "seed": seed, "ood": U.OTHER[data],
            "entropy_hist_in": _hist(first_in, 0), "entropy_hist_out": _hist(first_out, high_out),
            "auroc_entropy": auroc, "ece": ece, "test_error": err,
            "reliability": rel or _rel({14: (0.99, 0.99, 950), 8: (0.6, 0.58, 50)})}


def _entropy_rows(fashion_ensemble_auroc):
    out0 = {"deterministic": 389, "mc_dropout": 220, "bbb": 85, "ensemble": 303}
    high = {"deterministic": 60, "mc_dropout": 360, "bbb": 235, "ensemble": 190}
    first_in = {"deterministic": 866, "mc_dropout": 915, "bbb": 797, "ensemble": 851}
    au = {"deterministic": (0.763, 0.791), "mc_dropout": (0.887, 0.866), "bbb": (0.927, 0.929),
          "ensemble": (0.786, 0.811)}
    rows = [_row("MNIST", k, s, first_in[k], out0[k], high[k], au[k][s])
            for k in KINDS for s in (0, 1)]
    fau = {"deterministic": 0.714, "mc_dropout": 0.818, "bbb": 0.839,
           "ensemble": fashion_ensemble_auroc}
    rows += [_row("FashionMNIST", k, 0, first_in[k] - 300, 100, 300, fau[k]) for k in KINDS]
    return rows


def test_entropy_text_reads_the_histograms_and_compares_the_training_sets():
    text = U.entropy_text(_entropy_rows(0.794), seed=0)
    assert text.startswith("**What the histograms show** (seed 0; counts stored in ood.json):")
    assert "- Trained on MNIST, every method is almost certain on most in-domain images: 79.7 % " \
        "(BBB) to 91.5 % (MC dropout) of them fall in the first bin" in text
    assert ("holds 38.9 % for the deterministic network, 30.3 % for the deep ensemble, 22.0 % "
            "for MC dropout and 8.5 % for BBB") in text
    assert "the deterministic network classifies the most of them as some digit" in text
    assert "BBB the fewest" in text
    assert "lie 36.0 % of the Fashion-MNIST images for MC dropout, 23.5 % for BBB, 19.0 % for " \
        "the deep ensemble and 6.0 % for the deterministic network." in text
    assert "- Trained on Fashion-MNIST (1 seed), the in-domain histograms are wider for every " \
        "method: 49.7 % to 61.5 % of the in-domain images fall in the first bin, against " \
        "79.7 % to 91.5 % trained on MNIST." in text
    assert "AUROC" not in text  # the two out-of-distribution tasks are not compared


def test_entropy_text_follows_a_different_ordering():
    rows = [r for r in _entropy_rows(0.7) if r["data"] == "MNIST"]
    for r in rows:  # BBB now keeps the most unfamiliar images at entropy near 0
        if r["kind"] == "bbb":
            r["entropy_hist_out"] = _hist(700, 10)
            r["entropy_hist_in"] = _hist(300, 0)
    text = U.entropy_text(rows, seed=0)
    assert "BBB classifies the most of them" in text and "MC dropout the fewest" in text
    assert "every method but BBB is almost certain on most in-domain images" in text
    assert "Trained on Fashion-MNIST" not in text  # one training set: no comparison
    # the Fashion-MNIST-trained histograms are narrower for BBB: "every method but"
    rows = _entropy_rows(0.7)
    for r in rows:
        if (r["data"], r["kind"]) == ("FashionMNIST", "bbb"):
            r["entropy_hist_in"] = _hist(990, 0)
    assert "wider for every method but BBB" in U.entropy_text(rows, seed=0)


def test_entropy_takeaway_names_the_extremes():
    text = U.entropy_takeaway(_entropy_rows(0.7), seed=0)
    assert "BBB is near-certain about the fewest images (8.5 %) and the deterministic network " \
        "about the most (38.9 %)" in text and "not a test" in text
    rows = _entropy_rows(0.7)
    for r in rows:
        if r["kind"] == "mc_dropout" and r["data"] == "MNIST":
            r["entropy_hist_out"] = _hist(500, 10)
    text = U.entropy_takeaway(rows, seed=0)
    assert "the deterministic network about the most" not in text
    assert "MC dropout about the most (50.0 %)" in text


# ---- section 5: BBB's samples on single images ----

def _examples(spread):
    """20 samples of 3 in-domain images that agree, and 3 out-of-distribution images whose
    samples split between classes 2 and 5 when ``spread`` (else all pick class 3)."""
    S = 20
    agree = torch.zeros(S, 3, 10)
    agree[:, 0, 9], agree[:, 1, 2], agree[:, 2, 1] = 0.97, 0.99, 1.0
    agree[:10, 0, 9] = 0.95
    out = torch.zeros(S, 3, 10)
    out[:, :, 3] = 0.6
    out[:5, 2, 3] = 0.45
    if spread:
        out[:10, 0, 3], out[:10, 0, 2] = 0.1, 0.9
        out[10:, 1, 3], out[10:, 1, 5] = 0.05, 0.95
    return {"data": "FashionMNIST", "kind": "bbb",
            "examples": {"in_index": [0, 1, 2], "out_index": [0, 1, 2],
                         "in_probs": agree.tolist(), "out_probs": out.tolist()}}


def test_examples_text_says_whether_the_samples_agree():
    text = U.examples_text(_examples(True), ["ankle boot", "pullover", "trouser"],
                           ["7", "2", "1"], "Fashion-MNIST", "MNIST")
    assert text.startswith("**What the samples show** (the first 3 test images of each set, not "
                           "picked by hand; 20 weight samples per image):")
    assert ("- On the Fashion-MNIST images (in domain), every weight sample picks the same class "
            "on every image:") in text
    assert '  - the ankle boot: all 20 samples pick "ankle boot"; single samples give it ' \
        "probability 0.95 to 0.97." in text
    assert '  - the trouser: all 20 samples pick "trouser"; each sample gives it probability ' \
        "1.00." in text
    assert "the samples disagree on 2 of the 3 images:" in text
    assert '  - the 7: the samples\' top choices span 2 classes. Their mean puts "pullover" ' \
        "first; single samples give it probability 0.00 to 0.90." in text
    assert '  - the 1: all 20 samples pick "dress"; single samples give it probability 0.45 to ' \
        "0.60." in text
    assert "((" not in text and "class 9" not in text  # no brackets in brackets
    text = U.examples_text(_examples(False), ["a", "b", "c"], ["7", "2", "1"], "Fashion-MNIST",
                           "MNIST")
    assert "disagree" not in text
    assert "On the MNIST images (out of distribution), every weight sample picks the same class" \
        in text
    # images other than the first three: their indices, not "the first"
    other = _examples(True)
    other["examples"]["in_index"] = [5, 7, 9]
    text = U.examples_text(other, ["a", "b", "c"], ["7", "2", "1"], "Fashion-MNIST", "MNIST")
    assert "(test images 5, 7, 9 in domain and 0, 1, 2 out of distribution;" in text
    assert "not picked by hand" not in text


def test_examples_takeaway_counts_the_disagreements():
    text = U.examples_takeaway(_examples(True))
    assert text.startswith("- BBB trained on Fashion-MNIST: its weight samples disagree on 2 of "
                           "3 MNIST images and on 0 of 3 Fashion-MNIST images (section 5).")
    assert "these 6 images illustrate it, they do not measure it" in text
    text = U.examples_takeaway(_examples(False))
    assert "disagree on 0 of 3 MNIST images" in text


# ---- section 6: the reliability diagram ----

def _rel_rows(bbb_under):
    """Seed-0 rows: BBB under-confident (accuracy above confidence from bin 9 up) or
    over-confident; the others close to the diagonal."""
    b = ({14: (0.999, 0.996, 9100), 13: (0.97, 0.90, 300), 12: (0.95, 0.83, 160),
          11: (0.88, 0.77, 100), 9: (0.74, 0.63, 80), 7: (0.45, 0.50, 260)} if bbb_under else
         {14: (0.990, 0.998, 9500), 13: (0.85, 0.90, 300), 8: (0.50, 0.56, 200)})
    rows = []
    for k in KINDS:
        rel = _rel(b) if k == "bbb" else _rel({14: (0.996, 0.997, 9400), 13: (0.88, 0.90, 400),
                                                  8: (0.55, 0.56, 200)})  # 10,000 images each
        ece = (0.0095 if bbb_under else 0.0001) if k == "bbb" else 0.004
        rows.append(_row("MNIST", k, 0, ece=ece, err=0.016 + 0.001 * KINDS.index(k), rel=rel))
    return rows


def test_reliability_text_finds_the_side_of_the_diagonal():
    text = U.reliability_text(_rel_rows(True), seed=0)
    assert "test errors 1.60–1.90 %):" in text
    assert "- 91.0 % to 94.0 % of each method's predictions fall in the top bin" in text
    assert "differ by at most 0.003" in text
    assert "- The bins below 0.6 hold 2.0 % to 2.6 % of the images (at most 260 in one bin" in text
    assert "above its confidence in 5 of its 6 occupied bins (every one from confidence 0.63 up)" \
        in text
    assert "Weighted by images, BBB is under-confident: right more often than it claims. Its " \
        "under-confident bins make 87 % of its ECE." in text
    assert "- BBB's ECE at this seed, 0.0095, is the highest of the 4" in text
    assert "For each of the other methods, under-confident bins make 0 % of its ECE." in text
    text = U.reliability_text(_rel_rows(False), seed=0)
    assert "above its confidence in 0 of its 3 occupied bins" in text
    assert "BBB is over-confident: right less often than it claims" in text
    assert "94.0 % to 95.0 % of each method's predictions" in text
    assert "differ by at most 0.008" in text
    assert "Its over-confident bins make 100 % of its ECE." in text
    assert "is the lowest of the 4" in text
    rows = _rel_rows(False)  # the others differ: one share each
    for r in rows:
        if r["kind"] == "ensemble":
            r["reliability"] = _rel({14: (0.999, 0.997, 9400), 13: (0.88, 0.90, 600)})
    text = U.reliability_text(rows, seed=0)
    assert "make 0 % (deterministic), 0 % (MC dropout) and 61 % (deep ensemble) of the ECE." \
        in text
    # nearly all, not all: BBB's share is not rounded up to 100 %
    rows = _rel_rows(True)
    for r in rows:
        if r["kind"] == "bbb":
            r["reliability"] = _rel({14: (0.999, 0.990, 9900), 8: (0.5575, 0.56, 100)})
    text = U.reliability_text(rows, seed=0)
    assert "Its under-confident bins make 99.7 % of its ECE." in text and "100 %" not in text


def test_shares_are_not_rounded_to_all_or_nothing():
    assert U._share(0.997, 1.0) == "99.7 %"
    assert U._share(1.0, 1.0) == "100 %" and U._share(0.0, 1.0) == "0 %"
    assert U._share(0.0004, 1.0) == "0.04 %" and U._share(0.54, 1.0) == "54 %"
    assert U._share(0.999999, 1.0) == "over 99.99 %"
    assert U._share(1.0, 0.0) == "—"


# ---- section 7: the priors on 2-D data ----

def _acc(circles_laplace, moons_flat):
    priors = ("Normal", "Laplace", "Cauchy", "flat", "Laplace, s ~ half-Cauchy")
    acc = {("moons", p): 0.970 for p in priors}
    acc[("moons", "flat")] = moons_flat
    acc[("moons", "Laplace, s ~ half-Cauchy")] = 0.876
    acc.update({("circles", p): 0.992 for p in priors})
    acc[("circles", "Laplace")] = circles_laplace
    acc[("circles", "Cauchy")] = 0.994
    return acc


def test_prior_table_text_groups_the_priors_by_the_numbers():
    text = U.prior_table_text(_acc(0.483, 0.973), n_test=1000, steps=2000)
    assert "(1 seed, 2,000 steps, 1,000 test points per network). Two accuracies count" in text
    assert "- On the moons, *Laplace, s ~ half-Cauchy* (0.876) falls behind; the other 4 fit " \
        "about equally well (0.970–0.973)." in text
    assert "- On the circles, *Laplace* (0.483) stays at chance" in text
    assert "the other 4 fit about equally well (0.992–0.994)" in text
    assert "- A network at chance may have collapsed onto its prior" in text
    assert "With 1 seed and 2,000 steps, this cannot be told from a failed optimisation" in text
    assert "- No prior beats the plain Normal one beyond that noise." in text
    assert "+0.003 on the moons (*flat*, against 0.970) and +0.002 on the circles (*Cauchy*" in text
    assert "The width of Laplace(0, 1) does not explain it" in text  # the Laplace net at chance
    # Laplace fits on the circles and the flat prior clearly beats Normal on the moons
    text = U.prior_table_text(_acc(0.990, 0.999), n_test=1000, steps=100)
    assert "at chance" not in text and "collapsed" not in text
    assert "On the circles, every prior fits about equally well (0.990–0.994)" in text
    assert "- Beyond that noise, on the moons *flat* beats the plain Normal prior." in text
    assert "+0.029 on the moons (*flat*, against 0.970)" in text
    tied = _acc(0.990, 0.999)
    tied[("moons", "Cauchy")] = 0.999
    assert "+0.029 on the moons (*Cauchy*, *flat*, all 0.999, against 0.970)" in \
        U.prior_table_text(tied, n_test=1000, steps=100)
    assert "Laplace(0, 1)" not in text


def test_far_std_text_reads_the_maps_far_from_the_data():
    acc = _acc(0.483, 0.973)
    # (median far, median near, far share, 95th percentile far, near, largest far, near)
    stds = {k: (0.002, 0.010, 0.36, 0.05, 0.25, 0.06, 0.30) for k in acc}
    stds[("circles", "Laplace")] = (0.9, 0.1, 0.36, 0.9, 0.1, 0.9, 0.1)  # at chance: left out
    for k in acc:  # on the moons the bright band runs on beyond the data
        if k[0] == "moons":
            stds[k] = (0.002, 0.010, 0.36, 0.31, 0.26, 0.35, 0.31)
    text = U.far_std_text(stds, acc, n_test=1000)
    assert text.startswith("**Far from the data** (grid points more than 0.5 from every "
                           "training point: about 36 % of each map), on the std maps of the 9 "
                           "networks not at chance:\n\n- On the moons, the largest std lies far "
                           "from the data on all 5 maps; the 95th percentile of the std is "
                           "0.310–0.310 far from the data against 0.260–0.260 near it (higher "
                           "far away on all 5).")
    assert "- On the circles, the largest std lies far from the data on none of the 4 maps" \
        in text
    assert "- Over most of the far region the std is small: its median is 0.002–0.002 far " \
        "from the data against 0.010–0.010 within that distance (higher far away for none " \
        "of the 9 networks); by the median alone, these small classifiers are at least as " \
        "sure far from the data as near it." in text
    # what the maps show comes before what their medians say
    assert text.index("largest std") < text.index("its median is")
    assert "sure over most of the area, but unsure where the decision boundary runs on" in text
    take = U.far_std_takeaway(stds, acc, n_test=1000)
    assert take.startswith("- On 2-D data (one seed each), the weight uncertainty of the 9 BBB "
                           "classifiers that fit marks the decision boundary, not the edge of "
                           "the data: on the moons the largest std lies far from the data on "
                           "all 5 maps, where the decision boundary runs on beyond it; "
                           "elsewhere the std is mostly small (median std 0.002–0.002")
    calm = {k: (0.002, 0.010, 0.36, 0.05, 0.25, 0.06, 0.30) for k in acc}
    text = U.far_std_text(calm, acc, n_test=1000)
    assert "sure almost everywhere" in text and "unsure where" not in text
    assert "runs on beyond it" not in U.far_std_takeaway(calm, acc, n_test=1000)
    stds = {k: (0.05, 0.01, 0.3, 0.1, 0.05, 0.2, 0.1) for k in acc}
    text = U.far_std_text(stds, acc, n_test=1000)
    assert "for all 9 networks" in text and "less sure far from the data than near it" in text
    assert "they are, by the median, less sure far from the data than near it (median std " \
        "0.050–0.050 beyond 0.5" in U.far_std_takeaway(stds, acc, n_test=1000)
    assert U.maps_caption(stds, acc, n_test=1000).endswith("covers about 30 % of each map.")
    flat = {("circles", "Laplace"): (0.1, 0.1, 0.3, 0.1, 0.1, 0.1, 0.1)}
    assert U.far_std_takeaway(flat, {("circles", "Laplace"): 0.5}, n_test=1000) == ""
    assert U.far_std_text(flat, {("circles", "Laplace"): 0.5}, n_test=1000) == ""


def test_outline_points_draws_the_classes_in_black_and_white():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_rgba
    fig, ax = plt.subplots()
    sc = ax.scatter([0, 1, 2], [0, 1, 2], c=[0, 1, 0], cmap="coolwarm")
    fig.legend([plt.Line2D([], [], ls="", marker="o"), plt.Line2D([], [], ls="", marker="o")],
               ["class 0", "class 1"])
    try:
        U.outline_points(fig)
        fig.canvas.draw()
        face = [tuple(c) for c in sc.get_facecolor()]
        assert face[0] == face[2] == to_rgba("white") and face[1] == to_rgba("black")
        assert tuple(sc.get_edgecolor()[1]) == to_rgba("white")
        assert list(sc.get_linewidths()) == [0.6, 0.35, 0.6]  # the fill shows, not the edge
        paths = sc.get_paths()  # one shape per class, not only one fill
        assert len(paths) == 3 and len(paths[0].vertices) == len(paths[2].vertices) \
            != len(paths[1].vertices)
        h = fig.legends[0].legend_handles
        assert h[0].get_markerfacecolor() == "white" and h[1].get_markerfacecolor() == "black"
        assert (h[0].get_marker(), h[1].get_marker()) == ("o", "^")
    finally:
        plt.close(fig)


def test_prior_takeaway_keeps_the_cause_open():
    text = U.prior_takeaway(_acc(0.483, 0.973), n_test=1000, steps=2000)
    assert text == ("- On 2-D data (1 seed, 2,000 steps), no prior beats the plain Normal one "
                    "beyond the test set's noise; 1 of the 5 networks on the circles stays at "
                    "chance, for a reason one run cannot tell (a collapse onto the prior or a "
                    "failed optimisation).")
    text = U.prior_takeaway(_acc(0.990, 0.999), n_test=1000, steps=100)
    assert text == ("- On 2-D data (1 seed, 100 steps), *flat* beats the plain Normal prior on "
                    "the moons.")


def test_weights_text_reads_the_draws():
    g = torch.Generator().manual_seed(0)
    z = torch.randn(10000, generator=g)
    draws = {("moons", "Normal"): z, ("moons", "flat"): 1.3 * z,
             ("circles", "Normal"): z, ("circles", "Laplace"): 0.1 * z,
             ("circles", "flat"): 4.0 * z}
    acc = {("moons", "Normal"): 0.97, ("moons", "flat"): 0.97, ("circles", "Normal"): 0.99,
           ("circles", "Laplace"): 0.49, ("circles", "flat"): 0.99}
    text = U.weights_text(draws, acc, n_test=1000)
    sd = float(z.std())
    assert f"- On the moons, the draws' standard deviations run from {sd:.2f} (*Normal*) to " \
        f"{1.3 * sd:.2f} (*flat*): a similar spread" in text
    far = float((4.0 * z).abs().gt(4).float().mean())
    assert "the widest is 40.0 times the narrowest" in text
    normal = float(z.abs().gt(4).float().mean())
    assert f"Beyond ±4 lie {100 * far:.1f} % (*flat*)" in text
    assert f"{100 * normal:.1f} % (*Normal*)" not in text  # rounds to 0.0 %: grouped
    assert "; 0.0 % for *Normal* and *Laplace*." in text
    near = float((0.1 * z).abs().le(0.25).float().mean())
    assert f"The *Laplace* network, at chance in the table, has {100 * near:.1f} % of its draws " \
        "within ±0.25 of zero" in text
    acc[("circles", "Laplace")] = 0.95  # it fits: no "at chance"
    assert "at chance" not in U.weights_text(draws, acc, n_test=1000)
    narrow = {k: 0.1 * v for k, v in draws.items()}  # nothing beyond ±4
    assert "No draw lies beyond ±4." in U.weights_text(narrow)


# ---- section 8: the conv net's expected error ----

def test_conv_error_text_counts_the_two_kinds_of_error():
    ee = torch.tensor([0.0] * 90 + [0.5] * 6 + [1.0] * 4)
    sd = torch.tensor([0.001] * 90 + [0.2] * 6 + [0.02] * 4)
    text = U.conv_error_text({"expected_error": ee, "std": sd})
    assert "**What the figure shows** (100 test images):" in text
    assert "- 90 that no sample gets wrong (median std 0.001)\n- 6 that split the samples " \
        "(median std 0.200)\n- 4 that every sample gets wrong (median std 0.020)" in text
    assert "a smaller median std" in text and "flags them less" in text
    sd = torch.tensor([0.001] * 90 + [0.02] * 6 + [0.2] * 4)
    text = U.conv_error_text({"expected_error": ee, "std": sd})
    assert "a larger median std" in text and "flags them more" in text
    sd = torch.tensor([0.001] * 90 + [0.02] * 10)
    text = U.conv_error_text({"expected_error": ee, "std": sd})
    assert "the same median std as" in text and "does not tell the two kinds apart" in text


def _conv(test_error=0.0108, ece=0.0062):
    return {"seed": 0, "config": {"eval_samples": 20},
            "metrics": {"test_error": test_error, "ece": ece, "epochs": 5}}


def test_committed_figures_text_says_what_is_known_of_them():
    cmd = "make notebooks ONLY=05 PROFILE=default TRAIN=1"
    text = U.committed_figures_text(_conv(), cmd)
    assert text.startswith("**The two figures below are not redrawn.** The record holds this "
                           "network's test metrics, not its per-image numbers")
    assert "drew them from the conv net's checkpoint (seed 0, 5 epochs, 20 weight samples), in " \
        "runs that printed the same test error and ECE as this record." in text
    assert "no sentence of this notebook is read from them" in text
    assert f"`{cmd}` trains the network again" in text
    other = {"seed": 3, "config": {}, "metrics": {"test_error": 0.02, "ece": 0.01}}
    text = U.committed_figures_text(other, cmd)
    assert "(seed 3)" in text and "epochs" not in text and "weight samples" not in text


def test_committed_captions_name_the_commit_that_drew_each_figure():
    assert U.committed_caption("conv-net-expected-error") == (
        "*Committed figure, drawn in commit `5a72260` (2026-11-24); not redrawn here.*")
    assert "`c1cd485` (2026-11-23)" in U.committed_caption("conv-net-hardest-images")
    assert U.committed_caption("another-figure") == "*Committed figure; not redrawn here.*"


def test_conv_takeaway_follows_the_record():
    one = _conv()
    one["metrics"]["epochs"] = 1
    assert "(one network, 1 epoch) misclassifies" in U.conv_takeaway(one)
    text = U.conv_takeaway(_conv())
    assert text.startswith("- The Bayesian conv net (one network, 5 epochs) misclassifies "
                           "1.08 % of the MNIST test images, with ECE 0.0062;")
    assert "whether its weight uncertainty flags its errors is not read here" in text
    ee = torch.tensor([0.0] * 90 + [0.5] * 6 + [1.0] * 4)
    per = {"expected_error": ee, "std": torch.tensor([0.001] * 90 + [0.2] * 6 + [0.02] * 4)}
    text = U.conv_takeaway(_conv(0.02), per)
    assert "2.00 %" in text and "Its 4 images that every sample gets wrong have a smaller " \
        "median std than the 6 that split the samples (0.020 against 0.200): the weight " \
        "uncertainty flags them less." in text
    per["std"] = torch.tensor([0.001] * 90 + [0.02] * 6 + [0.2] * 4)
    text = U.conv_takeaway(_conv(), per)
    assert "a larger median std than the 6" in text and "flags them less" not in text


# ---- takeaways ----

def _v2(verdicts, interim=False):
    """A version-2 summary whose claims get ``verdicts`` (AUROC map, mc, ens; ECE map, mc,
    ens)."""
    claims = {"OOD AUROC (entropy)": [f"{r} < bbb on auroc_entropy" for r in
                                      ("map", "mc_dropout", "ensemble")],
              "test ECE": [f"bbb < {r} on ece" for r in ("map", "mc_dropout", "ensemble")]}
    it = iter(verdicts)
    return {"interim": interim, "seeds": list(range(10)),
            "families": {f: {c: {"verdict": next(it)} for c in cs} for f, cs in claims.items()}}


def _v1():
    au = {"deterministic": (0.77, 0.78), "mc_dropout": (0.86, 0.88), "bbb": (0.93, 0.94),
          "ensemble": (0.80, 0.81)}
    ece = {"deterministic": (0.005, 0.005), "mc_dropout": (0.004, 0.004),
           "bbb": (0.009, 0.0096), "ensemble": (0.003, 0.003)}
    return au, ece


def test_ood_takeaway_says_what_version_2_reverses_upholds_and_leaves_open():
    au, ece = _v1()
    summary, rows = _summary(au, ece=ece), _rel_rows(True)
    nr = "not resolved at 10 seeds"
    text = U.ood_takeaway(summary, rows, _v2(["holds", "reversed", nr, nr, "holds", "holds"]))
    assert "- Version 1 (section 3: unequal searches, 2 seeds, no declared test): BBB has the " \
        "highest mean AUROC (0.935; next MC dropout, 0.870), but its recipe was first picked " \
        "on this test AUROC ([docs/choices.md](../docs/choices.md), entry 8). Its mean ECE " \
        "(0.0093) is the highest of the 4. At seed 0 its calibration error is " \
        "under-confidence (section 6)." in text
    assert "- Version 2 is the comparison to weigh: equal search budgets (only MAP's grid was " \
        "placed by a pilot search of its own: [docs/choices.md](../docs/choices.md), entry 11) " \
        "and declared tests, both fixed before its numbers, on 10 paired seeds. Of version 1's " \
        "6 orderings of BBB " \
        "against a rival:" in text
    assert "  - Reversed (3): on AUROC, MC dropout is higher than BBB; on ECE, BBB is lower " \
        "than MC dropout and the deep ensemble (of MAP networks, not version 1's)." in text
    # the changed rival's caveat sits in the sentence that upholds the ordering
    assert "  - Upheld (1): on AUROC, BBB is higher than MAP (not version 1's single network: " \
        "its weight decay was searched)." in text
    assert "  - Not resolved (2): AUROC against the deep ensemble and ECE against MAP." in text
    # every AUROC ordering upheld, every ECE ordering reversed: the caveats move with the rivals
    text = U.ood_takeaway(summary, rows, _v2(["holds"] * 6))
    assert "  - Reversed (3): on ECE, BBB is lower than MAP (not version 1's single network: its " \
        "weight decay was searched), MC dropout and the deep ensemble (of MAP networks, not " \
        "version 1's)." in text
    assert "  - Upheld (3): on AUROC, BBB is higher than MAP, MC dropout and the deep ensemble." \
        in text and "Not resolved" not in text
    text = U.ood_takeaway(summary, rows, _v2(["reversed"] * 3 + ["reversed"] * 3))
    assert "Reversed (3): on AUROC, MAP (not version 1's single network: its weight decay was " \
        "searched), MC dropout and the deep ensemble (of MAP networks, not version 1's) are " \
        "higher than BBB." in text
    assert "Upheld (3): on ECE, MAP, MC dropout and the deep ensemble are lower than BBB." in text
    assert "Version 2 has no final run yet" in U.ood_takeaway(summary, rows, None)
    assert "not complete" in U.ood_takeaway(summary, rows, _v2(["holds"] * 6, interim=True))
    au["mc_dropout"] = (0.95, 0.96)  # BBB no longer first; over-confident on seed 0
    text = U.ood_takeaway(_summary(au, ece=ece), _rel_rows(False), None)
    assert "is behind MC dropout on the mean AUROC (0.935 against 0.955). Its recipe was first " \
        "picked on this test AUROC" in text and "but" not in text
    ece["bbb"] = (0.001, 0.001)
    assert "Its mean ECE (0.0010) is the lowest of the 4" in U.ood_takeaway(
        _summary(au, ece=ece), _rel_rows(False), None)
    assert "its calibration error is over-confidence" in text


def _v2_table(ens=(0.90, 0.92)):
    return {"ensemble": {"full": {"auroc_entropy": {**_m(ens), "seeds": [0, 1]}}}}


def test_search_takeaway_says_what_differs_between_the_versions():
    au, _ = _v1()
    sweeps = {"deterministic_mnist": _sweep(10), "deterministic_fashionmnist": _sweep(15)}
    v2 = {**_v2(["holds"] * 6), "table": _v2_table()}
    text = U.search_takeaway(sweeps, _summary(au), 5, v2)
    assert text.startswith("- The deep ensemble inherits the single network's search. In "
                           "version 1, the validation-NLL rule without weight decay stopped "
                           "that network at 10 of the 50 epochs allowed on MNIST, and the "
                           "ensemble of 5 reaches an AUROC of 0.805 ± 0.007 (2 seeds).")
    assert "In version 2 its members are MAP networks, searched with weight decay, and it " \
        "reaches 0.910 ± 0.014 (2 seeds)." in text
    assert "no test compares them" in text and "notebook 06" not in text
    text = U.search_takeaway({"deterministic_mnist": _sweep(50)}, _summary(au), 5, None)
    assert "let that network train all 50 epochs allowed on MNIST" in text
    assert "stopped" not in text and "version 2" not in text
    v2["interim"] = True  # interim: version 2's number is not shown
    assert "version 2" not in U.search_takeaway(sweeps, _summary(au), 5, v2)


# ---- notebook 05's readings of version 2 (helpers.ood_plan) ----

def _v2_full(verdicts, p=(0.03, 0.0001, 0.6, 0.9, 0.03, 1e-6), interim=False):
    v2 = _v2(verdicts, interim)
    for (fam, claims), ps in zip(v2["families"].items(), (p[:3], p[3:])):
        for res, pv in zip(claims.values(), ps):
            res["p_holm"] = pv
    means = {"bbb": (0.922, 0.0042), "map": (0.884, 0.0041), "mc_dropout": (0.958, 0.0050),
             "ensemble": (0.911, 0.0082)}
    v2["table"] = {m: {"full": {"auroc_entropy": {"mean": a}, "ece": {"mean": e}}}
                   for m, (a, e) in means.items()}
    return v2


def test_v2_text_groups_the_verdicts():
    from helpers import ood_plan as O
    nr = "not resolved at 10 seeds"
    text = O.v2_text(_v2_full(["holds", "reversed", nr, nr, "holds", "holds"]))
    assert "(10 paired seeds; each verdict from a two-sided paired t-test with Holm's " \
        "correction):" in text
    assert "- **BBB better**: higher AUROC than MAP (0.922 against 0.884; Holm p 0.03); lower " \
        "ECE than MC dropout (0.0042 against 0.0050; Holm p 0.03); lower ECE than the deep " \
        "ensemble (0.0042 against 0.0082; Holm p 1e-06)." in text
    assert "- **BBB worse**: lower AUROC than MC dropout (0.922 against 0.958; Holm p 0.0001)." \
        in text
    assert "- **Not resolved at 10 seeds**: AUROC against the deep ensemble" in text
    text = O.v2_text(_v2_full(["holds"] * 6, interim=True))
    assert "BBB worse" not in text and "Not resolved" not in text
    assert "**interim**" in text


def test_v2_robustness_text_names_changes_and_near_misses():
    from helpers import ood_plan as O
    nr = "not resolved at 10 seeds"
    v2 = _v2_full(["holds", "reversed", nr, nr, "holds", "holds"])
    words = [c["verdict"] for f in v2["families"].values() for c in f.values()]
    ps = [c["p_holm"] for f in v2["families"].values() for c in f.values()]
    it = iter(zip(words, ps))
    v2["mc_robustness"] = {f: {c: (lambda w, p: {"verdicts": [w] * 3, "p_holm": [p] * 3})(
        *next(it)) for c in cs} for f, cs in v2["families"].items()}
    text = O.robustness_text(v2)
    assert "Rescored with each of 3 other sampling seeds, all 6 verdicts stay the same." in text
    assert "Two verdicts lie near the threshold: BBB against MAP on AUROC (Holm p 0.03; rescored " \
        "0.030–0.030); BBB against MC dropout on ECE (Holm p 0.03" in text
    v2["mc_robustness"]["test ECE"]["bbb < mc_dropout on ece"]["verdicts"][1] = nr
    text = O.robustness_text(v2)
    assert "5 of the 6 verdicts stay the same; changed: BBB against MC dropout on ECE (holds; " \
        f"rescored: holds, {nr}, holds)." in text
    assert O.robustness_text({**v2, "mc_robustness": {}}) == ""


def _choice(epochs, **config):
    return {"epochs": epochs, "config": config}


def test_v2_edges_text_names_the_choices_at_a_grid_edge():
    from helpers import ood_plan as O
    choices = {"map": _choice(60, lr=3e-4, weight_decay=1e-3),
               "mc_dropout": _choice(55, lr=3e-4, dropout=0.4),
               "bbb": _choice(60, lr=3e-4, rho_init=-7.0)}
    text = O.edges_text(choices)
    assert text.startswith("**Where version 2's choices sit** (plan v3's search records;")
    assert "- BBB's choice sits at two edges of its grid: `rho_init` -7 (the smallest value " \
        "searched: the least initial posterior uncertainty) and 60 epochs (the most allowed)." \
        in text
    assert "- MAP's sits at one edge of its grid: 60 epochs (the most allowed). The deep " \
        "ensemble's members are MAP networks." in text
    assert "- MC dropout's sits inside its grid." in text
    assert "the verdicts above are about these grids" in text
    # every choice inside its grid: no edge, no caveat on the verdicts
    choices = {"map": _choice(40, lr=1e-4, weight_decay=1e-2),
               "mc_dropout": _choice(55, lr=3e-4, dropout=0.4),
               "bbb": _choice(30, lr=1e-3, rho_init=-5.0)}
    text = O.edges_text(choices)
    assert "BBB's choice sits inside its grid." in text and "edge of its grid" not in text
    assert "verdicts" not in text
    # the other end: the largest value, the fewest epochs; a search without a choice yet
    text = O.edges_text({"bbb": _choice(5, lr=3e-3, rho_init=-4.0), "map": None})
    assert "`rho_init` -4 (the largest value searched)" in text and "posterior" not in text
    assert "learning rate 0.003 (the largest value searched)" in text
    assert "three edges" in text and "5 epochs (the fewest allowed)" in text
    assert "- MAP's search has no choice yet." in text


# ---- on the committed results ----

@pytest.fixture
def committed(monkeypatch):
    monkeypatch.setenv("BBB_RESULTS_DIR", str(ROOT / "results"))
    path = ROOT / "results" / "05_uncertainty" / "ood.json"
    if not path.exists():
        pytest.skip("no committed results of notebook 05")
    return json.loads(path.read_text())


def test_readings_run_on_the_committed_results(committed):
    import helpers as H
    from helpers import ood_plan as O
    from helpers import sweep as S
    cfg = H.get_profile("05_uncertainty", committed["profile"])
    rows = committed["metrics"]["rows"]
    summary = U.summarise(rows)
    sweeps = S.ensure_sweeps("05_uncertainty", cfg, run_missing=False)
    assert "(lowest validation NLL:" in U.search_words(sweeps)
    bbb = summary[("MNIST", "bbb")]["auroc_entropy"]
    assert f"{bbb['mean']:.3f} ± {bbb['sd']:.3f}" in U.ood_text(summary)
    text = U.entropy_text(rows, seed=0, bins=committed["config"]["entropy_bins"])
    r = next(x for x in rows if (x["data"], x["kind"], x["seed"]) == ("MNIST", "bbb", 0))
    assert f"{100 * r['entropy_hist_out'][0] / sum(r['entropy_hist_out']):.1f} % for BBB" in text
    assert f"BBB's ECE at this seed, {r['ece']:.4f}" in U.reliability_text(rows, seed=0)
    ex = next(x for x in rows if x["kind"] == "bbb" and "examples" in x)
    assert "weight samples" in U.examples_text(ex, ["a", "b", "c"], ["7", "2", "1"], "in", "out")
    assert "weight samples disagree on" in U.examples_takeaway(ex)
    assert "near-certain about the fewest" in U.entropy_takeaway(rows, seed=0)
    v2 = O.load_summary()
    text = U.ood_takeaway(summary, rows, v2)
    assert f"{bbb['mean']:.3f}" in text
    ens = summary[("MNIST", "ensemble")]["auroc_entropy"]
    text = U.search_takeaway(sweeps, summary, cfg.ensemble_size, v2)
    assert f"{ens['mean']:.3f} ± {ens['sd']:.3f}" in text
    assert f"{sweeps['deterministic_mnist']['metrics']['chosen']['epochs']} of the" in text
    if v2 is not None and not v2["interim"]:
        assert "reverses" in text or "In version 2" in text
        assert "**What version 2 shows**" in O.v2_text(v2)
        assert "verdicts stay the same" in O.robustness_text(v2)
    conv = H.load_results("05_uncertainty", "bbb_conv_net")
    per = U.per_image_from_record(conv)
    assert f"{100 * conv['metrics']['test_error']:.2f} %" in U.conv_takeaway(conv, per)
    if per:
        assert "What the figure shows" in U.conv_error_text(per)
    else:
        assert f"(seed {conv['seed']}, " in U.committed_figures_text(conv, "make")
    if v2 is not None and not v2["interim"]:
        assert "grid" in O.edges_text()


def test_prior_readings_run_on_the_committed_results(committed):
    import helpers as H
    from helpers.toy import TOY, build_toy
    rec = H.load_results("05_uncertainty", "priors_2d")
    toy = build_toy(rec["profile"], rec["config"]["n_train"], rec["config"]["steps"],
                    seed=rec["seed"])
    assert toy is not None
    models, acc, _ = toy
    text = U.prior_table_text(acc, rec["config"]["n_test"], rec["config"]["steps"])
    assert f"{acc[('circles', 'Laplace')]:.3f}" in text and f"{rec['config']['steps']:,} steps" \
        in text
    draws = U.last_layer_draws(models, TOY, ("Normal", "Laplace", "flat"), seed=rec["seed"])
    text = U.weights_text(draws, acc, rec["config"]["n_test"])
    assert f"{float(draws[('circles', 'flat')].std()):.2f}" in text
    assert "steps)" in U.prior_takeaway(acc, rec["config"]["n_test"], rec["config"]["steps"])
    from helpers.toy import LIMS
    stds = U.far_std(models, toy[2], LIMS)
    assert set(stds) == set(models)
    low = min(v[0] for k, v in stds.items() if acc[k] > 0.6)
    assert f"{low:.3f}–" in U.far_std_text(stds, acc, rec["config"]["n_test"])


# ---- the chapter: the final comparison (helpers.ood_plan), read as BBB minus its rival ----

def _final(auroc, ece, n=10):
    """A planted final summary: per-seed AUROC and ECE of each row, the claims tested as the plan
    tests them (helpers.stats.ordering_family, AUROC claims "rival < bbb", ECE "bbb < rival")."""
    from helpers import ood_plan as O
    from helpers import stats
    table = {m: {"full": {k: {"seeds": list(range(n)), "per_seed": list(v[m]),
                              "mean": statistics.fmean(v[m]), "sd": statistics.stdev(v[m])}
                          for k, v in (("auroc_entropy", auroc), ("ece", ece))}}
             for m in O.ROWS}
    fam_a = stats.ordering_family({f"{r} < bbb on auroc_entropy": (auroc[r], auroc["bbb"])
                                   for r in O.RIVALS})
    fam_e = stats.ordering_family({f"bbb < {r} on ece": (ece["bbb"], ece[r]) for r in O.RIVALS})
    return {"seeds": list(range(n)), "interim": False, "table": table, "mc_robustness": {},
            "families": {"OOD AUROC (entropy)": fam_a, "test ECE": fam_e}}


def _wiggle(base, scale, k=3, n=10):
    """n values around ``base`` within ±``scale``, in an order set by ``k``."""
    return [base + scale * ((i * k) % 11 - 5) / 5 for i in range(n)]


def _planted(bbb_ece=0.004):
    auroc = {"bbb": _wiggle(0.92, 0.01), "map": _wiggle(0.88, 0.01, 4),
             "mc_dropout": _wiggle(0.96, 0.01, 5), "ensemble": _wiggle(0.92, 0.02, 7)}
    ece = {"bbb": _wiggle(bbb_ece, 0.0005), "map": _wiggle(0.0041, 0.0006, 2),
           "mc_dropout": _wiggle(0.006, 0.0005, 6), "ensemble": _wiggle(0.008, 0.0005, 8)}
    return _final(auroc, ece)


def test_effects_read_bbb_minus_its_rival_whatever_the_claim_is_written_as():
    from helpers import ood_plan as O
    v2 = _planted()
    es = {(e["metric"], e["rival"]): e for e in O.effects(v2)}
    assert [e["metric"] for e in O.effects(v2)][:3] == ["auroc_entropy"] * 3
    for e in es.values():  # BBB − rival, and its interval around it
        d = statistics.fmean(O._per_seed_diffs(v2, e))
        assert e["diff"] == pytest.approx(d)
        assert e["ci"][0] < e["diff"] < e["ci"][1]
    assert es[("auroc_entropy", "map")]["diff"] > 0
    assert es[("auroc_entropy", "map")]["word"] == "BBB better"
    assert es[("auroc_entropy", "mc_dropout")]["diff"] < 0
    assert es[("auroc_entropy", "mc_dropout")]["word"] == "BBB worse"
    assert es[("auroc_entropy", "ensemble")]["word"] == "not resolved at 10 seeds"
    assert es[("ece", "ensemble")]["diff"] < 0 and es[("ece", "ensemble")]["word"] == "BBB better"


def test_answer_says_the_direction_with_each_interval():
    from helpers import ood_plan as O
    v2 = _planted()
    es = {(e["metric"], e["rival"]): e for e in O.effects(v2)}
    text = O.answer_text(v2, recipe={"here": 1.86, "nb01": 1.48, "max_epochs": 60}, v3=False)
    lead, table, note, weaker = text.split("\n\n")
    # a two-sentence lead from the verdicts, plain, in the table's verdict words: AUROC, then
    # ECE (with its scale, all four under 1 %)
    # the bottom line first (r19: the rivals that beat BBB on any score, and BBB's ECE), then
    # the verdicts
    assert lead == ("**The answer:** At one shared budget, BBB is not the best uncertainty "
                    "method here: MC dropout beats it on at least one score, though no rival's "
                    "ECE is resolved below BBB's. BBB flags Fashion-MNIST better than MAP and "
                    "worse than MC dropout; not resolved at 10 seeds against the deep ensemble. Its 15-bin "
                    "ECE (all four methods' under 1 %) is lower than MC dropout's and the deep "
                    "ensemble's, and not resolved at 10 seeds against MAP's.")
    assert "slightly" not in text and "do not separate" not in text
    rows = table.split("\n")
    assert rows[0] == ("| BBB against | AUROC on Fashion-MNIST (higher is better) | ECE on "
                       "MNIST (lower is better) |") and len(rows) == 2 + len(O.RIVALS)
    assert rows[2] == (f"| MAP | {O.effect_words(es[('auroc_entropy', 'map')], False)}: BBB "
                       f"better | {O.effect_words(es[('ece', 'map')], False)}: not resolved at "
                       "10 seeds |")
    lo, hi = O._ece_range(v2)
    assert note.startswith("Each cell: the mean difference BBB − rival over 10 paired seeds")
    # the ECEs' scale sits under the scores table, not on the first screen
    assert "All four mean ECEs" not in text
    assert (f"All four mean ECEs lie between {lo:.4f} and {hi:.4f}: confidence and accuracy "
            f"differ by {100 * lo:.2f}–{100 * hi:.2f} percentage points, weighted by the images "
            "in each bin, all under 1 %.") in O.ece_sign_words(v2)
    assert ("*BBB better* or *BBB worse* when it decides that direction, *not resolved at 10 "
            "seeds* when it decides neither.") in note  # the verdict words, defined here
    assert weaker == ("All four are compared at one shared budget (searches of the same size, "
                      "at most 60 epochs from random weights; the ensemble reuses MAP's choice), "
                      "not each at its best: this BBB's test error is 1.86 %, against 1.48 % for "
                      "notebook 01's BBB at the same width (section 3 gives BBB's two recipes).")
    with_paper = O.answer_text(v2, recipe={"here": 1.86, "nb01": 1.48, "max_epochs": 60,
                                           "paper": 1.36}, v3=False)
    assert "at the same width and the paper's 1.36 % (section 3" in with_paper
    assert "same search" not in text
    assert "compared at one shared budget" not in O.answer_text(v2, recipe=False)
    # the weaker-network sentence only when BBB here is the weaker one
    bbb = {"mean": 0.0186}
    facts = O.recipe_facts({"table": {"bbb": {"full": {"test_error": bbb}}}},
                           {"mean": 0.0148, "H": 400}, {"rho_init": -7})
    assert facts == pytest.approx({"here": 1.86, "nb01": 1.48, "max_epochs": O.A.MAX_EPOCHS,
                                   "paper": 100 * __import__('helpers.classification').classification.PAPER_TABLE1['bbb_mixture'][400]})
    assert O.recipe_facts({"table": {"bbb": {"full": {"test_error": bbb}}}}, {"mean": 0.02},
                          {"rho_init": -7}) is None
    # BBB worst calibrated of the four: the sentence turns
    worse = O.answer_text(_planted(bbb_ece=0.02), recipe=False, v3=False)
    assert "Its 15-bin ECE is higher than MAP's, MC dropout's and the deep ensemble's." \
        in worse and "lower than" not in worse and "under 1 %" not in worse
    assert "better calibrated" not in worse
    for t in (text, worse, O.effects_text(v2, v3=False), O.takeaways_text(v2, recipe=False)):
        assert "reversed" not in t and "holds" not in t and "version" not in t


def test_effects_text_says_what_each_interval_excludes():
    from helpers import ood_plan as O
    v2 = _planted()
    text = O.effects_text(v2, v3=False)
    assert "\n- " not in text and text.count(". ") <= 3  # a reading, not the table again
    # the decided intervals are the answer's: not restated here
    assert text.startswith("**What the unresolved comparisons rule out** ")
    assert "exclude zero" not in text and "deficit of BBB against MC dropout" not in text
    e = next(e for e in O.effects(v2) if e["rival"] == "ensemble" and e["high"])
    need, bar, k = O.needed_difference(v2, e, v3=False)
    assert (f"Against the deep ensemble on AUROC, the interval allows BBB up to "
            f"{e['ci'][1]:.3f} better or {-e['ci'][0]:.3f} worse") in text
    assert (f"The smallest mean differences these 10 seeds could have resolved at this spread: "
            f"{need:.3f} in AUROC against the deep ensemble (its Holm bar would be "
            + (f"0.05/{k})" if k > 1 else "0.05)")) in text
    assert "to hold" not in text  # the README's verdict word is not used here
    # a lower-is-better score also as a share of the two methods' means
    m = next(e for e in O.effects(v2) if e["rival"] == "map" and not e["high"])
    worst = max(m["ci"][1], -m["ci"][0])
    pcs = sorted(100 * worst / O._mean(v2, r, "ece") for r in ("bbb", "map"))
    assert f"about {pcs[0]:.0f}" in text and "% of either method's mean ECE" in text
    decided = _planted()
    for claims in decided["families"].values():
        for res in claims.values():
            res["verdict"] = "holds"
    assert O.effects_text(decided, v3=False) == ""  # nothing left open: nothing to add


def test_takeaways_are_lessons_that_follow_the_verdicts():
    from helpers import ood_plan as O
    v2 = _planted()
    text = O.takeaways_text(v2, recipe=False)
    assert text.count("\n- ") == 1  # two bullets: no recipe facts, no third
    es = {(e["metric"], e["rival"]): O.effect_words(e, False) for e in O.effects(v2)}
    assert ("MC dropout has the highest mean AUROC; BBB's is higher than MAP's "
            f"({es[('auroc_entropy', 'map')]}), lower than MC dropout's "
            f"({es[('auroc_entropy', 'mc_dropout')]}) and not resolved at 10 seeds against the "
            f"deep ensemble's ({es[('auroc_entropy', 'ensemble')]}).") in text
    assert "weight uncertainty" not in text  # two recipes compared, not uncertainty on and off
    assert ("- **Calibration: small differences, two of three resolved** (ECE, BBB − rival). "
            "All four have 15-bin ECEs under 1 %; BBB's ECE is lower than MC dropout's "
            f"({es[('ece', 'mc_dropout')]}) and the deep ensemble's ({es[('ece', 'ensemble')]}) "
            f"and not resolved at 10 seeds against MAP's ({es[('ece', 'map')]}).") in text
    assert "well calibrated" not in text and "test NLL" not in text  # no NLL claims given
    # notebook 06's NLL verdicts: the rivals that beat BBB on the proper score are named
    nll = {"table": {}, "families": {"test NLL": {
        f"bbb < {r} on nll": {"verdict": w, "t_test": {"mean_diff": d, "ci": [d - 1e-3,
                                                                             d + 1e-3]}}
        for r, w, d in (("map", "not resolved at 10 seeds", 0.0),
                        ("mc_dropout", "reversed", -0.005), ("ensemble", "holds", 0.005))}}}
    both = O.takeaways_text(v2, recipe=False, v3=nll)
    assert "Yet MC dropout beats it on test NLL (the answer), so a lower ECE" in both
    lead = O.answer_text(v2, recipe=False, v3=nll).split("\n\n")[0]
    assert lead.endswith("; but MC dropout beats it on test NLL (notebook 06's test).")
    # BBB no better than MAP on AUROC: no word of its uncertainty helping
    flat = _final({"bbb": _wiggle(0.9, 0.01), "map": _wiggle(0.9, 0.01, 4),
                   "mc_dropout": _wiggle(0.96, 0.01, 5), "ensemble": _wiggle(0.92, 0.02, 7)},
                  {m: _wiggle(0.005, 0.0005, k) for m, k in
                   (("bbb", 3), ("map", 2), ("mc_dropout", 6), ("ensemble", 8))})
    flat_text = O.takeaways_text(flat, recipe=False)
    assert "higher than MAP's" not in flat_text and "against MAP's" in flat_text.split("\n")[0]
    three = O.takeaways_text(v2, recipe={"here": 1.86, "nb01": 1.48, "max_epochs": 60})
    assert "- **What the verdicts are about.** This BBB, weaker than notebook 01's, is " \
        "trained as every method here is" in three and "1.86" not in three


def test_differences_figure_draws_the_tested_intervals():
    import matplotlib
    import numpy as np
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from helpers import ood_plan as O
    v2 = _planted()
    fig = O.differences_figure(v2)
    try:
        axes = fig.axes
        assert len(axes) == 2
        for ax, metric in zip(axes, ("auroc_entropy", "ece")):
            es = [e for e in O.effects(v2) if e["metric"] == metric]
            lo, hi = ax.get_xlim()
            flip = 1 if metric.startswith("auroc") else -1  # right of zero: BBB better
            for e in es:  # nothing drawn outside the axes
                d = [flip * x for x in O._per_seed_diffs(v2, e) + e["ci"]]
                assert lo < min(d) and max(d) < hi
                # the interval drawn is the tested one, signed so that right is BBB better
                segs = [seg for c in ax.collections if hasattr(c, "get_segments")
                        for seg in c.get_segments()]
                assert any(np.allclose(sorted(seg[:, 0]), sorted(flip * x for x in e["ci"]))
                           for seg in segs)
            labels = [t.get_text() for t in ax.get_yticklabels()]
            assert [lab.split("\n")[1] for lab in labels] == [e["word"] for e in es]
            assert "BBB better →" in ax.get_xlabel()
        assert "above the dots" in fig._suptitle.get_text()
    finally:
        plt.close(fig)


def test_last_layer_figure_hides_no_draw():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    draws = {("circles", "flat"): torch.tensor([-11.3, 0.0, 0.2, 7.9]),
             ("circles", "Normal"): torch.tensor([-1.0, 0.5]),
             ("moons", "flat"): torch.tensor([-2.0, 2.5])}
    fig = U.last_layer_figure_full(draws)
    try:
        (lo, hi), (lo2, hi2) = (ax.get_xlim() for ax in fig.axes[:2])
        assert lo <= -11.3 and hi >= 7.9 and lo2 <= -2.0 and hi2 >= 2.5
        assert len({p.get_edgecolor() for p in fig.axes[0].patches}) == 2
    finally:
        plt.close(fig)
    fig = U.last_layer_figure_full({("moons", "flat"): torch.linspace(-1, 1, 10 * 1000)})
    try:  # the title says how many weights a curve pools
        assert fig.axes[0].get_title() == "moons: each curve pools 10 weights × 1,000 draws"
    finally:
        plt.close(fig)


def test_choices_rows_mark_the_edges_of_each_grid():
    from helpers import ood_plan as O
    from helpers import alternatives_plan as A
    grid = A.SEARCHES["bbb"]["grid"]
    pick = {"config": {k: v[1] for k, v in grid.items()}, "epochs": A.MAX_EPOCHS - 5}
    edge = {"config": {k: min(v) for k, v in grid.items()}, "epochs": A.MAX_EPOCHS}
    rows = O.choices_rows({"map": pick | {"config": {k: v[1] for k, v in
                                                       A.SEARCHES["map"]["grid"].items()}},
                           "mc_dropout": None, "bbb": edge})[1]
    assert rows[0][-1] == "none" and rows[1][2] == "no choice yet"
    assert rows[2][-1] == "learning rate, ρ₀, epochs (the most allowed)"
    assert "3×10⁻⁵, 0.0001" in O.choices_rows({"map": None, "mc_dropout": None,
                                                "bbb": None})[1][0][1]  # no code notation
    assert O._num(-7.0) == "−7" and O._num(1e-05) == "10⁻⁵" and O._num(0.0003) == "0.0003"
    assert "prior" not in rows[2][2]  # no prior in the config: none made up
    mix = edge | {"config": edge["config"] | {"pi": 0.25, "neg_log_sigma1": 1.0,
                                              "neg_log_sigma2": 7.0}}
    row = O.choices_rows({"map": None, "mc_dropout": None, "bbb": mix})[1][2]
    assert row[2].endswith("prior (fixed, not searched): π = 0.25, −log σ1 = 1, −log σ2 = 7")
    # the project's mixture (a point of the paper's grid) says why it is not searched
    words = O.prior_fixed_words({"pi": 0.5, "neg_log_sigma1": 0.0, "neg_log_sigma2": 6.0})
    assert words == ("**BBB's prior is not searched:** its scale mixture (π = 0.5, −log σ1 = 0, "
                     "−log σ2 = 6) is a point of the paper's MNIST grid, fixed before the runs, "
                     "because every search varies two settings over four values each (16 "
                     "trials) and one more would take 64.")
    assert O.prior_fixed_words(mix["config"]) == ""  # not the project's point: no claim
    assert words in O.edges_words({"map": None, "mc_dropout": None,
                                   "bbb": edge | {"config": edge["config"] | {
                                       "pi": 0.5, "neg_log_sigma1": 0.0,
                                       "neg_log_sigma2": 6.0}}})
    mapc = {"config": {k: v[1] for k, v in A.SEARCHES["map"]["grid"].items()}
            | {"pi": 0.5, "neg_log_sigma1": 0.0, "neg_log_sigma2": 6.0}, "epochs": 60}
    rows = O.choices_rows({"map": mapc, "mc_dropout": None, "bbb": None})[1]
    assert "prior" not in rows[0][2]  # MAP's config carries BBB's defaults: not its prior
    assert "learning rate" in O.edges_words({"map": None, "mc_dropout": None, "bbb": edge})


def test_the_committed_chapter_opens_with_its_answer_and_tells_no_history(committed):
    """The first code cell renders the answer from the final summary; no prose or rendered
    output speaks of plan versions, commits, referees or issues; every figure of the notebook
    is one it saves (nothing drawn from an older run is left in figures/)."""
    import re
    from helpers import ood_plan as O
    from tests.test_figures import savefig_patterns
    v2 = O.load_summary()
    if v2 is None:
        pytest.skip("no final summary committed")
    nb = json.loads((ROOT / "notebooks" / "05_uncertainty.ipynb").read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    first = "".join("".join(o.get("data", {}).get("text/markdown", ""))
                    for o in code[0].get("outputs", []))
    assert first == O.answer_text(v2) and first.startswith("**The answer:** ")
    src = "".join(code[0]["source"])
    assert "v2" not in src and "runs = O.load_summary()" in src  # no plan version in a name
    for e in O.effects(v2):
        assert O.effect_words(e, False) in first
    texts = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]
    texts += ["".join(o.get("data", {}).get("text/markdown", "")) + "".join(o.get("text", ""))
              for c in code for o in c.get("outputs", [])]
    words = re.compile(r"version [12]|plan v\d|\bcommit|referee|issue \d|reversed|"
                       r"\bholds\b|\bpilot\b", re.I)
    # no README vocabulary (holds / reversed) and no project history in the notebook
    hits = [w.group(0) for t in texts for w in [words.search(t)] if w]
    assert not hits, f"history in notebook 05: {hits}"
    pats = savefig_patterns(ROOT / "notebooks" / "05_uncertainty.py")
    figs = sorted(p.name for p in (ROOT / "figures").glob("05_uncertainty-*"))
    assert figs and all(any(re.fullmatch(p, f) for p in pats) for f in figs), figs


# ---- round r10: the checks behind section 4's at-chance networks, S, ρ0, the ECE's sign ----

def _check(own=(350.0, 20.0), best=("Cauchy", 25.0, 95.0), layers=None):
    layers = layers or [(1.08, 0.2, 1.24), (1.08, 0.3, 1.24), (0.10, 0.07, 1.24)]
    return {("circles", "Laplace"): {"layers": layers, "own": own, "best": best}}


def test_collapse_text_reads_the_layers_and_the_objective():
    text = U.collapse_text(_check(), 500, 2000)
    assert text.startswith("**Why the network at chance sits there**")
    assert "q's mean σ per layer is 1.08, 1.08, 0.10, against 1.24, 1.24, 1.24" in text
    assert "Its hidden layers have collapsed onto the prior; its last layer is 12 times " \
        "narrower" in text
    assert "reaches 120.0 (25.0 + 95.0) under *Laplace*" in text
    assert "against the collapsed networks' 370.0 (350.0 + 20.0)" in text
    assert "So the KL term does not outweigh the likelihood" in text
    assert "2,000 steps did not leave" in text
    # the collapsed state better than the fitting posterior: the other reading
    text = U.collapse_text(_check(own=(100.0, 10.0)), 500, 2000)
    assert "there the KL term outweighs the likelihood" in text and "failed" not in text
    wide = _check(layers=[(0.35, 0.1, 0.39), (0.23, 0.1, 0.27), (0.10, 0.05, 0.12)])
    assert "Every layer has collapsed onto its prior" in U.collapse_text(wide, 500, 2000)
    assert U.collapse_text({}, 500, 2000) == ""


def test_prior_table_and_takeaway_follow_the_check():
    acc = _acc(0.483, 0.973)
    text = U.prior_table_text(acc, n_test=1000, steps=2000, check=_check(), n_train=500)
    assert "(1 seed, 500 training points, 2,000 steps, 1,000 test points" in text
    assert "a failed optimisation, not the KL term outweighing the likelihood" in text
    assert "cannot be told" not in text
    # "collapsed" defined where first used, and said per network from the check's layers
    assert "A layer has *collapsed onto the prior* when q's mean σ lies within a factor of " \
        "1.5 of the sd of the *Gaussian closest to the prior*" in text
    assert "Collapsed here: the hidden layers of *Laplace* on the circles. Yet a posterior" \
        in text
    assert text.index("failed optimisation") < text.index("(the layers and the objective's " \
        "values are below the weight densities)")
    both = {**_check(), ("circles", "Cauchy, s ~ half-Cauchy"): _check(
        layers=[(0.38, 0.1, 0.44), (0.25, 0.1, 0.29), (0.10, 0.05, 0.11)])[("circles", "Laplace")]}
    text = U.prior_table_text(acc, n_test=1000, steps=2000, check=both, n_train=500)
    assert "Collapsed here: the hidden layers of *Laplace* on the circles; every layer of " \
        "*Cauchy, s ~ half-Cauchy* on the circles. Yet" in text
    take = U.prior_takeaway(acc, n_test=1000, steps=2000, check=_check())
    assert take.endswith("collapsed onto the prior although a posterior that fits scores "
                         "better under the same objective: a failed optimisation.")
    take = U.prior_takeaway(acc, n_test=1000, steps=2000, check=_check(own=(100.0, 10.0)))
    assert "failed" not in take and "what the objective prefers" in take


def test_closest_sd_of_a_laplace_prior_is_its_known_value():
    import math
    from helpers.priors import FlatPrior, GaussianPrior, LaplacePrior
    assert U.closest_sd(LaplacePrior(1.0)) == pytest.approx(math.sqrt(math.pi / 2), rel=0.002)
    assert U.closest_sd(LaplacePrior(0.3)) == pytest.approx(0.3 * math.sqrt(math.pi / 2),
                                                            rel=0.002)
    assert U.closest_sd(GaussianPrior(0.5)) == pytest.approx(0.5, rel=0.002)
    assert U.closest_sd(FlatPrior()) is None


def test_neg_elbo_of_a_laplace_network_matches_the_closed_form():
    import math
    from torch.nn import functional as F
    from helpers.layers import bayes_layers
    from helpers.toy import toy_net
    torch.manual_seed(0)
    net = toy_net("Laplace")
    x, y = torch.randn(50, 2), torch.randint(0, 2, (50,))
    nll, kl = U.neg_elbo(net, net, x, y, n_samples=10, k=20000)
    closed = 0.0
    for layer in bayes_layers(net):
        mu, sd = U._q_params(layer)
        z = mu / sd
        e_abs = (sd * math.sqrt(2 / math.pi) * torch.exp(-z ** 2 / 2)
                 + mu * (1 - 2 * torch.distributions.Normal(0, 1).cdf(-z)))
        closed += float((-0.5 * torch.log(2 * math.pi * math.e * sd ** 2) + e_abs
                         + math.log(2)).sum())
    assert kl == pytest.approx(closed, rel=0.02)
    assert nll > 0 and F is not None


def test_answer_flags_a_verdict_close_to_the_threshold():
    from helpers import ood_plan as O
    v2 = _planted()
    claim = next(e["claim"] for e in O.effects(v2) if e["rival"] == "map" and e["high"])
    assert "near the 0.05 threshold" not in O.answer_text(v2, recipe=False)
    v2["mc_robustness"] = {"OOD AUROC (entropy)": {claim: {"verdicts": ["holds"] * 3,
                                                           "p_holm": [0.04, 0.03, 0.045]}}}
    text = O.answer_text(v2, recipe=False)
    e = next(e for e in O.effects(v2) if e["claim"] == claim)
    assert (f"| MAP | {O.effect_words(e, False)}: BBB better (Holm p {O._p(e['p_holm'])}, near the "
            "0.05 threshold; section 3) |") in text
    assert text.count("near the 0.05 threshold") == 1
    # the band defined once, under the table, read from the code (notebook 06's band)
    from helpers.alternatives_report import NEAR
    assert O.NEAR == NEAR
    assert text.count("*Near the threshold*: a decided verdict whose Holm p, in the test or "
                      "under another draw of the predictive samples (section 3), lies from "
                      f"{NEAR[0]:g} up to {NEAR[1]:g}.") == 1
    assert "*Near the threshold*" not in O.answer_text(_planted(), recipe=False, v3=False)
    assert "close to the threshold" not in O.robustness_words(v2)


def test_scores_rows_give_each_methods_number_of_samples():
    from helpers import ood_plan as O
    v2 = _planted()
    header, rows = O.scores_rows(v2, ("ece",), samples={"bbb": 20, "mc_dropout": 20,
                                                        "ensemble": 5, "map": 1})
    assert header == ["method", "S", "ECE"]
    assert {r[0]: r[1] for r in rows} == {"MAP": "1", "MC dropout": "20",
                                          "deep ensemble (5)": "5", "BBB": "20"}
    assert O.scores_rows(v2, ("ece",), samples={})[1][0][1] == "—"


def test_ece_sign_words_name_the_worst_calibrated_method():
    from helpers import ood_plan as O
    v2 = _planted()
    text = O.ece_sign_words(v2)
    assert text.startswith("**The ECE's scale, and no sign.** All four mean ECEs lie between")
    assert "the deep ensemble" in text
    assert "lowest mean NLL" not in text  # the planted summary has no NLL


def test_edges_words_define_rho0_and_date_the_grids():
    from helpers import ood_plan as O
    from helpers import alternatives_plan as A
    grid = A.SEARCHES["bbb"]["grid"]
    edge = {"config": {k: min(v) for k, v in grid.items()}, "epochs": A.MAX_EPOCHS}
    text = O.edges_words({"map": None, "mc_dropout": None, "bbb": edge})
    r = min(grid["rho_init"])
    import math
    assert f"starts every σ at {math.log1p(math.exp(r)):.1g}" in text
    assert "before any test number of these runs was seen" in text
    assert "final runs" not in text


def _small_prior_map():
    """(figure, x, y): helpers.toy.prior_maps on one untrained net and 30 random points."""
    import matplotlib
    matplotlib.use("Agg")
    from helpers.toy import LIMS, prior_maps, toy_net
    torch.manual_seed(0)
    x, y = torch.randn(30, 2), torch.randint(0, 2, (30,))
    return prior_maps({"Normal": toy_net("Normal")}, LIMS["circles"], x, y, n_samples=3), x, y


def test_mark_far_and_prior_curves_are_drawn():
    import matplotlib.pyplot as plt
    from helpers.toy import LIMS, prior_maps, toy_net
    fig, x, y = _small_prior_map()
    try:
        before = sum(len(ax.collections) for ax in fig.axes)
        U.mark_far(fig, x, LIMS["circles"])
        assert sum(len(ax.collections) for ax in fig.axes) > before
        assert "0.5 from the nearest training point" in fig.legends[0].get_texts()[-1].get_text()
    finally:
        plt.close(fig)
    fig = prior_maps({"Normal": toy_net("Normal"), "Laplace": toy_net("Laplace")},
                     LIMS["circles"], x, y, n_samples=3)
    try:
        U.style_maps(fig, x, LIMS["circles"], U.at_chance(
            {("circles", "Normal"): 0.99, ("circles", "Laplace"): 0.49}, "circles", 1000))
        titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
        assert titles.count("Laplace\n(at chance)") == 2 and titles.count("Normal") == 2
    finally:
        plt.close(fig)
    draws = {("circles", "Laplace"): 0.1 * torch.randn(10000),
             ("circles", "Normal"): torch.randn(10000)}
    fig = U.last_layer_figure_full(draws, priors=U.prior_densities(["Laplace", "Normal", "flat"]))
    try:
        ax = fig.axes[0]
        assert sum(1 for ln in ax.lines if ln.get_linestyle() == "--") == 2
        assert ax.get_ylim()[0] > 1e-6  # the draws, not the priors' far tails, set the bottom
    finally:
        plt.close(fig)
    assert set(U.prior_densities(["flat", "Normal, s ~ half-Cauchy", "Cauchy"])) == {"Cauchy"}


def test_collapse_check_runs_on_the_committed_networks(committed):
    import helpers as H
    from helpers.toy import build_toy
    rec = H.load_results("05_uncertainty", "priors_2d")
    toy = build_toy(rec["profile"], rec["config"]["n_train"], rec["config"]["steps"],
                    seed=rec["seed"])
    models, acc, data = toy
    check = U.collapse_check(models, data, acc, rec["config"]["n_test"])
    assert ("circles", "Laplace") in check
    c = check[("circles", "Laplace")]
    assert c["layers"][0][0] > 0.5 > c["layers"][-1][0]  # hidden at the prior, last narrow
    text = U.collapse_text(check, rec["config"]["n_train"], rec["config"]["steps"])
    assert f"{sum(c['own']):.1f}" in text


def test_cost_words_use_notebook_06s_training_time_measure():
    from helpers import ood_plan as O
    # train_s (training loops), not process_wall_s (which includes test-time scoring)
    recs = {(m, k): {"train_s": 360.0, "process_wall_s": 9e9} for m in ("map", "bbb", "ivon")
            for k in (0, 1)}
    recs[("bbb", 1)]["train_s"] = 1080.0  # ratio to MAP per seed: 1 and 3, mean 2.0
    # the searches in notebook 06's measure (runtime_text): each trial's process wall time,
    # the row's training loop only where a record lacks it
    text = O.cost_words(recs, {"map": [{"row": {"wall_s": 1800.0}, "process_wall_s": 2700.0},
                                       {"row": {"wall_s": 1800.0}}], "bbb": []})
    assert text.startswith("**Training time** (the training loops alone, one CPU thread per "
                           "run, as notebook 06's cost column counts it), summed over the 2 "
                           "seeds: MAP 0.20 hours and BBB 0.40")  # IVON not here
    assert ("MAP's network of the same seed (the mean of the 2 per-seed ratios, as in notebook "
            "06's cost column, so not the ratio of the summed hours): BBB 2.0×") in text
    assert "trains none" not in text  # cell 0 says so
    assert "The searches' 2 trials took 1.2 hours more" in text  # (2700 + 1800) s
    assert "ensemble" not in text
    assert O.cost_words({}, {}) == ""


def test_cost_words_ratios_match_notebook_06s_cost_column(committed):
    """Notebook 05's cost sentence and notebook 06's table give the same ratios to MAP."""
    from helpers import ood_plan as O
    from helpers.alternatives_report import load_summary
    v3 = load_summary()
    if v3 is None:
        pytest.skip("no notebook 06 summary")
    text = O.cost_words()
    for m in ("mc_dropout", "ensemble", "bbb"):
        r = v3["cost"][m]["train_ratio_to_map"]
        assert f"{O.NOUNS[m]} {r:.1f}×" in text
    assert "the deep ensemble's hours count its five networks" in text


# ---- round r14: σ learned, the recipes' priors, the under-fitted 2-D network, captions ----

def test_sigma_words_read_the_sigma_check():
    from helpers import ood_plan as O
    v2 = {"seeds": list(range(10)),
          "table": {"bbb": {"full": {"auroc_mi": {"mean": 0.9204}}}}}
    lay = lambda med: {"sigma_q": [0.001, med, 0.05]}  # noqa: E731
    check = {"seeds": {"0": {"sigma_start": 0.000911, "shifted_uniformly": False,
                             "layers": {"0": lay(0.0025), "2": lay(0.027)}},
                       "1": {"sigma_start": 0.000911, "shifted_uniformly": False,
                             "layers": {"0": lay(0.0031)}}}}
    text = O.sigma_words(v2, check, nb01=([1.05, 1.06], [85.0, 326.0]), sigma2=0.00248)
    assert text.startswith("**Did BBB's σ learn, or stay at its start?** (The networks are not "
                           "stored, so seeds 0 and 1 of the 10 runs were trained again to read "
                           "σ.) By notebook 01's rule it learned.")  # no "reproduced" unchecked
    assert "ends at 0.0025–0.027 (in 1 of the 3 layer readings it sits at the prior's narrow " \
        "σ₂ = e⁻⁶ ≈ 0.0025), its 95th percentile at 0.05–0.05, from 0.0009 at the start" in text
    assert "not a point estimate is its AUROC from the mutual information alone, 0.920" in text
    # with ρ's drift recorded, the rule's two numbers and their ratio, beside notebook 01's
    for k, r in check["seeds"].items():
        for lay_ in r["layers"].values():
            lay_["rho_drift_q"] = [1.02, 4.5] if k == "0" else [1.03, 4.4]
    for r in check["seeds"].values():
        r["reproduced"] = {"exact": True}
    text = O.sigma_words(v2, check, nb01=([1.05, 1.06], [85.0, 326.0]), sigma2=0.00248)
    assert "trained again to read σ, reproducing their stored scores exactly.)" in text
    # three plain statements: the rule's reading, how weak it is (1.06 explained), the MI
    assert ("- *The rule's reading.* Here the ratio of the two is 4.27–4.41 (4.4–4.5 against "
            "1.02–1.03): above 1.1 in every rerun, so σ learned.\n- *But weakly.* Notebook "
            "01's learned runs have ratios of 85–326, its runs that shifted uniformly at most "
            "1.06; any threshold from 1.06 to 4.27 sorts every run of notebooks 01 and 06 the "
            "same way, and one above 4.27 would call this σ shifted uniformly.") in text
    assert "\n- *The stronger evidence* that this BBB is not a point estimate" in text
    # a ratio as large as notebook 01's learned runs': no warning
    assert "But weakly" not in O.sigma_words(
        v2, check, nb01=([1.05], [3.0]), sigma2=0.00248)
    check["seeds"]["1"]["shifted_uniformly"] = True
    assert "not above 1.1 in every rerun, so σ did not always learn." in O.sigma_words(
        v2, check, nb01=([1.05], [85.0]))
    for r in check["seeds"].values():  # without ρ's drift: the rule's verdict alone
        for lay_ in r["layers"].values():
            del lay_["rho_drift_q"]
    assert "Not in every rerun, by notebook 01's rule, did it learn." in O.sigma_words(
        v2, check, nb01=([1.05], [85.0]))
    assert O.sigma_words(v2, {"seeds": {}}) == ""


def test_recipe_text_names_the_priors_pi_where_they_differ():
    from helpers import ood_plan as O
    v2 = {"table": {"bbb": {"full": {"test_error": {"mean": 0.0186}}}}}
    row = {"mean": 0.0148, "epochs": 20, "recipe": {
        "init_from": "sgd", "init_epochs": 30, "lr": 0.001, "lr_decay": 0.955, "samples": 2,
        "rho_init": -6.0, "pi": 0.25}}
    setting = {"epochs": 60, "lr": 0.0003, "samples": 1, "rho_init": -7.0, "pi": 0.5}
    text = O.recipe_text(v2, row, setting)
    assert "its scale-mixture prior has π = 0.25" in text and "and π = 0.5," in text
    assert "π" not in O.recipe_text(v2, row, dict(setting, pi=0.25))


def test_appendix_gives_the_network_behind_the_others_a_bullet():
    acc = {("moons", p): a for p, a in (("Normal", 0.969), ("Laplace", 0.971),
                                         ("Laplace, s ~ half-Cauchy", 0.876))}
    acc.update({("circles", "Normal"): 0.992, ("circles", "Laplace"): 0.5})
    text = U.appendix_text(acc, 1000, 2000, {})
    assert ("- **Fitted, but behind the others.** *Laplace, s ~ half-Cauchy* on the moons "
            "(0.876, against 0.969–0.971 for the other priors there) fits the data only "
            "roughly: see its map in Figure 5.3.") in text
    assert "on the circles stays at chance (about 0.5 everywhere; the circles' maps are not " \
        "drawn)" in text
    text = U.appendix_text(acc, 1000, 2000, {}, maps=())
    assert "only roughly." in text and "Figure 5.3" not in text
    # the failed optimisation with its numbers: own −ELBO against the best fitting posterior's
    text = U.appendix_text(acc, 1000, 2000, {}, check=_check())
    # no "optimum" for a value that a lower one beats; which objective is scored
    assert ("Plug the posterior of the *Cauchy*-prior network that fit the circles into each "
            "failed network's own loss (its negative ELBO, lower is better): it scores lower "
            "than the point where that network's training ended (*Laplace*: 120.0 against "
            "370.0). A better point existed under each of these priors, so the optimiser, not "
            "the prior, failed: the prior did not outweigh the data.") in text
    assert "optimum" not in text
    two = _check() | {("moons", "Cauchy"): {"layers": [], "own": (50.0, 10.0),
                                            "best": ("Normal", 20.0, 5.0)}}
    assert ("a posterior that fits the same data into each failed network's own loss (its "
            "negative ELBO, lower is better): it scores lower than the point where that "
            "network's training ended (*Laplace* on the circles: the *Cauchy* network's 120.0 against "
            "370.0; *Cauchy* on "
            "the moons: the *Normal* network's 25.0 against 60.0)") in U._elbo_pairs(two)


def test_every_figure_of_notebook_05_has_its_numbered_caption():
    import re

    from helpers import ood_plan as O
    src = (ROOT / "notebooks" / "05_uncertainty.py").read_text()
    names = re.findall(r'H\.savefig\(fig, NB, f?"([^"]+)"\)', src)
    assert names == ["ood-scores", "ood-differences", "priors-{ds}"]
    for name in ("ood-scores", "ood-differences", "priors-moons"):
        assert O.caption(name).startswith("**Figure 5.")
    assert src.count("O.caption(") == 3
    assert [O.caption(n)[:13] for n in O.CAPTIONS] == [
        "**Figure 5.1.", "**Figure 5.2.", "**Figure 5.3."]


# ---- round r12: Holm's bar given the family's other p-values, and the AUROC family shown ----

def test_needed_difference_follows_the_step_down_of_the_other_claims():
    """The bar a claim must pass depends on how many of its family's other claims pass before
    it: planted ECE families where that bar is neither alpha/m nor alpha, checked against
    helpers.stats.holm itself, and the difference whose paired-t p meets the bar."""
    from helpers import ood_plan as O
    from helpers import stats
    v2 = _planted()
    e = next(e for e in O.effects(v2) if e["rival"] == "map" and not e["high"])
    fam = v2["families"]["test ECE"]
    others = [c for c in fam if c != e["claim"]]
    # (the other two claims' p) -> (bar, claims left at the claim's step)
    cases = {(0.001, 0.03): (0.05 / 2, 2),   # one passes at 0.05/3, the second stops the steps
             (0.001, 0.002): (0.05, 1),      # both pass: the last step's bar
             (0.2, 0.3): (0.05 / 3, 3)}      # none passes: the first step's
    for ps, (want, k) in cases.items():
        for c, p in zip(others, ps):
            fam[c]["t_test"] = {**fam[c]["t_test"], "p": p}
        need, bar, got_k = O.needed_difference(v2, e, v3=False)
        assert bar == pytest.approx(want, rel=1e-9) and got_k == k
        for p, holds in ((0.999 * bar, True), (1.001 * bar, False)):
            assert (stats.holm([p, *ps])[0] < 0.05) is holds, (ps, p)
        t = need / (e["sd_diff"] / e["n"] ** 0.5)
        assert 2 * stats.t_sf(t, e["n"] - 1) == pytest.approx(bar, rel=1e-6)


def _v3_with(v2, laplace_p=0.5, laplace_nll=0.08, map_nll=0.06, laplace_diff=0.033):
    """Notebook 06's summary around ``v2``: its AUROC claims and one more, BBB against the
    all-layer KFAC Laplace fit (p ``laplace_p``; Laplace − BBB ``laplace_diff``, interval
    ±0.015 around it), whose NLL against MAP's makes it a failed fit or not."""
    fam = "OOD AUROC (entropy)"
    claims = dict(v2["families"][fam])
    claims["laplace_kron < bbb on auroc_entropy"] = {
        "t_test": {"p": laplace_p, "mean_diff": laplace_diff,
                   "ci": [laplace_diff - 0.015, laplace_diff + 0.015]}, "on": "subset"}
    nll = {m: {"subset": {"nll": {"seeds": list(range(10)), "mean": v,
                                  "per_seed": [v + 0.001 * (i % 3) for i in range(10)]}}}
           for m, v in (("laplace_kron", laplace_nll), ("map", map_nll))}
    return {"families": {fam: claims}, "table": nll}


def test_family_text_lists_the_shared_family_and_its_failed_fits():
    from helpers import ood_plan as O
    v2 = _planted()
    v3 = _v3_with(v2)
    ps = O.family_ps(v2, "OOD AUROC (entropy)", v3)
    assert len(ps) == 4 and ps["laplace_kron < bbb on auroc_entropy"] == 0.5
    text = O.family_text(v2, v3)
    assert text.startswith("**The AUROC family.** Holm's correction for the AUROC claims runs "
                           "over 4 claims: BBB against this notebook's 3 rivals and against "
                           "the 1 other method of [notebook 06]")
    # r19: a table in the order of the p-values, each step with its bar and outcome
    rows = [r for r in text.split("\n") if r.startswith("| ") and r[2].isdigit()]
    assert len(rows) == 4 and "| 3 | all-layer KFAC Laplace† | subset ‡ | −0.033 | 0.5 | " \
        "0.05/2 = 0.025 | no: the steps stop here |" in rows and rows[-1].endswith("not reached |")
    assert "† A *failed fit*" in text and "set after the test numbers" in text
    # the all-layer claim is compared on the plan's subset, and the text says so
    assert "‡ Compared on a subset of 2,000 MNIST and 2,000 Fashion-MNIST test images" in text
    # each claim with its direction and size: BBB − rival, signed as the effects are
    e = next(e for e in O.effects(v2) if e["rival"] == "map" and e["high"])
    p_map = O.family_ps(v2, e["family"], v3)[e["claim"]]
    row = next(r for r in rows if "| MAP |" in r)
    assert f"| {O._signed(e['diff'], 3)} | {O._p(p_map)} |" in row
    # notebook 06's methods are defined before the table
    assert "- *all-layer KFAC Laplace*, every weight, each layer's curvature approximated as " \
        "a Kronecker product." in text.split("| step")[0]
    # the failed fit above BBB: with its interval after the family, one clause in the answer
    out = O.outside_text(v2, v3)
    assert out == ("**A failed fit above BBB.** All-layer KFAC Laplace (BBB − it −0.033 "
                   "[−0.048, −0.018], on the subset ‡) scores a higher AUROC than BBB (the "
                   "interval excludes zero). No verdict is given against a failed fit.")
    # a failed fit whose claim passes its Holm step: what the claim would read without the
    # rule, set after the test numbers, is said (r19)
    v3p = _v3_with(v2)
    v3p["families"]["OOD AUROC (entropy)"]["laplace_kron < bbb on auroc_entropy"]["t_test"][
        "p"] = 1e-9
    out = O.outside_text(v2, v3p)
    assert out.endswith("No verdict is given against a failed fit; without that rule, set after "
                        "the test numbers, the claim against all-layer KFAC Laplace (step 1 of "
                        "the table) would pass its Holm step and read *BBB worse*.")
    assert "| 1 | all-layer KFAC Laplace† |" in O.family_text(v2, v3p) and \
        "yes: no verdict (a failed fit †)" in O.family_text(v2, v3p)
    answer = O.answer_text(v2, recipe=False, v3=v3)  # the failed fits stay in section 3
    assert out not in answer and "−0.048" not in answer and "failed" not in answer
    assert O.outside_text(v2, _v3_with(v2, laplace_nll=0.05)) == ""  # not failed: a verdict
    assert O.outside_text(v2, _v3_with(v2, laplace_diff=-0.033)) == ""  # below BBB
    # above BBB in mean only: said apart from a clear one
    assert O.outside_text(v2, _v3_with(v2, laplace_diff=0.010)) == (
        "**A failed fit above BBB.** All-layer KFAC Laplace (BBB − it −0.010 [−0.025, +0.005], "
        "on the subset ‡) is higher in mean only (the interval contains zero). No verdict is "
        "given against a failed fit.")
    # the family's other claim changes the bar of a claim not resolved
    e = next(e for e in O.effects(v2) if e["rival"] == "ensemble" and e["high"])
    # the family's fourth claim fails at its step, so the bar of the claim left open moves
    assert O.needed_difference(v2, e, v3)[1] < O.needed_difference(v2, e, False)[1]
    fits = O.family_text(v2, _v3_with(v2, laplace_nll=0.05))  # better than MAP: not failed
    assert "†" not in fits and "| all-layer KFAC Laplace | subset ‡ |" in fits
    assert O.family_text(v2, False) == ""  # this notebook's three alone: nothing to add


def test_notebook_05_stays_under_5000_words():
    from test_rendered_01_r10 import rendered_words
    n = rendered_words(ROOT / "notebooks" / "05_uncertainty.ipynb")
    assert 1000 < n <= 5000  # issue 52: each notebook at most 5,000 rendered words


# ---- round r16: the answer on the first screen, the terms it uses defined above it ----

def test_answer_is_on_the_first_screen_and_its_terms_come_first():
    """Only the question and the answer's terms come before the answer (a screen, not a page);
    NLL, which the answer's lead uses, is defined there; the runtime and the numbering note
    wait below the departures box."""
    nb = json.loads((ROOT / "notebooks" / "05_uncertainty.ipynb").read_text())
    first, answer = nb["cells"][0], nb["cells"][1]
    assert first["cell_type"] == "markdown" and answer["cell_type"] == "code"
    text = "".join(first["source"])
    assert len(text.split()) <= 250, len(text.split())
    for term in ("*MAP*", "*MC dropout*", "*Deep ensemble*", "*AUROC*", "*ECE*", "*NLL*",
                 "grey images of clothing"):
        assert term in text, term
    assert "numbered by notebook" not in text
    lead = "".join(answer["outputs"][0]["data"]["text/markdown"]).split("\n\n")[0]
    assert lead.startswith("**The answer:** ") and "test NLL" in lead


# ---- round r18: NLL in the answer's table, near flags in Table 5.3, one colour meaning ----

def _nll_summary():
    """Notebook 06's summary, planted: three test-NLL claims, MC dropout's near the threshold
    under another draw of the predictive samples."""
    fam = {f"bbb < {r} on nll": {"verdict": w, "p_holm": p, "family_size": 7,  # BBB − rival
                                 "t_test": {"mean_diff": d, "ci": [d - 1e-3, d + 1e-3]}}
           for r, w, d, p in (("map", "not resolved at 10 seeds", -0.002, 0.24),
                              ("mc_dropout", "reversed", 0.005, 0.004),
                              ("ensemble", "reversed", 0.0055, 0.001))}
    return {"table": {}, "families": {"test NLL": fam},
            "mc_robustness": {"test NLL": {"bbb < mc_dropout on nll": {"p_holm": [0.03]}}}}


def test_answer_table_gives_the_test_nll_its_own_column():
    from helpers import ood_plan as O
    v2 = _planted()
    text = O.answer_text(v2, recipe=False, v3=_nll_summary())
    lead, table, note = text.split("\n\n")[:3]
    rows = table.split("\n")
    assert rows[0].endswith("| test NLL on MNIST (lower is better; notebook 06's test) |")
    assert rows[1] == "|---|---|---|---|"
    assert rows[2].endswith("| −0.0020 [−0.0030, −0.0010]: not resolved at 10 seeds |")
    # each decided NLL verdict with its Holm p and family (r19), the near flag with the
    # largest Holm p under another draw
    assert rows[3].endswith("| +0.0050 [+0.0040, +0.0060]: BBB worse (Holm p 0.004, of 7; up "
                            "to 0.03 under other draws: near the 0.05 threshold) |")
    assert rows[4].endswith("| +0.0055 [+0.0045, +0.0065]: BBB worse (Holm p 0.001, of 7) |")
    # the NLL is no longer buried in the legend paragraph; the legend says whose test it is
    assert "On test NLL" not in note and "own Holm family" in note
    # the near flag attached to the comparison, not to the method (r19)
    assert lead.endswith("; but MC dropout and the deep ensemble beat it on test NLL (notebook "
                         "06's test; against MC dropout near the threshold).")
    # without notebook 06's summary: two columns
    assert O.answer_text(v2, recipe=False, v3=False).split("\n\n")[1].split("\n")[1] == \
        "|---|---|---|"


def test_comparisons_table_flags_the_near_threshold_verdicts():
    from helpers import ood_plan as O
    v2 = _planted()
    claim = next(e["claim"] for e in O.effects(v2) if e["rival"] == "map" and e["high"])
    plain = {r[0]: r[-1] for r in O.effects_rows(v2)[1]}
    assert "near" not in " ".join(plain.values())
    v2["mc_robustness"] = {"OOD AUROC (entropy)": {claim: {"p_holm": [0.04, 0.03, 0.045]}}}
    rows = {r[0]: r[-1] for r in O.effects_rows(v2)[1]}
    assert rows["AUROC: BBB vs MAP"] == "BBB better (near the threshold)"
    assert sum("near the threshold" in w for w in rows.values()) == 1


def test_figures_colour_as_notebook_06_does(committed):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_hex
    from helpers import alternatives_report as R
    from helpers import ood_plan as O
    assert O.method_colours() == {m: R.COLOURS[m] for m in O.ROWS}
    v2 = _planted()
    fig = O.differences_figure(v2)
    try:
        for ax, metric in zip(fig.axes, ("auroc_entropy", "ece")):
            es = [e for e in O.effects(v2) if e["metric"] == metric]
            dots = [c for c in ax.collections if c.get_offsets().shape[0] == 10]
            for e, c in zip(es, dots):  # each row's dots in its verdict's colour
                want = O.VERDICT_COLOURS.get(e["word"], O.VERDICT_COLOURS[None])
                assert to_hex(c.get_facecolor()[0], keep_alpha=False) == want.lower()
        assert "colour: the verdict" in fig.legends[0].get_title().get_text()
    finally:
        plt.close(fig)
    # notebook 06's effects figure uses the same two verdict colours
    v3 = R.load_summary()
    if v3 is None:
        pytest.skip("no notebook 06 summary")
    fig = R.effects_figure(v3)
    try:
        used = {to_hex(line.get_color()) for ax in fig.axes for line in ax.get_lines()
                if line.get_linewidth() > 2}
        assert {O.VERDICT_COLOURS["BBB better"].lower(),
                O.VERDICT_COLOURS["BBB worse"].lower()} <= used
    finally:
        plt.close(fig)


def test_unresolved_shares_are_given_per_side():
    from helpers import ood_plan as O
    v2 = _planted()
    e = next(e for e in O.effects(v2) if e["metric"] == "ece" and e["rival"] == "map")
    text = O.effects_text(v2, v3=False)
    lo, hi = e["ci"]
    means = [O._mean(v2, m, "ece") for m in ("bbb", "map")]
    for x in (-lo, hi):  # each side's share, against either mean
        pc = sorted(f"{100 * x / m:.0f}" for m in means)
        assert f"about {pc[0]}" in text


def test_std_maps_use_a_log_scale_and_the_appendix_limits_its_visual_claim():
    import matplotlib.pyplot as plt
    from matplotlib.colors import LogNorm
    from helpers import ood_plan as O
    from helpers.toy import STD_RANGE
    fig, _, _ = _small_prior_map()
    try:
        norms = [c.norm for ax in fig.axes for c in ax.collections
                 if type(c).__name__ in ("QuadContourSet", "QuadMesh")
                 and getattr(getattr(c, "cmap", None), "name", "") == "viridis"]
        assert norms and all(isinstance(n, LogNorm) for n in norms)
        assert (norms[0].vmin, norms[0].vmax) == STD_RANGE
    finally:
        plt.close(fig)
    assert f"below {STD_RANGE[0]:g} in the darkest colour" in O.caption("priors-moons")
    # the maps' claim covers the drawn data set only; the other is said not to be drawn
    stds = {("moons", p): (0.01, 0.02, 0.3, 0.2, 0.1, 0.45, 0.2) for p in ("Normal", "Cauchy")}
    stds.update({("circles", p): (0.005, 0.03, 0.3, 0.05, 0.2, 0.1, 0.3) for p in ("Normal",)})
    acc = {k: 0.97 for k in stds}
    text = U._where_text(stds, acc, 1000, ("moons",))
    assert text.startswith("On the moons (Figure 5.3) the largest std lies far from the data "
                           "on all 2 maps, where the decision boundary runs on beyond the data.")
    assert "Over all 3 BBB classifiers that fit (one seed each; the circles' maps are not " \
        "drawn), the median std is" in text
    assert "So on the moons BBB's uncertainty flags an input" in text
    assert "[notebook 02](02_regression_uncertainty.ipynb)" in text and "Figure 5" in text
    # the learned-scale objective: which s it uses is said
    check = {("circles", "Laplace, s ~ half-Cauchy"): {"layers": [], "own": (350.0, 9.7),
                                                     "best": ("Cauchy", 25.0, 96.6)}}
    assert "q(log s) keeps the failed network's width τ" in U._elbo_note(check)
    assert U._elbo_note(_check()) == "" and "q(log s)" not in U._elbo_pairs(check)


# ---- round r20: the reader's r19 items ----

def test_answer_says_the_budget_limits_every_method(committed):
    """The answer's budget sentence gives the rivals' shortfall against notebook 01 too (as
    notebook 06 does), not BBB's alone; each number read from the records."""
    from helpers import ood_plan as O
    from helpers.alternatives_report import _nb01_rivals
    v2 = O.load_summary()
    riv = _nb01_rivals(v2)
    if not riv:
        pytest.skip("no notebook 01 rows")
    text = O.answer_text(v2)
    for m, (a, b) in riv.items():
        assert f"{O.LABELS[m]} {a:.2f} % against {O.NB01_NETS[m]} {b:.2f} %" in text
    assert "so the budget limits every method" in text
    three = O.takeaways_text(v2)
    assert "weaker than notebook 01's (so is every rival here)" in three


def test_committed_answer_gives_the_nll_verdicts_holm_p():
    """The test-NLL cells of the committed answer give notebook 06's Holm p and family size
    (a near flag checkable here), read from notebook 06's summary."""
    from helpers import ood_plan as O
    from helpers.alternatives_report import load_summary
    v3 = load_summary()
    if v3 is None:
        pytest.skip("no notebook 06 summary")
    nb = json.loads((ROOT / "notebooks" / "05_uncertainty.ipynb").read_text())
    first = "".join(nb["cells"][1]["outputs"][0]["data"]["text/markdown"])
    for claim, res in v3["families"]["test NLL"].items():
        rival = O._claim(claim)[0]
        if rival in O.RIVALS and res["verdict"] != f"not resolved at {len(v3['seeds'])} seeds":
            assert f"Holm p {res['p_holm']:.2g}, of {res['family_size']}" in first, rival
