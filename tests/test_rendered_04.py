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


# ---- the networks and their training time ----

def test_pruned_and_retrain_words_name_the_network_without_a_record(monkeypatch):
    rec = {"metrics": {"models": [{"H": 400, "seed": 0, "name": "a", "n_weights": 1200}],
                       "other_kl_weighting": {"H": 400, "seed": 0, "name": "b",
                                              "n_weights": 1200}}}
    assert P.pruned_words(rec) == ("Pruned: the 2×400 seed 0 network (1,200 weights) and the "
                                   "2×400 seed 0 network with the other KL weighting (section 4).")
    # the other weighting's replication seeds are named (from plan v2's summary), not its seed 0
    assert P.pruned_words(rec, [0, 1, 2]).endswith(
        "(section 4). That weighting's networks of seeds 1 and 2 are pruned by SNR only "
        "(section 4's test).")
    assert P.pruned_words(rec, [0, 3]).endswith("That weighting's network of seed 3 is pruned by "
                                                "SNR only (section 4's test).")
    named = {"metrics": {**rec["metrics"], "other_kl_weighting": {
        **rec["metrics"]["other_kl_weighting"], "kl_weighting": "blundell"}}}
    assert P.pruned_words(named).endswith("network with eq. 9's KL weights (section 4).")
    assert PP.replication_seeds({"retrained": [{"role": "blundell", "seed": 2},
                                               {"role": "sgd", "seed": 0},
                                               {"role": "blundell", "seed": 1}]}) == [1, 2]
    monkeypatch.setattr(P, "retrain_seconds", lambda r: (7200.0, ["b"]))
    text = P.retrain_words(rec)
    # 2 networks, 1 without a recorded time: the hours count the other one, and say so; the
    # start nets are counted ("each with its start net"), not "from scratch" (warm starts);
    # "together": the hours are the sum, not each network's
    assert text == ("Training time, one CPU thread each: 2.0 h for 1 of the 2 pruned networks "
                    "together, each with its start net (no recorded time for the other).")
    assert "results/" not in text and "from scratch" not in text  # no paths; warm starts
    assert "network(s)" not in text
    monkeypatch.setattr(P, "retrain_seconds", lambda r: (7200.0, ["x", "y"]))
    assert P.retrain_words(rec).endswith("(no recorded time for the others).")
    monkeypatch.setattr(P, "retrain_seconds", lambda r: (3600.0, []))
    assert P.retrain_words(rec).endswith("1.0 h for the 2 pruned networks together, each with "
                                         "its start net.")
    monkeypatch.setattr(P, "_run_cpus", lambda r: ["AMD EPYC"])  # the machine is not named
    assert "EPYC" not in P.retrain_words(rec)
    rec["metrics"]["other_kl_weighting"] = None
    assert "other KL weighting" not in P.pruned_words(rec)
    # several seeds of a width: one group, its size said once
    rec["metrics"]["models"] = [{"H": 1200, "seed": s, "name": f"w{s}", "n_weights": 9000}
                                for s in (0, 1, 2)] + [{"H": 400, "seed": 0, "name": "a",
                                                        "n_weights": 1200}]
    assert P.pruned_words(rec) == ("Pruned: the 2×1200 networks of seeds 0, 1, 2 (9,000 weights "
                                   "each) and the 2×400 seed 0 network (1,200 weights).")
    rec["metrics"]["models"][1]["n_weights"] = 8000
    assert "(9,000, 8,000, 9,000 weights)" in P.pruned_words(rec)


# ---- the wording's criterion ----

def test_course_state_and_words_follow_the_numbers():
    assert P.course_state(0.014, 0.0150) == "flat"
    assert P.course_state(0.014, 0.0200) == "rise"
    assert P.course_state(0.014, 0.0300) == "break"
    curve = {f: float(v) for f, v in zip(FS, CLIMB)}
    # the first part says what its numbers are: fractions removed, then test errors; "1.1×" is
    # a ratio to the unpruned error, so "%" means one thing only
    assert P.course_words(curve) == ("stays within 1.1× from 50 to 95 % removed (error 1.40–1.50 %), "
                                     "rises at 98 % (2.00 %) and breaks down at 99 % (8.00 %)")
    assert P.course_words({f: float(v) for f, v in zip(FS, FLAT)}) == \
        "stays within 1.1× from 50 to 99 % removed (error 1.40–1.45 %)"
    assert P.flat_up_to(curve) == 95
    assert P.flat_up_to({f: float(v) for f, v in zip(FS, RANDOM)}) is None
    assert "holds" not in P.criterion_words()  # "holds" is kept for the plans' verdicts


# ---- Figure 4 ----

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


TWO = {"H": 1200, "seed": 0, "n_weights": 10 ** 6, "snr_hist": _hist([(-10, 1000), (5, 600)]),
       "cuts_db": {"50": -9.0, "75": -2.0}}
ONE = {"H": 1200, "seed": 1, "n_weights": 10 ** 6, "snr_hist": _hist([(-10, 1000)]),
       "cuts_db": {"50": -10.0, "75": -7.0}}


def test_figure4_text_says_beside_the_figure_on_how_many_networks_the_cut_lies_between_peaks():
    assert P.cut_between_modes(TWO) and not P.cut_between_modes(ONE)
    text = P.figure4_text(ONE, [ONE, ONE])
    assert text.startswith("**What it shows.**\n\n- Of this network's 1,000,000 weights")
    assert "the 75 % cut-off in a dip between two peaks of the density, is not reproduced " \
           "here. A cut-off counts as lying between two peaks when the density there (smoothed " \
           "over ±1 dB) is below the highest density on each side of it. That is so on 0 of " \
           "the 2 networks at 2×1200 (seeds 1, 1; the figure shows seed 1)." in text
    assert "- The cut-offs that remove 50 and 75 % of the weights lie at -10.0 and -7.0 dB: all " \
           "below 0 dB." in text
    assert "leaves out" not in text  # no weight outside the histogram's range
    text = P.figure4_text({**TWO, "snr_outside": 1234, "cuts_db": {"50": -9.0, "75": 2.0}},
                          [TWO])
    assert "is reproduced here." in text and "That is so on 1 of the 1 network at " \
           "2×1200 (seed 0;" in text
    assert "This share is counted on the histogram, which leaves out the 1,234 weights outside " \
           "[-40, 30] dB." in text
    assert "lie at -9.0 and 2.0 dB." in text and "all below" not in text
    assert "(smoothed over ±2 dB)" in P.figure4_text(TWO, [TWO], smooth_db=2.0)
    assert "reproduced on some networks only" in P.figure4_text(TWO, [TWO, ONE])


def test_figure4_takeaway_counts_the_networks_with_the_cut_between_two_peaks():
    assert P.figure4_takeaway([TWO, TWO]) == (
        "Figure 4's two-peak picture is reproduced (the 75 % cut-off lies between two peaks "
        "on 2 of the 2 networks at 2×1200).")
    assert "is not reproduced (the 75 % cut-off lies between two peaks on 0 of the 1 network " \
           "at 2×1200)" in P.figure4_takeaway([ONE])
    assert "reproduced on some networks only" in P.figure4_takeaway([TWO, ONE])


# ---- Table 2 and the curves ----

def test_table2_text_follows_the_paper_up_to_where_it_parts():
    rec = _rec([_model(1200, s) for s in (0, 1)] + [_model(400, s, CLIMB, CLIMB) for s in (0, 1)])
    text = P.table2_text(rec, 400)
    # the paper's network (1.24 % -> 1.29 % at 95 %, 1.39 % at 98 %) stays within 10 % to 95 % and
    # rises at 98 %; the planted 2x1200 networks stay flat throughout
    assert "- Ranked by SNR, the paper's 2×1200 network (1.24% unpruned) stays within 1.1× from 50 " \
           "to 95 % removed (error 1.24–1.29 %) and rises at 98 % (1.39 %)." in text
    assert "- Ours at 2×1200 (1.40% unpruned, 2 seeds) stays within 1.1× from 50 to 99 %" in text
    assert "It follows the paper's course up to 95 %; at 98 % the paper's error rises, ours " \
           "stays within 1.1×." in text
    assert "- Ours at 2×400 (1.40% unpruned, 2 seeds), ranked by SNR, stays within 1.1× from 50 to " \
           "95 %" in text and "breaks down at 99 % (8.00 %)" in text
    assert "- Ranked by |μ|, the 2×400 error stays within 1.1× from 50 to 95 %" in text
    # every width's error is quoted beside its ratio (one decimal: 18.00 / 1.40 = 12.9)
    assert "- Removed at random, with 50 % of the weights gone the error is already 12.9 times " \
           "the unpruned error at 2×1200 (18.00% against 1.40%) and 12.9 times at 2×400 " \
           "(18.00% against 1.40%)" in text
    assert "holds" not in text and "fails" not in text


