"""Notebook 04's readings rendered from its results (helpers.pruning, helpers.pruning_plan):
planted records, each with outcomes that must change the wording, and the committed results."""
import json

import pytest

from helpers import pruning as P
from helpers import pruning_plan as PP

FS = P.FRACTIONS


def _curve(values):
    """{fraction str: error} from a list over FRACTIONS (0, 50, 75, 95, 98, 99, 100)."""
    return {str(f): v for f, v in zip(FS, values)}


FLAT = [0.0140, 0.0140, 0.0141, 0.0142, 0.0143, 0.0145, 0.90]
CLIMB = [0.0140, 0.0140, 0.0141, 0.0150, 0.0200, 0.0800, 0.90]
RANDOM = [0.0140, 0.1800, 0.8300, 0.90, 0.90, 0.90, 0.90]


def _model(H, seed, snr=FLAT, mag=FLAT, rnd=RANDOM, tests=None):
    tests = tests or {f: (5, 5, 1.0) for f in ("95", "98", "99")}
    return {"H": H, "seed": seed,
            "error_at": {"snr": _curve(snr), "magnitude": _curve(mag), "random": _curve(rnd)},
            "mcnemar_snr_vs_magnitude": {f: {"only_snr_wrong": a, "only_magnitude_wrong": b,
                                             "p": p} for f, (a, b, p) in tests.items()}}


def _rec(models):
    return {"metrics": {"models": models}}


# ---- the wording's criterion ----

def test_course_state_and_words_follow_the_numbers():
    assert P.course_state(0.014, 0.0150) == "hold"
    assert P.course_state(0.014, 0.0200) == "rise"
    assert P.course_state(0.014, 0.0300) == "fail"
    curve = {f: float(v) for f, v in zip(FS, CLIMB)}
    assert P.course_words(curve) == ("holds from 50 to 95 % (1.40%–1.50%), rises at 98 % "
                                     "(2.00%) and fails at 99 % (8.00%)")
    assert P.course_words({f: float(v) for f, v in zip(FS, FLAT)}) == \
        "holds from 50 to 99 % (1.40%–1.45%)"
    assert P.held_up_to(curve) == 95
    assert P.held_up_to({f: float(v) for f, v in zip(FS, RANDOM)}) is None


# ---- Table 2 ----

def test_table2_text_follows_the_paper_up_to_where_it_parts():
    rec = _rec([_model(1200, s) for s in (0, 1)] + [_model(400, s, CLIMB, CLIMB) for s in (0, 1)])
    text = P.table2_text(rec, 400)
    # the paper's network (1.24 % -> 1.29 % at 95 %, 1.39 % at 98 %) holds to 95 % and rises at
    # 98 %; the planted 2x1200 networks hold throughout
    assert "the paper's 2×1200 network (1.24% unpruned) holds from 50 to 95 % (1.24%–1.29%) " \
           "and rises at 98 % (1.39%)" in text
    assert "ours at 2×1200 (1.40% unpruned, mean of 2 seeds) holds from 50 to 99 %" in text
    assert "follows the paper's course up to 95 % and parts from it at 98 %" in text
    assert "At 2×400 (1.40% unpruned, mean of 2 seeds) the error by SNR holds from 50 to 95 %" \
           in text and "fails at 99 % (8.00%)" in text
    assert "Removed at random, the 2×1200 error fails from 50 to 99 % (18.00%–90.00%)" in text


def test_table2_text_parts_from_the_paper_when_the_error_rises_early():
    early = [0.0140, 0.0140, 0.0160, 0.0200, 0.0300, 0.0800, 0.90]  # rises at 75 %
    text = P.table2_text(_rec([_model(1200, 0, early)]), 1200)
    assert "follows the paper's course up to 50 % and parts from it at 75 %" in text
    assert "mean of 1 seed)" in text
    assert "At 2×" not in text  # compare_H equal to the main width: one width only
    bad = [0.0140, 0.0300] + early[2:]  # fails at once
    assert "parts from the paper's course already at 50 %" in P.table2_text(
        _rec([_model(1200, 0, bad)]), 1200)
    paperlike = [0.0124, 0.0124, 0.0124, 0.0129, 0.0139, 0.0139, 0.90]
    assert "as far as the paper reports" in P.table2_text(_rec([_model(1200, 0, paperlike)]), 1200)


# ---- McNemar ----