def test_table2_text_parts_from_the_paper_when_the_error_rises_early():
    early = [0.0140, 0.0140, 0.0160, 0.0200, 0.0300, 0.0800, 0.90]  # rises at 75 %
    text = P.table2_text(_rec([_model(1200, 0, early, rnd=[0.014, 0.028] + RANDOM[2:])]), 1200)
    assert "It follows the paper's course up to 50 %; at 75 % the paper's error stays within 1.1×, " \
           "ours rises." in text
    assert "(1.40% unpruned, 1 seed)" in text
    assert "At 2×" not in text and "Ranked by |μ|" not in text  # one width only
    assert "already 2.0 times the unpruned error at 2×1200 (2.80% against 1.40%)." in text
    bad = [0.0140, 0.0300] + early[2:]  # breaks down at once
    assert "It parts from the paper's course already at 50 %: the paper's error stays within 1.1×, " \
           "ours breaks down." in P.table2_text(_rec([_model(1200, 0, bad)]), 1200)
    paperlike = [0.0124, 0.0124, 0.0124, 0.0129, 0.0139, 0.0139, 0.90]
    assert "as far as the paper reports (98 %)" in P.table2_text(
        _rec([_model(1200, 0, paperlike)]), 1200)


# ---- McNemar ----

NONE = {f: (5, 6, 0.8) for f in ("95", "98", "99")}
SNR = {"95": (5, 6, 0.8), "98": (10, 60, 1e-4), "99": (10, 90, 2e-4)}
MAG = {"95": (5, 6, 0.8), "98": (60, 10, 1e-4), "99": (90, 10, 0.02)}


def test_mcnemar_text_groups_the_fractions_with_the_same_outcome():
    rec = _rec([_model(1200, 0, tests=NONE), _model(1200, 1, tests=NONE),
                _model(400, 0, tests=SNR), _model(400, 1, tests={**SNR, "98": (10, 60, 0.004)})])
    text = P.mcnemar_text(rec)
    assert "- 2×1200: at 95, 98 and 99 % removed, not told apart on any of the 2 networks." \
           in text
    assert "- 2×400: at 95 % removed, not told apart on any of the 2 networks; at 98 and 99 %, " \
           "fewer errors by SNR on each of the 2 networks (every p ≤ 0.004)." in text
    assert "- These are 12 tests: if the two rankings were equivalent, about 0.6 of them" in text
    text = P.mcnemar_text(_rec([_model(400, 0, tests=MAG), _model(400, 1, tests=SNR)]))
    assert "at 98 %, p < 0.05 on 2 of the 2 networks: seed 0, fewer errors by |μ| " \
           "(p < 0.001); seed 1, fewer errors by SNR (p < 0.001)" in text
    text = P.mcnemar_text(_rec([_model(400, 0, tests=MAG)]))
    assert "at 98 and 99 %, fewer errors by |μ| on the one network (every p ≤ 0.020)" in text
    assert "These are 3 tests" in text


def test_mcnemar_counts_split_the_significant_tests_by_direction():
    rec = _rec([_model(400, 0, tests=MAG), _model(400, 1, tests=SNR), _model(1200, 0, tests=NONE)])
    assert P.mcnemar_counts(rec, 400) == (6, {"|μ|": [(0, "98"), (0, "99")],
                                              "SNR": [(1, "98"), (1, "99")]})
    assert P.mcnemar_counts(rec, 1200) == (3, {})


# ---- storage, the KL weighting, the paper ----

def _timing(s95, s98, s0=10.0, dense=(1.0, 1.0, 1.0)):
    return [{"removed": 0, "dense_bytes": 4, "sparse_bytes": 8, "dense_s": dense[0],
             "sparse_s": s0},
            {"removed": 95, "dense_bytes": 4, "sparse_bytes": 1, "dense_s": dense[1],
             "sparse_s": s95},
            {"removed": 98, "dense_bytes": 4, "sparse_bytes": 1, "dense_s": dense[2],
             "sparse_s": s98}]


def test_storage_text_and_table_say_the_same_pace():
    rec = {"metrics": {"storage_and_timing": {"model": "b", "rows": _timing(1.05, 0.7)},
                       "models": [{"H": 400, "seed": 0, "name": "a"},
                                  {"H": 50, "seed": 2, "name": "b"}]}}
    text = P.storage_text(rec)
    assert "- Stored sparse, the 2×50 seed-2 network shrinks 4.0-fold" in text
    # the dense times agree: the band is SAME_PACE; 1.05: about as fast; 1 / 0.7 = 1.43: faster
    assert "- Dense times (the same computation " \
           "in every row): 1.00–1.00. *About as fast*: within 1.15× of the nearest dense time;" \
           in text
    assert "about as fast as the dense one at 95 %, 1.4× faster than it at 98 %, and 10× " \
           "slower than it unpruned" in text
    header, rows = P.storage_rows(rec)
    col = header.index("sparse against every dense time")
    assert [r[col] for r in rows] == ["10× slower", "about as fast", "1.4× faster"]
    assert [r[header.index("sparse storage")] for r in rows] == \
        ["2.0× larger", "4.0× smaller", "4.0× smaller"]
    rec["metrics"]["storage_and_timing"] = {"model": "c", "rows": _timing(2.0, 1.1)}
    text = P.storage_text(rec)
    assert "Stored sparse, the network shrinks" in text
    assert "2× slower than the dense one at 95 %, about as fast as it at 98 %" in text


def test_pace_words_allow_for_the_spread_of_the_dense_times():
    # the same dense network timed at 1.0, 1.3 and 1.2 s: a 1.30× spread of noise alone
    noisy = {"metrics": {"storage_and_timing": {"rows": _timing(1.25, 0.85, 20.0,
                                                                 (1.0, 1.3, 1.2))}},
             "machine_timing": {"cpu_count": 2}}
    assert P.timing_noise(noisy["metrics"]["storage_and_timing"]["rows"]) == pytest.approx(1.3)
    text = P.storage_text(noisy)
    assert "Dense times (the same computation in every row): 1.00–1.30, a 1.30× spread of " \
           "timing noise. *About as fast*: within 1.30× of the nearest dense time;" in text
    assert "CPU" not in text  # the machine is the lab log's, not the reading's
    # 0.85 s is 1.4× below the 1.2 s of its own row but only 1.18× below the fastest dense time
    assert "about as fast as the dense one at 95 and 98 % removed, and 15–20× slower than it " \
           "unpruned" in text
    header, rows = P.storage_rows(noisy)
    assert [r[header.index("sparse against every dense time")] for r in rows] == \
        ["15–20× slower", "about as fast", "about as fast"]
    # the times in units of the fastest dense time (no absolute times of this machine), so each
    # label can be checked: 20 / 1.3 = 15, 20 / 1.0 = 20; 0.85 is within 1.3× of 1.00
    # (the unit in the headers, not only in the text below the table)
    assert [r[header.index("dense time (× fastest dense)")] for r in rows] == ["1.00", "1.30",
                                                                              "1.20"]
    assert [r[header.index("sparse time (× fastest dense)")] for r in rows] == ["20.00", "1.25",
                                                                               "0.85"]
    assert not any("ms" in h.split() or "s" in h.split() for h in header)
    # beyond the spread it is faster, by the ratios to the nearest and the farthest dense time
    fast = {"metrics": {"storage_and_timing": {"rows": _timing(1.25, 0.5, 20.0,
                                                                (1.0, 1.3, 1.2))}}}
    text = P.storage_text(fast)
    assert "about as fast as the dense one at 95 %, 2–3× faster than it at 98 %" in text
    assert P.pace_state(0.9, [1.0, 1.3], 1.3) == ("same", None, None)
    assert P.pace_state(0.7, [1.0, 1.3], 1.3)[0] == "faster"
    assert P.pace_state(1.2, [1.0, 1.3], 1.3) == ("same", None, None)  # between the dense times


def test_weighting_text_says_which_density_sits_higher():
    err = {"snr": {"0": 0.015, "75": 0.016, "95": 0.04, "98": 0.25}}
    base = {"kl_weighting": "uniform",
            "error_at": {"snr": {"0": 0.014, "75": 0.014, "95": 0.015, "98": 0.018}},
            "cuts_db": {"50": -8.0}}
    alt = {"kl_weighting": "blundell", "snr_hist": _hist([(5, 100)]), "error_at": err,
           "cuts_db": {"50": 2.0}}
    text = P.weighting_text(base, alt)
    assert "- With eq. 9's weights the SNR density sits higher: half its weights lie below " \
           "2.0 dB, against -8.0 dB with eq. 8's." in text
    assert "- Pruned by SNR, its test error is 4.00 % against 1.50 % at 95 % removed and " \
           "25.00 % against 1.80 % at 98 %; unpruned it starts higher (1.50 % against " \
           "1.40 %)." in text
    assert "pulls its weights less" not in text  # a mechanism the analysis does not test
    text = P.weighting_text(base, {**alt, "cuts_db": {"50": -12.0},
                                   "error_at": {"snr": {**err["snr"], "0": 0.013}}})
    assert "sits lower: half its weights lie below -12.0 dB" in text
    assert "unpruned it starts lower (1.30 % against 1.40 %)" in text
    header, rows = P.weighting_rows(base, alt)
    assert header == ["KL weighting", "0% removed", "75% removed", "95% removed", "98% removed"]
    assert rows[1] == ["π_i KL weights (eq. 9)", "1.50%", "1.60%", "4.00%", "25.00%"]


def test_paper_takeaway_names_the_timed_network_and_counts_figure4():
    rows = [{"removed": 95, "dense_bytes": 100, "sparse_bytes": 10}]
    rec = {"metrics": {"models": [{**ONE, "name": "x", "error_at": {"snr": {"0": 0.014,
                                                                           "95": 0.015}}}],
                       "storage_and_timing": {"model": "x", "rows": rows}}}
    text = P.paper_takeaway(rec)
    assert text.startswith("- **Against the paper's Table 2.** Our 2×1200 networks (mean of 1 "
                           "seed) start higher (1.40 % unpruned, paper 1.24 %) and change by "
                           "+0.10 pp")
    assert "stored sparse, the seed-1 network then needs 10% of the dense bytes" in text
    assert "two-peak picture is not reproduced" in text and "0 of the 1 network " in text
    rec["metrics"]["models"][0].update(TWO, name="x", error_at={"snr": {"0": 0.01, "95": 0.01}})
    text = P.paper_takeaway(rec)
    assert "start lower (1.00 %" in text and "is reproduced" in text
    rec["metrics"]["models"].append({**TWO, "seed": 2, "name": "y",
                                     "error_at": {"snr": {"0": 0.01, "95": 0.01}}})
    assert "Our 2×1200 networks (mean of 2 seeds) start lower" in P.paper_takeaway(rec)


# ---- plans v2 and v3: planted summaries ----

def _claims(verdicts, lhs=(0.014, 0.015, 0.016), rhs=(0.2, 0.21, 0.22), p=0.01):
    """{claim: result} with the given verdict per claim and the same per-seed values."""
    d = sum(a - b for a, b in zip(lhs, rhs)) / len(lhs)
    return {c: {"verdict": v, "seeds": [0, 1, 2], "lhs": list(lhs), "rhs": list(rhs),
                "p_holm": p, "t_test": {"mean_diff": d, "ci": [d - 0.01, d + 0.01]}}
            for c, v in verdicts.items()}


NR = "not resolved at 3 seeds"


def _table(**means):
    """{arm: {fraction: {seed: value}}}: every seed at ``mean`` ± 0.01, or per arm a dict
    {fraction: mean}."""
    out = {}
    for arm, m in means.items():
        by_f = m if isinstance(m, dict) else {f: m for f in FS}
        out[arm] = {str(f): {str(s): by_f.get(f, 0.5) + 0.01 * (s - 1) for s in (0, 1, 2)}
                    for f in FS}
    return out


def _v2(after, kl=("holds", "holds"), added=None, interim=False, table=None):
    fams = {"error after pruning": _claims({f"bbb_snr < {r} at {f}%": after[(r, f)]
                                            for r in PP.REFERENCES for f in PP.TESTED}),
            "error added by pruning": _claims({f"bbb_snr < {r} at {f}%":
                                               (added or after)[(r, f)]
                                               for r in PP.REFERENCES for f in PP.TESTED}),
            "KL weighting": _claims({f"uniform_snr < blundell_snr at {f}%": v
                                     for f, v in zip(PP.TESTED, kl)})}
    table = table or _table(bbb_snr=0.015, bbb_magnitude=0.016, sgd_magnitude=0.3,
                            dropout_magnitude=0.4, bbb_random={50: 0.2}, sgd_random={50: 0.03},
                            dropout_random={50: 0.02}, uniform_snr=0.016,
                            blundell_snr={0: 0.018, 95: 0.05, 98: 0.3})
    return {"version": 2, "alpha": 0.05, "interim": interim, "missing": ["x"] if interim else [],
            "families": fams, "table": table,
            "needs": {k: {"n_seeds": 3, "family_size": 2 if k == "KL weighting" else 6,
                          "t_for_smallest_p": 6.205 if k == "KL weighting" else 10.886,
                          "smallest_sign_test_p": 0.25} for k in fams}}


def _v3(v95, v98, interim=False):
    return {"version": 3, "alpha": 0.05, "interim": interim, "missing": ["y"] if interim else [],
            "families": {"against BBB's starting network": _claims(
                {f"bbb_snr < start_magnitude at {f}%": v for f, v in ((95, v95), (98, v98))},
                p=0.02)},
            "table": _table(bbb_snr=0.015, start_magnitude={0: 0.0133, 95: 0.15, 98: 0.6},
                            bbb_random=0.5, start_random=0.5),
            "needs": {"against BBB's starting network": {"n_seeds": 3, "family_size": 2,
                                                         "t_for_smallest_p": 6.205,
                                                         "smallest_sign_test_p": 0.25}},
            "retrained": []}


def _after(mag=(NR, NR), sgd=(NR, "holds"), dropout=("holds", "holds")):
    out = {}
    for r, vs in (("bbb_magnitude", mag), ("sgd_magnitude", sgd), ("dropout_magnitude", dropout)):
        for f, v in zip(PP.TESTED, vs):
            out[(r, f)] = v
    return out


def test_needs_text_says_each_requirement_once_and_the_rule_only_when_asked():
    s = _v2(_after())
    text = PP.needs_text(s, ("error after pruning", "error added by pruning"))
    assert text.startswith("**How to read the verdicts.**")
    assert text.count("|t| > 10.9 (df 2)") == 1 and "KL weighting" not in text
    assert "for the families *error after pruning* and *error added by pruning* (6 claims " \
           "each at 3 seeds)" in text
    short = PP.needs_text(s, ("KL weighting",), explain=False)
    # the bound is the first claim's in Holm's order; the degrees of freedom said in words
    assert short == ("**What a verdict needs.** *KL weighting* (2 claims, 3 seeds): the claim "
                     "with the smallest p, first in Holm's order, holds only with |t| > 6.2 "
                     "(2 degrees of freedom); later claims need less.")
    assert "How to read" not in short
    assert PP.needs_text(s).count("|t| >") == 2  # every family: two requirements