def test_mcnemar_text_words_follow_the_tests():
    none = {f: (5, 6, 0.8) for f in ("95", "98", "99")}
    snr = {"95": (5, 6, 0.8), "98": (10, 60, 1e-4), "99": (10, 90, 2e-4)}
    mag = {"95": (5, 6, 0.8), "98": (60, 10, 1e-4), "99": (90, 10, 0.02)}
    rec = _rec([_model(1200, 0, tests=none), _model(1200, 1, tests=none),
                _model(400, 0, tests=snr), _model(400, 1, tests=snr)])
    text = P.mcnemar_text(rec)
    assert "2×1200: 95 % removed, not told apart on any of the 2 networks (p: 0.800, 0.800)" \
           in text
    assert "2×400: 95 % removed, not told apart on any of the 2 networks" in text
    assert "98 % removed, fewer errors by SNR on each of the 2 networks (p: <0.001, <0.001)" \
           in text
    assert "These are 12 tests" in text and "about 0.6 of them" in text
    text = P.mcnemar_text(_rec([_model(400, 0, tests=mag), _model(400, 1, tests=snr)]))
    assert "98 % removed, p < 0.05 on 2 of 2 networks: seed 0, fewer errors by |μ| (p: <0.001); " \
           "seed 1, fewer errors by SNR (p: <0.001)" in text
    text = P.mcnemar_text(_rec([_model(400, 0, tests=mag)]))
    assert "99 % removed, fewer errors by |μ| on the one network (p: 0.020)" in text
    assert "These are 3 tests" in text


# ---- the curves ----

def test_curves_text_follows_how_far_each_ranking_holds():
    tests = {"99": (10, 400, 1e-5)}
    rec = _rec([_model(1200, 0), _model(400, 0, CLIMB, [0.014, 0.014, 0.014, 0.0145, 0.025,
                                                        0.5, 0.9], tests=tests)])
    text = P.curves_text(rec)
    assert "already 13 times the unpruned error at 2×1200 (18.00% against 1.40%)" in text
    assert "Ranked by SNR, it holds up to 99 % at 2×1200 and up to 95 % at 2×400" in text
    assert "ranked by |μ|, it holds up to 99 % at 2×1200 and up to 95 % at 2×400" in text
    assert "2×400: SNR 8.00% against |μ| 50.00% (McNemar: fewer errors by SNR on the one " \
           "network" in text
    assert "2×1200: SNR 1.45% against |μ| 1.45% (McNemar: not told apart" in text
    early = [0.014, 0.016, 0.02, 0.03, 0.05, 0.1, 0.9]
    text = P.curves_text(_rec([_model(1200, 0, early, FLAT, rnd=[0.014, 0.028] + RANDOM[2:])]))
    assert "already 2 times the unpruned error" in text
    assert "Ranked by SNR, it holds not even at 50 % at 2×1200; ranked by |μ|, it holds up to " \
           "99 %" in text


# ---- Figure 4, the KL weighting, the takeaways ----