def test_reading_text_claims_no_more_than_the_verdicts():
    text = PP.reading_text(_v2(_after()))
    # the verdicts in words, grouped; the numbers are the tables' (said once)
    assert "- \"BBB by SNR has the lower error\": not resolved at 3 seeds against plain, |w| (95 % " \
           "removed), holds against plain, |w| (98 % removed); holds against dropout, |w| (95 % and " \
           "98 % removed)." in text
    assert "30.00 %" not in text and "a − b =" not in text
    # SGD at 95 %: interval [-20.50, -18.50] excludes 0, verdict not resolved: said why
    assert "- BBB, SNR |μ|/σ < plain, |w|, 95 % removed: its unadjusted interval excludes 0, but " \
           "Holm's correction over the family's 6 claims leaves it not resolved." in text
    assert "BBB, |μ|, 95 % removed [exploratory]: its" not in text  # |μ| is the answer's
    # question (2) has its one place here: the exploratory rows with their intervals, no verdict
    sig = next(x for x in text.splitlines() if x.startswith("- **Does σ help?**"))
    assert "(*exploratory*, no verdict" in sig and "SNR − |μ| at 2×1200: " in sig
    assert "not resolved" not in sig and "holds" not in sig
    assert "plan" not in text
    assert "*error added by pruning*, gives the same verdict on every claim." in text
    assert "- Removed at random (not tested), BBB's networks lose more: at half the weights " \
           "their mean error is the highest (means of 3 seeds each; BBB's is the highest on 3 " \
           "of the 3 seeds)." in text
    wide = _v2(_after())
    for c in wide["families"]["error after pruning"].values():
        c["t_test"]["ci"] = [-0.3, 0.1]
    assert "excludes 0" not in PP.reading_text(wide)
    text = PP.reading_text(_v2(_after(mag=("holds", NR)),
                               added=_after(mag=(NR, NR), sgd=(NR, NR))))
    assert "differs on BBB, SNR |μ|/σ < BBB, |μ|, 95 % removed [exploratory], " \
           "BBB, SNR |μ|/σ < plain, |w|, 98 % removed." in text
    quiet = _v2(_after(), table={**_v2(_after())["table"],
                                 **_table(bbb_random={50: 0.01})})
    assert "Removed at random" not in PP.reading_text(quiet)
    # BBB's mean is the highest, but not on every seed; the SGD arm has two seeds only
    mixed = _v2(_after())
    mixed["table"]["bbb_random"]["50"] = {"0": 0.01, "1": 0.30, "2": 0.30}
    del mixed["table"]["sgd_random"]["50"]["2"]
    assert "means of 3, 2 and 3 seeds; BBB's is the highest on 1 of the 2 seeds)." \
        in PP.reading_text(mixed)
    mixed["table"]["sgd_random"]["50"]["2"] = 0.03
    assert "means of 3 seeds each; BBB's is the highest on 2 of the 3 seeds)." in \
        PP.reading_text(mixed)
    interim = _v2(_after(), interim=True)
    assert PP.reading_text(interim) == PP.standing_text(interim)


def test_standing_text_is_one_bullet_per_family():
    text = PP.standing_text(_v2(_after()))
    assert "- *error after pruning*, is BBB pruned by SNR lower? not resolved at 3 seeds against " \
           "BBB, |μ| (95 % and 98 % removed); not resolved at 3 seeds against plain, |w| (95 % " \
           "removed), holds against plain, |w| (98 % removed); holds against dropout" in text
    assert "- *KL weighting*, do eq. 8's 1/M weights give a lower error after SNR pruning than " \
           "eq. 9's? holds (95 % and 98 % removed)." in text
    assert "not complete" in PP.standing_text(_v2(_after(), interim=True))


def test_start_reading_text_says_what_the_v3_verdicts_show():
    text = PP.start_reading_text(_v3(NR, "holds"))
    assert "plan" not in text
    # each fraction's verdict beside its effect; the claim that holds first
    r98 = _v3(NR, "holds")["families"]["against BBB's starting network"][
        "bbb_snr < start_magnitude at 98%"]
    assert ("- At 98 % removed, BBB pruned by SNR keeps a lower error than the network it "
            f"started from, pruned by |w|: 1.50 % against 60.00 %, {PP.effect_words(r98)}, "
            "holds.") in text
    assert text.index("At 98 %") < text.index("At 95 %")
    # the planted interval excludes 0: no range said; no t statistics planted: no size needed
    assert "- At 95 % removed: 1.50 % against 15.00 %, " in text and " range " not in text
    assert "would hold" not in text
    assert "is resolved" not in text
    wide = _v3(NR, "holds")
    r95 = wide["families"]["against BBB's starting network"]["bbb_snr < start_magnitude at 95%"]
    r95["t_test"].update(ci=[-0.35, 0.06], sd_diff=0.0823, n=3)
    assert "not resolved at 3 seeds.\n  - Why: the interval includes 0; the start nets pruned " \
           "by |w| range from 14.00 to 16.00 % across the seeds.\n  - At this spread, a mean " \
           "difference of 29.5 pp or more would hold (given the family's other p-values)." \
        in PP.start_reading_text(wide)  # the other claim's p is unplanted: it must come first
    # where a claim holds, it points to the training (the ranking by σ adds nothing at 2x1200)
    assert "where the claim holds (98 % removed) this points to the training" in text
    none = PP.start_reading_text(_v3(NR, NR))
    assert "points to" not in none and "this test does not separate them." in none
    text = PP.start_reading_text(_v3("holds", "holds"))
    assert "(95 and 98 % removed) this points to the training" in text
    assert "not complete" in PP.start_reading_text(_v3("holds", "holds", interim=True))
    # ranked by |μ| instead of SNR: how far BBB's difference moves (described), from v2's column
    v2, v3 = _v2(_after()), _v3(NR, "holds")
    shift = PP.mu_shift(v2, v3)
    assert shift is not None and f"moves by at most {shift:.2f} pp at these fractions " \
        "(described, not tested)." in PP.start_reading_text(v3, v2)
    assert "Ranked by |μ|" not in PP.start_reading_text(v3)


def test_reading_text_gives_the_detectable_size_and_holm_without_the_exploratory_claims():
    v2 = _v2(_after())
    fam = v2["families"]["error after pruning"]
    for c, r in fam.items():
        r["t_test"].update(sd_diff=0.0471, n=3, ci=[-0.30, -0.07],
                           p=0.02 if "sgd" in c else 0.01 if "dropout" in c else 0.4)
    sgd95 = fam["bbb_snr < sgd_magnitude at 95%"]
    from helpers import stats
    assert PP.needed_pp(v2, "error after pruning", sgd95) == pytest.approx(
        100 * stats.t_ppf(1 - 0.05 / 12, 2) * 0.0471 / 3 ** 0.5)  # 10.886: first of 6
    text = PP.reading_text(v2)
    # here the claim must come first in Holm's order (0.01 x 6 fails), so it needs p < 0.05 / 6
    assert "a mean difference of 29.6 pp or more would hold (given the family's other " \
           "p-values)." in text
    # Holm over the 4 declared-and-unseen claims (p 0.02, 0.02, 0.01, 0.01): 0.04 for SGD at 95 %
    assert "Without the family's 2 [exploratory] claims, Holm's p of this claim over the " \
           "other 4 would be 0.040 (described; the declared verdict stands)." in text
    # the exploratory rows get no "would hold" size: they carry no verdict
    assert "29.60 pp at 95 %" not in text