def _hist(modes):
    """A histogram over DB_EDGES with a triangular bump of ``height`` at each dB of ``modes``."""
    lo, hi, n = P.DB_EDGES
    width = (hi - lo) / n
    h = [0] * n
    for db, height in modes:
        c = int((db - lo) / width)
        for i in range(-12, 13):
            if 0 <= c + i < n:
                h[c + i] += max(0, height - abs(i) * height // 13)
    return h


def test_figure4_takeaway_counts_the_networks_with_the_cut_between_two_modes():
    two = {"H": 1200, "snr_hist": _hist([(-10, 1000), (5, 600)]), "cuts_db": {"75": -2.0}}
    one = {"H": 1200, "snr_hist": _hist([(-10, 1000)]), "cuts_db": {"75": -7.0}}
    assert P.cut_between_modes(two) and not P.cut_between_modes(one)
    assert P.figure4_takeaway([two, two]).endswith(
        "is reproduced: it lies between two modes on 2 of the 2 networks at 2×1200.")
    assert "is not reproduced: it lies between two modes on 0 of the 1 network at 2×1200" in \
        P.figure4_takeaway([one])
    assert "reproduced on some networks only" in P.figure4_takeaway([two, one])
    rec = {"metrics": {"models": [{**one, "error_at": {"snr": {"0": 0.01, "95": 0.011}}}]}}
    assert "Figure 4's picture" in P.paper_takeaway(rec) and "0 of the 1 network " in \
        P.paper_takeaway(rec)


def test_storage_text_names_the_timed_network_only_when_the_record_does():
    rows = [{"removed": f, "dense_bytes": 4, "sparse_bytes": 1, "dense_s": 1.0, "sparse_s": 1.0}
            for f in (0, 95, 98)]
    rec = {"metrics": {"storage_and_timing": {"model": "b", "rows": rows},
                       "models": [{"H": 400, "name": "a"}, {"H": 50, "name": "b"}]}}
    assert "Stored sparse, the 2×50 network shrinks 4.0-fold" in P.storage_text(rec)
    rec["metrics"]["storage_and_timing"]["model"] = "c"
    assert "Stored sparse, the network shrinks" in P.storage_text(rec)


def test_weighting_text_says_which_density_sits_higher():
    err = {"snr": {"0": 0.015, "75": 0.016, "95": 0.04, "98": 0.25}}
    base = {"error_at": {"snr": {"0": 0.014, "75": 0.014, "95": 0.015, "98": 0.018}},
            "cuts_db": {"50": -8.0}}
    alt = {"snr_hist": _hist([(5, 100)]), "error_at": err, "cuts_db": {"50": 2.0}}
    text = P.weighting_text(base, alt)
    assert "sits higher: half its weights lie below 2.0 dB, against -8.0 dB" in text
    assert "fewer near-zero, noisy weights" in text
    assert "25.00 % against 1.80 % at 98 %" in text
    text = P.weighting_text(base, {**alt, "cuts_db": {"50": -12.0}})
    assert "sits lower: half its weights lie below -12.0 dB" in text
    assert "fewer near-zero" not in text


def _summary(v95, v98, interim=False):
    fam = {f"bbb_snr < bbb_magnitude at {f}%": {"verdict": v} for f, v in ((95, v95), (98, v98))}
    return {"interim": interim, "missing": ["x"] if interim else [],
            "families": {"error after pruning": fam}}


def test_snr_vs_magnitude_takeaway_weighs_mcnemar_and_the_plan():
    none = {f: (5, 6, 0.8) for f in ("95", "98", "99")}
    snr = {"95": (5, 6, 0.8), "98": (10, 60, 1e-4), "99": (10, 90, 2e-4)}
    snr_all = {"95": (5, 40, 1e-3), "98": (10, 60, 1e-4)}
    mixed = _rec([_model(1200, 0), _model(400, 0, tests=snr)])
    text = PP.snr_vs_magnitude_takeaway(mixed, _summary("not resolved at 3 seeds",
                                                        "not resolved at 3 seeds"))
    assert text.startswith("- Against ranking by |μ|, the evidence is mixed: SNR ahead in some")
    assert "At 2×400, McNemar's test per network (uncorrected): 95 % removed, not told apart" \
           in text and "98 % removed, fewer errors by SNR on the one network" in text
    assert "At 2×1200, plan v2's paired t-test over 3 seeds (Holm; numbers seen before the " \
           "plan): 95 % removed, not resolved at 3 seeds" in text
    assert "2×1200, McNemar" not in text  # the plan's width is read from the plan
    quiet = _rec([_model(1200, 0), _model(400, 0, tests=none)])
    assert "no difference between the two rankings is resolved" in \
        PP.snr_vs_magnitude_takeaway(quiet, _summary("not resolved", "not resolved"))
    every = _rec([_model(1200, 0), _model(400, 0, tests=snr_all)])
    assert "every test here favours SNR" in PP.snr_vs_magnitude_takeaway(
        every, _summary("holds", "holds"))
    assert "the evidence conflicts" in PP.snr_vs_magnitude_takeaway(
        every, _summary("reversed", "not resolved"))
    interim = PP.snr_vs_magnitude_takeaway(quiet, _summary("holds", "holds", interim=True))
    assert "pending (1 networks to train)" in interim and "no difference" in interim
    no_plan = PP.snr_vs_magnitude_takeaway(quiet)  # without plan v2: McNemar at every width
    assert "At 2×1200, McNemar" in no_plan and "plan v2" not in no_plan


# ---- the committed results ----

def test_the_readings_run_on_the_committed_results(monkeypatch):
    monkeypatch.setenv("BBB_RESULTS_DIR", "/work/main/results")
    from helpers.utils import results_dir
    path = results_dir() / "04_pruning" / "snr.json"
    if not path.exists():
        pytest.skip("results/04_pruning/snr.json is not committed")
    rec = json.loads(path.read_text())
    models = rec["metrics"]["models"]
    H = models[0]["H"]
    other = next(m["H"] for m in models if m["H"] != H)
    main = [m for m in models if m["H"] == H]

    def mean(ms, kind, f):
        return f"{100 * sum(m['error_at'][kind][str(f)] for m in ms) / len(ms):.2f}%"
    t2 = P.table2_text(rec, other)
    assert f"ours at 2×{H} ({mean(main, 'snr', 0)} unpruned, mean of {len(main)} seeds)" in t2
    assert f"At 2×{other}" in t2 and "Removed at random" in t2
    mc = P.mcnemar_text(rec)
    n = len(P.mcnemar_rows(rec)[1])  # the rows of the table it reads
    assert f"These are {n} tests" in mc
    t = models[0]["mcnemar_snr_vs_magnitude"]["95"]
    assert ("<0.001" if t["p"] < 1e-3 else f"{t['p']:.3f}") in mc
    cv = P.curves_text(rec)
    assert f"SNR {mean(main, 'snr', 99)} against |μ| {mean(main, 'magnitude', 99)}" in cv
    assert f"{len(main)} networks at 2×{H}" in P.paper_takeaway(rec)
    timing = rec["metrics"]["storage_and_timing"]
    named = [m["H"] for m in models if m["name"] == timing["model"]]
    assert f"Stored sparse, the 2×{named[0]} network shrinks" in P.storage_text(rec)
    summary = PP.load_summary()
    take = PP.snr_vs_magnitude_takeaway(rec, summary)
    assert take.startswith("- Against ranking by |μ|, ")
    if summary is not None and not summary["interim"]:
        v = summary["families"]["error after pruning"]["bbb_snr < bbb_magnitude at 95%"]
        assert f"95 % removed, {v['verdict']}" in take