def test_needed_pp_follows_holms_step_down_not_the_smallest_p_bound():
    """A family where the claim's own Holm step is looser than the first one: with the others at
    p 0.001, 0.002, 0.003, 0.5, 0.6 the three small ones pass (0.006, 0.010, 0.012), so the claim
    passes as fourth of six with p < 0.05 / 3 (|t| > 7.65 at df 2), not only with p < 0.05 / 6
    (|t| > 10.9); and where an earlier claim fails its step, the claim must come first."""
    from helpers import stats
    sd, n = 0.0471, 3
    ps = [0.001, 0.002, 0.003, 0.5, 0.6]
    fam = {f"c{i}": {"t_test": {"p": p, "sd_diff": sd, "n": n}} for i, p in enumerate(ps)}
    fam["x"] = {"t_test": {"p": 0.03, "sd_diff": sd, "n": n}}
    s = {"families": {"f": fam}, "needs": {"f": {"t_for_smallest_p": 10.886}}}
    assert PP.holm_p_needed(ps) == pytest.approx(0.05 / 3, rel=1e-9)
    step = PP.needed_pp(s, "f", fam["x"])
    assert step == pytest.approx(100 * stats.t_ppf(1 - 0.05 / 6, 2) * sd / n ** 0.5, rel=1e-6)
    assert step == pytest.approx(100 * 7.65 * sd / n ** 0.5, rel=1e-3)
    assert step < 100 * 10.886 * sd / n ** 0.5 - 5  # well below the smallest-p bound (29.6 pp)
    assert PP.needed_pp(s, "f", dict(fam["x"])) == pytest.approx(step)  # a copy of the record
    # an earlier claim that fails its own step (0.02 x 6 > 0.05) leaves only the first place
    fam = {f"c{i}": {"t_test": {"p": 0.02, "sd_diff": sd, "n": n}} for i in range(5)}
    fam["x"] = {"t_test": {"p": 0.3, "sd_diff": sd, "n": n}}
    assert PP.holm_p_needed([0.02] * 5) == pytest.approx(0.05 / 6, rel=1e-9)
    # a family of 2 whose other claim passes its step: p < 0.05 (|t| > 4.30)
    assert PP.holm_p_needed([0.003]) == pytest.approx(0.05, rel=1e-9)


def test_starting_network_text_tells_one_network_from_equal_counts():
    starts = [{"seed": s, "epochs": 60, "lr": 0.001, "misclassified": w}
              for s, w in ((0, [1, 2, 3]), (1, [1, 2, 4]), (2, [1, 5, 6]))]
    text = PP.starting_network_text(starts, {"epochs": 25, "lr": 0.0003})
    # the full recipe, and the references by their recipe (no project history)
    assert "trained with Adam (learning rate 0.001), 60 epochs." in text
    assert "The plain references above are other networks: Adam (learning rate 0.0003), 25 " \
           "epochs" in text and "earlier" not in text
    assert "Table 1" not in text
    assert "Each of the 3 start nets (seeds 0, 1, 2) misclassifies 3 test images, hence " \
           "their equal test error, but not the same ones (1 are wrong in all 3)" in text
    same = [{**s, "misclassified": [1, 2, 3]} for s in starts]
    assert "misclassify the same 3 test images." in PP.starting_network_text(same)
    differ = [{**starts[0], "misclassified": [1, 2]}] + starts[1:]
    text = PP.starting_network_text(differ)
    assert "misclassif" not in text and "SGD references" not in text


def test_kl_reading_text_reads_the_verdicts_and_where_the_networks_start():
    text = PP.kl_reading_text(_v2(_after()))
    assert "- Eq. 8's 1/M weights leave a lower error after SNR pruning than eq. 9's: holds " \
           "(95 % and 98 % removed)." in text
    assert "5.00 %" not in text and "plan" not in text
    assert "Unpruned, eq. 9's networks start higher (1.80 % against 1.60 %)" in text
    text = PP.kl_reading_text(_v2(_after(), kl=(NR, "reversed")))
    assert "eq. 9's: not resolved at 3 seeds (95 % removed), reversed (98 % removed)." in text
    assert "not complete" in PP.kl_reading_text(_v2(_after(), interim=True))


def _summary(v95, v98, interim=False):
    tt = {"mean_diff": 0.0002, "ci": [-0.0009, 0.0014]}
    fam = {f"bbb_snr < bbb_magnitude at {f}%": {"verdict": v, "t_test": tt}
           for f, v in ((95, v95), (98, v98))}
    return {"interim": interim, "missing": ["x"] if interim else [],
            "families": {"error after pruning": fam}}


def _dip(share=0.993, bimodal=True):
    return {"widths": {"1200": {"networks": 3, "bimodal": bimodal,
                                "share_below": {"mean": share}, "dip_db": {"mean": 0.05},
                                "cost_below": {"removed_pct": 99, "mean": 0.0005,
                                               "ci": [-0.0002, 0.0013]}}}}


def _pruned():
    big = [0.014, 0.014, 0.014, 0.015, 0.018, 0.077, 0.9]
    mag_big = [0.014, 0.014, 0.014, 0.015, 0.023, 0.511, 0.9]
    return _rec([_model(1200, s) for s in (0, 1, 2)]
                + [_model(400, s, big, mag_big, tests=SNR) for s in (0, 1, 2)])


def test_takeaways_are_five_short_lines_that_point_to_their_sections():
    text = PP.takeaways_text(_pruned(), _dip(), _v2(_after()), _v3(NR, "holds"))
    lines = text.split("\n- ")  # one entry per bullet, its sub-bullets ("  - ") with it
    lines = [lines[0]] + ["- " + x for x in lines[1:]]
    assert len(lines) == 5 and all(x.startswith("- **") for x in lines)
    # the error added at 95 % with its interval beside the paper's is the answer's (line 1), not
    # repeated here: the course and the dip
    gaps, g, paper = P.gap_stats(_pruned(), 95)
    assert lines[0] == ("- **Table 2 and Figure 4** (sections 1–2): at 2×1200 the error stays "
                        "within 1.1× the unpruned error up to 99 % removed; the density has the "
                        "paper's two modes, with 99.3 % of the weights below the dip.")
    assert f"{g['mean']:+.2f} pp" in PP.answer_text(_pruned(), _dip(), _v2(_after()))
    # SNR − |μ| is exploratory: its effect with its interval, no verdict word
    fam = _v2(_after())["families"]["error after pruning"]
    assert lines[1].startswith("- **Does σ help?** At 2×1200, ")
    assert f"SNR − |μ| at 95 % removed {PP.effect_words(fam['bbb_snr < bbb_magnitude at 95%'])}" \
        in lines[1] and "not resolved" not in lines[1] and "(exploratory" in lines[1]
    assert lines[1].count("[") == 1  # the 95 % effect; both fractions are section 3's
    assert lines[1].endswith("; at 2×400, SNR errs less at 98 and 99 % removed (exploratory, "
                             "both; section 3).")
    assert "ranks as well" not in lines[1] and "adds nothing" not in lines[1]
    # 3 of the 4 planted v2 claims against SGD/dropout hold, and 1 of v3's 2: counted apart
    # the smallest declared difference (in size), with its interval and verdict, not a
    # threshold the tables do not show; 3 of v2's 4 claims and 1 of v3's 2 hold, counted apart
    # no stronger than the verdicts: how many hold with their range, each other claim with its
    # effect, interval and verdict (6 declared: 4 of v2's against SGD/dropout, 2 of v3's)
    # which 6: counted by family, so "6 claims" cannot be read as section 3's family
    assert lines[2].startswith("- **Special to BBB?** Of the 6 declared claims that BBB pruned "
                               "by SNR errs less than a network pruned by |w|, 4 hold (BBB lower "
                               "by ")
    fams = (_v2(_after())["families"]["error after pruning"],
            _v3(NR, "holds")["families"]["against BBB's starting network"])
    for fam in fams:
        for k, x in fam.items():
            if "bbb_magnitude" not in k and x["verdict"] != "holds":
                assert f"{PP.effect_words(x)} (Holm p {x['p_holm']:.3g}), {x['verdict']}" \
                    in lines[2]
    assert "or more" not in lines[2]
    # what makes them prunable: from the declared claims against the starting networks only
    # with the holding claim's effect and interval, and marked as an inference
    r98 = _v3(NR, "holds")["families"]["against BBB's starting network"][
        "bbb_snr < start_magnitude at 98%"]
    assert lines[3] == ("- **What makes them prunable?** BBB's training rather than σ in the "
                        "ranking, it seems (an inference; section 3): BBB by SNR against its own "
                        "start nets by |w|, 98 % removed: " + PP.effect_words(r98) + ", holds.")
    # the claims not resolved, in the same line as the count of those that hold, with Holm's p
    assert "\n  - " not in lines[2] and lines[2].count("(Holm p ") == 2
    # the unpruned raise is stated once (section 2's networks_text); section 3 points there
    assert PP._raise_sentence(_pruned(), _v2(_after()), _v3(NR, "holds")) == (
        " That training costs unpruned test error (section 2 gives how much), and it kept the "
        "error within 0.05 pp of the unpruned error up to 99 % removed by SNR (means over the "
        "seeds).")
    assert PP.training_raise_words(_pruned(), _v3(NR, "holds")) == (
        "BBB's training raised the unpruned test error from 1.33 % (the start nets) to 1.40 % "
        "(higher on 2 of 3 seeds; described, not tested)")
    # no claim against the starting networks holds, or SNR beats |μ|: no such line
    assert "What makes them" not in PP.takeaways_text(_pruned(), _dip(), _v2(_after()),
                                                      _v3(NR, NR))
    assert "What makes them" not in PP.takeaways_text(
        _pruned(), _dip(), _v2(_after(mag=("holds", NR))), _v3(NR, "holds"))
    kl = _v2(_after())["families"]["KL weighting"]
    assert lines[4] == ("- **KL weighting** (section 4, 2×400): eq. 8 − eq. 9 after SNR pruning, "
                        + "; ".join(f"{f} %: "
                                    f"{PP.effect_words(kl[f'uniform_snr < blundell_snr at {f}%'])}"
                                    f", {kl[f'uniform_snr < blundell_snr at {f}%']['verdict']}"
                                    for f in PP.TESTED) + "; one recipe each.")
    # what makes them prunable: the holding claim's effect, and "an inference"
    assert "a − b" not in text and "plan" not in text.lower()  # the effects are the sections'


def test_takeaways_follow_the_verdicts_and_skip_what_is_pending():
    v2 = _v2(_after(mag=("holds", NR)))
    text = PP.takeaways_text(_pruned(), _dip(bimodal=False), v2)
    assert "SNR against |μ|: holds against  (95 % removed)" not in text
    # a planted verdict on the exploratory claim is not shown: its effect is
    sig = next(x for x in text.splitlines() if x.startswith("- **Does σ help?**"))
    assert "holds" not in sig and "adds nothing measurable" not in text
    assert "two modes" not in text  # the planted density has one mode
    # without the starting networks' summary: the declared claims only, no second count
    assert "Of the 4 declared claims that BBB pruned by SNR errs less than a network pruned " \
           "by |w|, 3 hold (BBB lower by " in text and "); against the plain networks at " in text
    assert "What makes them prunable" not in text  # needs the starting networks' summary
    assert "starting networks hold" not in text
    interim = PP.takeaways_text(_pruned(), _dip(), _v2(_after(), interim=True))
    assert interim.count("\n") == 0 and "Table 2 and Figure 4" in interim
    mixed = _rec([_model(400, 0, tests=MAG), _model(400, 1, tests=SNR)]
                 + [_model(1200, 0)])
    assert "McNemar" not in PP.takeaways_text(mixed, None, _v2(_after()))


def test_answer_gives_the_width_the_lean_and_names_the_networks(monkeypatch):
    rec = _rec([{**_model(1200, s, snr=[0.0140, 0.014, 0.014, e95, 0.0143, 0.0145, 0.9],
                          tests={"95": (6, 2, 0.3), "98": (5, 4, 1.0), "99": (3, 4, 1.0)}),
                 "name": f"x{s}"} for s, e95 in ((0, 0.0139), (1, 0.0141), (2, 0.0143))])
    rec["config"] = {"paper_table2": {"95": 0.0129, "0": 0.0124}}
    summary = _summary(NR, NR)
    text = PP.answer_text(rec, _dip(), summary)
    head, _, first, second = text.split("\n")
    # one numbered line per question of the first cell: (1) the cost (none measurable, even at
    # the dip's 99 %) with the error added, its interval, what it excludes and the paper's;
    # (2) does σ add anything (not at 2×1200: SNR − |μ| with its interval, exploratory)
    assert head == "**The answer** (95 % intervals over 3 seeds; terms below)." and _ == ""
    assert first == ("1. **Does pruning by SNR cost little?** Yes: 95 % of the weights of our "
                     "2×1200 BBB networks (even 99 %) can be removed by SNR at no measurable "
                     "cost, as the paper reports. The error added (pruned − unpruned) is +0.01 pp "
                     "[-0.04, +0.06], which excludes a cost above 0.06 pp; the paper's +0.05 pp "
                     "is inside the interval.")
    # the claim is marked exploratory (its numbers had been seen), no verdict word, its test is
    # section 3's and the per-image counts are appendix A's
    assert second == ("2. **Does σ help?** Not at 2×1200: SNR − |μ| (95 % removed) is +0.02 pp "
                      "[-0.09, +0.14], which excludes an SNR advantage above 0.09 pp "
                      "(*exploratory*, no verdict; section 3, appendix A).")
    # no declared claims against |w| planted: no line (3); no KL test planted: no line (4)
    assert "3. **" not in text and "4. **" not in text
    # which way the per-image counts lean is appendix A's, with its caveat: |μ| has fewer
    # images only it gets wrong on 6 of the 9 planted pairs (30 against 42), 0 with p < 0.05
    assert "in all" not in text
    lean = ("- Which way 2×1200 leans (not tested): 6 of the 9 network–fraction pairs have fewer "
            "test images wrong only under |μ| than only under SNR (30 against 42 in all); weak "
            "evidence, as one network's fractions share the test images and 0 of the 9 have "
            "p < 0.05.")
    assert PP.lean_words(rec) == lean and P.mcnemar_text(rec).endswith("\n" + lean)
    snr = _rec([_model(1200, s, tests=NONE) for s in (0, 1, 2)])  # 5 against 6 on every pair
    assert PP.lean_words(snr).startswith("- Which way 2×1200 leans (not tested): 9 of the 9 "
                                         "network–fraction pairs have fewer test images wrong "
                                         "only under SNR than only under |μ| (45 against 54 in "
                                         "all);")
    assert PP.lean_words(_rec([_model(1200, 0)])) == ""  # 5 against 5: no lean
    tied = _rec([_model(1200, 0, tests={"95": (6, 2, 0.3), "98": (2, 6, 0.3)})])
    assert PP.lean_words(tied) == ""
    # the unpruned gap is section 2's
    assert "1.24 %" not in text and "Caveat" not in text and "What makes them prunable" not in text
    # the claim is exploratory: a planted verdict word is not shown, the interval speaks
    for word in ("holds", "reversed"):
        other = PP.answer_text(rec, _dip(), _summary(word, NR))
        assert word not in other.split("\n")[3] and "(*exploratory*, no verdict" in other
    # a measurable cost, or a dip cost whose interval excludes 0: no "no measurable cost"
    costly = _dip()
    costly["widths"]["1200"]["cost_below"]["ci"] = [0.0001, 0.0013]
    assert "(even 99 %)" not in PP.answer_text(rec, costly, summary)
    same = _rec([_model(1200, s, snr=[0.0140, 0.014, 0.014, 0.0141, 0.0143, 0.0145, 0.9])
                 for s in (0, 1, 2)])  # +0.01 pp on every seed: an interval that excludes 0
    assert PP.answer_text(same, _dip(), summary).split("\n")[2].startswith(
        "1. **Does pruning by SNR cost little?** Nearly:")
    # the networks, named from their run records (planted here)
    runs = {f"x{s}": {"config": {"epochs": 35, "optimizer": "adam", "init_from": "sgd",
                                 "init_epochs": 60, "pi": 0.25},
                      "metrics": {"test_error": 0.0146 if s == 2 else 0.0140,
                                  "predictor": "ensemble" if s == 2 else "mean_weights"}}
            for s in (0, 1, 2)}
    monkeypatch.setattr(PP, "_run_config", lambda name: runs.get(name))
    monkeypatch.setattr(PP, "_final_table1_row", lambda H, key="bbb_mixture": {
        "mean": 0.0149, "seeds": [0, 1, 2, 3, 4],
        "recipe": {"init_from": "sgd", "init_epochs": 30, "epochs": 25}} if key == "bbb_mixture"
        else None)
    monkeypatch.setattr(PP, "_earlier_table1_row", lambda H, key="bbb_mixture": None)
    monkeypatch.setattr(PP, "_widths_phrase", lambda: "σ moved 1 %")
    assert PP.networks_bullet(rec) == (
        "- **Which networks.** BBB networks with the scale-mixture prior from notebook 01's "
        "earlier Adam runs (3 seeds per width, each warm-started from a 60-epoch plain network), "
        "not those of its final Table 1: section 2 gives both recipes.")
    nets = PP.networks_text(rec)
    # the predictor: seed 2 chose the average, so the runs' own errors average higher
    assert "Table 2's 0 % row (1.40 % at 2×1200) predicts with the posterior means" in nets
    assert "chose the average for seed 2 (1.46 % against 1.40 % with the means); so the runs' " \
           "own test errors average 1.42 %." in nets
    assert "*Against the paper's unpruned 1.24 %* (our 1.40 %): another recipe" in nets  # no starting networks' summary: no second reason
    assert "(σ moved 1 %), so their SNR would rank the weights by |μ| alone." in nets
    runs["x2"]["metrics"].update(test_error=0.0140, predictor="mean_weights")
    assert "chose the average" not in PP.networks_text(rec)
    monkeypatch.setattr(PP, "_run_config", lambda name: None)  # no run record: no claim
    assert PP.networks_bullet(rec) == "" and PP.networks_text(rec) == ""


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
    assert f"Ours at 2×{H} ({mean(main, 'snr', 0)} unpruned, {len(main)} seeds)" in t2
    assert f"Ours at 2×{other}" in t2 and "Removed at random" in t2
    mc = P.mcnemar_text(rec)
    n = len(P.mcnemar_rows(rec)[1])  # the rows of the table it reads
    assert f"These are {n} tests" in mc
    assert f"of the {len(main)} networks at 2×{H})" in P.paper_takeaway(rec)
    assert f"at 2×{H} (seeds " in P.figure4_text(main[0], main)
    timing = rec["metrics"]["storage_and_timing"]
    named = [m for m in models if m["name"] == timing["model"]]
    assert f"Stored sparse, the 2×{named[0]['H']} seed-{named[0]['seed']} network shrinks" in \
        P.storage_text(rec)
    text, (header, rows) = P.storage_text(rec), P.storage_rows(rec)
    for r in rows:  # the reading's pace words are the table's
        pace = r[header.index("sparse against every dense time")]
        assert pace in text
    spread = P.timing_noise(timing["rows"])
    assert (f"a {spread:.2f}× spread" in text) == (spread > P.SAME_PACE)
    assert f"within {P.noise_band(timing['rows']):.2f}× of the nearest dense time" in text
    seconds, missing = P.retrain_seconds(rec)
    words = P.retrain_words(rec)
    assert f": {seconds / 3600:.1f} h for " in words
    assert ("no recorded time" in words) == bool(missing)
    summary = PP.load_summary()
    if summary is not None and not summary["interim"]:
        v = summary["families"]["error after pruning"]["bbb_snr < bbb_magnitude at 95%"]
        answer = PP.answer_text(rec, None, summary, v3=PP.load_summary(3))
        # SNR − |μ| is exploratory (seen before the plan): its interval, no verdict word
        sigma = next(x for x in answer.split("\n") if x.startswith("2. **Does σ help?**"))
        assert f"SNR − |μ| (95 % removed) is {PP.effect_words(v)}" in sigma and \
            "(*exploratory*, no verdict; " in sigma and "Table 1's BBB" not in answer
        assert v["verdict"] not in sigma
        # (3) the declared claims against |w|, each one not holding with its Holm p; (4) eq. 9
        special = next(x for x in answer.split("\n") if x.startswith("3. **Is it special"))
        recs = PP._declared_recs(summary, PP.load_summary(3))
        held = [r for _, r in recs if r["verdict"] == "holds"]
        assert f"{len(held)} of the {len(recs)} declared claims hold" in special
        for _, r in recs:
            if r["verdict"] != "holds":
                assert f"{PP.effect_words(r)} (Holm p {r['p_holm']:.3g}), {r['verdict']}" \
                    in special
        assert answer.split("\n")[-1].startswith("4. **Does the KL weighting matter?** ")
        nets = PP.networks_text(rec, PP.load_summary(3))
        assert "another recipe" in nets and "raised the unpruned test error" in nets
        h, rows = PP.networks_rows(rec, summary, PP.load_summary(3))
        assert [r[0] for r in rows][:2] == ["BBB 2×1200 (Table 2, Figure 4)",
                                            "BBB 2×400 (Table 2, Figure 4)"]
        assert "π = 0.25" in rows[0][1] and "π = 0.5" in rows[1][1]  # from the run records
        take = PP.takeaways_text(rec, None, summary, PP.load_summary(3))
        assert take.count("\n- **") == 4 and "- **Does σ help?** " in take
    v3 = PP.load_summary(3)
    if v3 is not None and not v3["interim"]:
        text = PP.start_reading_text(v3)
        for f in PP.TESTED:
            fam = v3["families"]["against BBB's starting network"]
            r = fam[f"bbb_snr < start_magnitude at {f}%"]
            assert (f"At {f} % removed" + (", BBB pruned by SNR" if r["verdict"] == "holds"
                                           else ": ")) in text and r["verdict"] in text
        starts, sgd = PP.starting_networks(v3, summary)
        assert len(starts) == len(PP.SEEDS) and "BBB's start net" in \
            PP.starting_network_text(starts, sgd)


def test_answer_names_the_narrower_width_where_snr_beats_magnitude():
    # 2×400: McNemar favours SNR at 98 and 99 % on both networks; 2×1200: told apart nowhere
    rec = _rec([_model(1200, s, tests=NONE) for s in (0, 1)]
               + [_model(400, s, snr=[0.014, 0.014, 0.014, 0.015, 0.018, 0.08, 0.9],
                         mag=[0.014, 0.014, 0.014, 0.015, 0.023, 0.50, 0.9], tests=SNR)
                  for s in (0, 1)])
    assert PP.other_width_clause(rec) == (
        " At 2×400 SNR does better: at 98 and 99 % removed it leaves fewer errors than |μ| on "
        "each of the 2 networks, at 99 % 8.00 % against 50.00 % test error (means over the "
        "seeds; McNemar's test, a paired test on the test images that only one of the two "
        "rankings gets wrong, per network and uncorrected for the number of tests).")
    second = PP.answer_text(rec, _dip(), _summary(NR, NR)).split("\n")[3]
    assert second.endswith("; only in the 2×400 networks, at 98 and 99 % removed, does SNR "
                           "beat |μ| (*exploratory*, no verdict; section 3, appendix A).")
    # planted: no run records, so no recipe differences
    # one 2×400 network favours |μ|: no such clause
    mixed = _rec([_model(1200, 0, tests=NONE), _model(400, 0, tests=MAG),
                  _model(400, 1, tests=SNR)])
    assert PP.other_width_clause(mixed) is None
    assert PP.other_width_clause(_rec([_model(1200, 0, tests=SNR)])) is None  # one width only


def test_training_effect_pairs_bbb_by_magnitude_with_its_starting_networks():
    v2, v3 = _v2(_after()), _v3(NR, "holds")
    v3["table"]["start_magnitude"]["95"] = {"0": 0.09, "1": 0.25, "2": 0.13}  # varies by seed
    es = PP.training_effect(v2, v3)
    assert [e["fraction"] for e in es] == list(PP.TESTED) and es[0]["lower_on"] == 3
    assert es[0]["bbb"] == pytest.approx(0.016) and es[0]["start"] == pytest.approx(0.47 / 3)
    # |μ| against SNR on BBB's side: the planted |μ| column is 0.1 pp above the SNR column; the
    # declared claims' planted mean difference is the _claims default
    d = _v3(NR, "holds")["families"]["against BBB's starting network"][
        "bbb_snr < start_magnitude at 95%"]["t_test"]["mean_diff"]
    assert PP.mu_shift(v2, v3) == pytest.approx(max(
        abs(100 * (e["diff"]["mean_diff"] - d)) for e in es))
    assert PP.training_effect(v2, None) is None and PP.training_effect(
        v2, _v3(NR, "holds", interim=True)) is None
    assert PP.mu_shift(v2, None) is None


def test_kl_reading_gives_the_unseen_seeds_and_the_papers_weighting():
    v2 = _v2(_after())
    fam = v2["families"]["KL weighting"]
    for c in fam:
        fam[c].update(seeds=[0, 1, 2], lhs=[0.015, 0.016, 0.017], rhs=[0.04, 0.05, 0.03])
    text = PP.kl_reading_text(v2)
    # which networks were trained after the test was declared, plainly (eq. 8's were all seen)
    assert "- Eq. 9's seeds 1 and 2, trained after the test was declared, give on their own " \
           "eq. 8 − eq. 9 at 95 %: seed 1 -3.40 pp, seed 2 -1.30 pp; at 98 %: seed 1 -3.40 pp, " \
           "seed 2 -1.30 pp (described, not tested)." in text and "seed 0 -" not in text
    # the error pruning adds to each weighting's networks, described beside the tested one
    assert "% adds " in text and "(described; the test is on the error after pruning)." in text
    # no comparison across widths (our 2x400 against the paper's 2x1200)
    assert "the paper's flat course" not in text and "1.29 %" not in text
    assert "does not say which" not in text  # said once, in section 4's introduction
    # what had been seen is said in the section's text, not tagged in the test table
    rows = PP.test_rows(v2, ("KL weighting",))[1]
    assert all(r[3].startswith("s0: 1.50 vs 4.00; s1: ") for r in rows)
    assert "(seen)" not in "".join(r[3] for r in PP.test_rows(v2)[1])


def test_reading_text_says_why_a_large_variable_difference_is_not_resolved():
    r = {"lhs": [0.0141, 0.0155, 0.0137], "rhs": [0.2136, 0.1521, 0.2424],
         "t_test": {"sd_diff": 0.0471}}
    assert PP._spread_words(r) == ("; with 3 seeds, a difference this variable (sd of the "
                                   "per-seed differences 4.71 pp) cannot pass Holm, though per "
                                   "seed BBB is lower by 13.66 to 22.87 pp")
    assert PP._spread_words({"t_test": {"sd_diff": 0.01}}) == ""  # no per-seed values
    mixed = {**r, "rhs": [0.2136, 0.0100, 0.2424]}  # the seeds disagree: no "lower by"
    assert "lower by" not in PP._spread_words(mixed)


def test_notebook_04_stays_under_5000_words():
    from pathlib import Path

    from test_rendered_01_r10 import rendered_words
    n = rendered_words(Path(__file__).resolve().parent.parent / "notebooks" / "04_pruning.ipynb")
    assert 1000 < n <= 5000


def test_details_page_is_current_and_holds_what_the_notebook_left_out(monkeypatch):
    """docs/04_details.md is rendered from the committed results (`python -m
    helpers.pruning_plan`); the tables that left the notebook are on it."""
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent
    monkeypatch.setenv("BBB_RESULTS_DIR", str(root / "results"))
    if not (root / "results" / "04_pruning" / "snr_dip.json").exists():
        pytest.skip("results/04_pruning is not committed")
    text = PP.details_text()
    assert PP.DETAILS_PATH.read_text() == text, "run `python -m helpers.pruning_plan`"
    rec = json.loads((root / "results" / "04_pruning" / "snr.json").read_text())
    header, rows = P.mcnemar_rows(rec)
    assert f"| {rows[0][0]} | {rows[0][1]} |" in text and "only SNR wrong" in text
    assert "main mode (dB)" in text and "Silverman's rule of thumb" in text
    assert "recipe (from their run records)" in text
    # the notebook points to each section it left out
    nb = (root / "notebooks" / "04_pruning.py").read_text()
    for anchor in ("#figure-4s-dip-network-by-network", "#the-networks-pruned"):
        assert anchor in P.DIP_METHOD_POINTER + PP.NETWORKS_POINTER
    assert "docs/04_details.md" in nb
    for head in ("## The networks pruned", "## Figure 4's dip, network by network"):
        assert head in text


def test_answer_adds_the_kl_weighting_test_and_the_recipe_confound(monkeypatch):
    # the KL-weighting test at the answer's fraction: its effect, interval and verdict, and what
    # a holding verdict means; not resolved: no such meaning
    rec = _rec([_model(1200, s, tests=NONE) for s in (0, 1)]
               + [_model(400, s, snr=[0.014, 0.014, 0.014, 0.015, 0.018, 0.08, 0.9],
                         mag=[0.014, 0.014, 0.014, 0.015, 0.023, 0.50, 0.9], tests=SNR)
                  for s in (0, 1)])
    summary = {**_summary(NR, NR), "families": {**_summary(NR, NR)["families"],
               "KL weighting": _v2(_after())["families"]["KL weighting"]}}
    r = summary["families"]["KL weighting"]["uniform_snr < blundell_snr at 95%"]
    last = PP.answer_text(rec, _dip(), summary).split("\n")[-1]
    # the verdict is attached to what was tested: the error after pruning (eq. 8 − eq. 9)
    assert last.startswith(
        "4. **Does the KL weighting matter?** Yes: with eq. 9 (tested at 2×400) the pruned "
        "networks err more; eq. 8 − eq. 9, test error after removing 95 % by SNR: "
        f"{PP.effect_words(r)}, holds (section 4")
    # line (1)'s "Yes" carries eq. 8's condition
    first = PP.answer_text(rec, _dip(), summary).split("\n")[2]
    assert first.startswith("1. **Does pruning by SNR cost little?** ") and \
        ", with eq. 8's KL weighting: " in first
    # with the reference table, the error pruning adds to each side, described
    v2 = _v2(_after())
    withtable = {**summary, "table": v2["table"]}
    if all(a in v2["table"] for a in ("uniform_snr", "blundell_snr")):
        assert PP.answer_text(rec, _dip(), withtable).split("\n")[-1].endswith(
            "pp to eq. 8's (described).")
    # seed 0 had been seen on both sides: the answer gives the unseen seeds alone
    fam = summary["families"]["KL weighting"]
    if r.get("seeds"):
        assert last.endswith("(section 4; seeds 1 and 2, unseen when it was declared: "
                             + " and ".join(f"{100 * (a - b):+.2f}" for sd, a, b in zip(
                                 r["seeds"], r["lhs"], r["rhs"]) if str(sd) != "0") + " pp).")
    r.update(seeds=[0, 1, 2], lhs=[0.015, 0.016, 0.017], rhs=[0.04, 0.05, 0.03])
    assert PP.answer_text(rec, _dip(), summary).split("\n")[-1].endswith(
        "holds (section 4; seeds 1 and 2, unseen when it was declared: -3.40 and -1.30 pp).") \
        and fam
    r["verdict"] = NR  # not held: no "Yes", no "err more"
    last = PP.answer_text(rec, _dip(), summary).split("\n")[-1]
    assert f"{NR} (section 4; seeds 1 and 2" in last and "Not resolved (tested" in last \
        and "err more" not in last
    # where the two widths' recipes differ (run records), the narrow-width finding says so
    second = PP.answer_text(rec, _dip(), summary).split("\n")[3]
    assert "also differ in" not in second  # planted: no run records
    monkeypatch.setattr(PP, "width_differences",
                        lambda rec: [("π", "0.25", "0.5"), ("epochs", "35", "30")])
    second = PP.answer_text(rec, _dip(), summary).split("\n")[3]
    assert second.endswith("does SNR beat |μ|, but those networks also differ in the prior's "
                           "mixture weight π (0.5 against 0.25) and epochs (30 against 35) "
                           "(*exploratory*, no verdict; section 3, appendix A).")


def test_a_flat_course_with_a_measurable_rise_says_so():
    # 2x400 by SNR: within 10 % of the unpruned error at 95 % on every seed, yet above it on
    # each: the error added's interval excludes 0
    flat = [_model(400, s, snr=[0.0140, 0.014, 0.014, e, 0.02, 0.08, 0.9])
            for s, e in ((0, 0.0148), (1, 0.0150), (2, 0.0152))]
    words = P._measurable_words(flat, "snr")
    assert words.startswith(" (at 95 % removed it adds +0.10 pp [") and \
        words.endswith("]: measurable)")
    even = [_model(400, s, snr=[0.0140, 0.014, 0.014, e, 0.02, 0.08, 0.9])
            for s, e in ((0, 0.0138), (1, 0.0142), (2, 0.0141))]
    assert P._measurable_words(even, "snr") == ""  # its interval includes 0
