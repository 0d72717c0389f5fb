"""Figure 4 read at the dip of the SNR density (helpers.pruning: find_dip, dip_cost,
dip_analysis and their readings): planted densities whose modes and dip are known, and the
committed results/04_pruning/snr_dip.json against the analysis of snr.json."""
import json
import math

import numpy as np
import pytest

from helpers import pruning as P

LO, HI, N = P.DB_EDGES
EDGES = np.linspace(LO, HI, N + 1)


def _mixture_pdf(x, parts):
    return sum(w * np.exp(-0.5 * ((x - m) / s) ** 2) / (s * math.sqrt(2 * math.pi))
               for w, m, s in parts)


def _entry(parts, n=400_000, seed=0, H=1200, name="a", errors=None):
    """A stored analysis whose SNR values (dB) are drawn from the Gaussian mixture ``parts``
    [(weight, mean, sd)], binned on DB_EDGES as snr.json stores them."""
    rng = np.random.default_rng(seed)
    k = rng.multinomial(n, [w for w, _, _ in parts])
    x = np.concatenate([rng.normal(m, s, size=c) for (_, m, s), c in zip(parts, k)])
    hist, _ = np.histogram(x, EDGES)
    errors = errors or {"0": 0.014, "50": 0.014, "75": 0.014, "95": 0.015, "98": 0.018,
                        "99": 0.05, "100": 0.9}
    return {"H": H, "seed": seed, "name": name, "n_weights": n, "snr_hist": hist.tolist(),
            "snr_outside": int(((x < LO) | (x >= HI)).sum()), "cuts_db": {"75": -5.0},
            "error_at": {"snr": errors}}


TWO = [(0.97, -7.0, 3.0), (0.03, 4.0, 1.5)]


def _truth(parts):
    """The true modes and dip of the mixture's density, and the share of mass below the dip."""
    x = np.arange(-20, 10, 0.001)
    f = _mixture_pdf(x, parts)
    peaks = [i for i in range(1, len(x) - 1) if f[i] > f[i - 1] and f[i] >= f[i + 1]]
    a, b = sorted(peaks)
    j = a + int(np.argmin(f[a:b + 1]))
    share = sum(w * 0.5 * (1 + math.erf((x[j] - m) / (s * math.sqrt(2)))) for w, m, s in parts)
    return x[a], x[b], x[j], share


def test_find_dip_recovers_a_known_two_mode_density():
    entry = _entry(TWO)
    d = P.find_dip(entry)
    main, second, dip, share = _truth(TWO)
    assert d["main_mode_db"] == pytest.approx(main, abs=0.3)
    assert d["second_mode_db"] == pytest.approx(second, abs=0.3)
    assert d["dip_db"] == pytest.approx(dip, abs=0.4)
    assert d["share_below"] == pytest.approx(share, abs=0.002)
    assert 0 < d["dip_over_second_mode"] < 1
    # the bandwidth: Silverman's rule, never below the bin width (the values are binned)
    assert d["bandwidth_db"] >= (HI - LO) / N
    wide = P.find_dip(entry, 2.0)
    assert wide["bandwidth_db"] == pytest.approx(2 * d["bandwidth_db"])


def test_silvermans_rule_on_a_wide_sample_and_the_bin_width_floor():
    few = _entry([(1.0, 0.0, 5.0)], n=200)
    h = P.bandwidth_db(few["snr_hist"])
    assert h == pytest.approx(0.9 * 5.0 * 200 ** -0.2, rel=0.25)  # sd and IQR / 1.34 near 5
    many = _entry([(1.0, 0.0, 0.5)], n=10 ** 6)
    assert P.bandwidth_db(many["snr_hist"]) == (HI - LO) / N  # the rule gives less: the floor


def test_one_mode_has_no_dip_and_is_counted_so():
    one = _entry([(1.0, -7.0, 3.0)], name="b")
    assert P.find_dip(one) is None
    a = P.dip_analysis({"metrics": {"models": [_entry(TWO), one]}})
    assert a["widths"]["1200"]["networks"] == 2 and a["widths"]["1200"]["bimodal"] == 1
    assert "two modes on 1 of the 2 networks" in P.dip_text(a)
    header, rows = P.dip_rows(a)
    assert rows[1][1] == "one mode" and len(rows[1]) == len(header)


def test_dip_cost_reads_measured_fractions_and_interpolates_only_between_two():
    e = _entry(TWO)
    c = P.dip_cost(e, 0.97)  # between 95 and 98 %: both measured
    assert c["below"]["removed_pct"] == 95 and c["above"]["removed_pct"] == 98
    assert c["below"]["cost_pp"] == pytest.approx(0.1)
    assert c["above"]["cost_pp"] == pytest.approx(0.4)
    assert c["interpolated_cost_pp"] == pytest.approx(0.1 + (97 - 95) / 3 * 0.3)
    c = P.dip_cost(e, 0.993)  # above 99 % only 100 % (no weight left): no interpolation
    assert c["below"]["removed_pct"] == 99 and c["above"] is None
    assert c["interpolated_cost_pp"] is None
    assert P.dip_cost(e, 0.98)["below"]["removed_pct"] == 98  # a measured fraction at the share


def test_dip_text_gives_intervals_and_marks_interpolation():
    models = [_entry(TWO, seed=s, name=f"n{s}") for s in (0, 1, 2)]
    a = P.dip_analysis({"metrics": {"models": models}})
    w = a["widths"]["1200"]
    text = P.dip_text(a, ("75", -5.0))
    assert "two modes on 3 of the 3 networks" in text
    lo, hi = w["dip_db"]["ci"]
    assert f"dip between them at {w['dip_db']['mean']:+.2f} dB [{lo:+.2f}, {hi:+.2f}]" in text
    # the answer, the takeaway and the README cell give the dip with the same two decimals
    assert f"the dip lies at {w['dip_db']['mean']:+.2f} dB [{lo:+.2f}, {hi:+.2f}]" in \
        P.dip_takeaway(a)
    assert f"dip {w['dip_db']['mean'] + 0.0:+.2f} dB, " in P.dip_row_words(a, 1200)
    share = w["share_below"]
    if share["mean"] * 100 < 98:  # between 95 and 98 % removed: the line is interpolated
        assert "(interpolated, not measured)" in text
    else:
        assert "interpolated" not in text
    assert "Silverman's rule of thumb" in text and "With 2 times the bandwidth" in text
    assert "lies at -5.0 dB: inside the main mode" in text
    take = P.dip_takeaway(a)
    assert take.startswith("Figure 4's density has two modes on 3 of 3 networks: at 2×1200")
    assert "holds" not in take  # kept for the tests' verdicts


def test_figure4_marks_the_dip():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    models = [_entry(TWO, seed=s, name=f"n{s}") for s in (0, 1)]
    a = P.dip_analysis({"metrics": {"models": models}})
    fig = P.figure4(models[0], a, models)
    labels = [t for ax in fig.axes for t in ax.get_legend_handles_labels()[1]]
    d = a["networks"][0]["dip"]
    assert any(t.startswith(f"dip {P._db(d['dip_db'], 2)} dB: ") for t in labels)
    assert len(fig.axes) == 4
    plt.close(fig)
    # weights outside the stored histogram: the title says where the axis ends and why
    fig = P.figure4({**models[0], "snr_outside": 7}, a, models)
    title = fig._suptitle.get_text()
    # which side of the histogram's range they lie on is not recorded: the title does not say
    assert "; 7 (" in title and "with an SNR outside -40 to 30 dB not drawn (side not " \
        "recorded; most likely below -40 dB)" in title \
        and "above 30" not in title and "stored" not in title
    assert "none lies between" in title and " and 30 dB" in title
    assert title.startswith("2×1200, seed 0: ")  # the width as the notebook writes it
    plt.close(fig)


def test_the_committed_dip_file_is_the_analysis_of_the_committed_histograms(monkeypatch):
    monkeypatch.setenv("BBB_RESULTS_DIR", "/work/main/results")
    from helpers.utils import results_dir
    snr, dip = (results_dir() / "04_pruning" / f for f in ("snr.json", "snr_dip.json"))
    if not (snr.exists() and dip.exists()):
        pytest.skip("results/04_pruning/snr.json or snr_dip.json is not committed")
    rec, stored = json.loads(snr.read_text()), json.loads(dip.read_text())
    assert stored["config"]["models"] == [m["name"] for m in rec["metrics"]["models"]]
    assert stored["metrics"] == json.loads(json.dumps(P.dip_analysis(rec)))


def test_dip_row_words_for_the_status_table():
    models = [_entry(TWO, seed=s, name=f"n{s}") for s in (0, 1)] + \
        [_entry([(1.0, -7.0, 3.0)], seed=5, name="u", H=400)]
    a = P.dip_analysis({"metrics": {"models": models}})
    text = P.dip_row_words(a, 1200)
    w = a["widths"]["1200"]
    assert text.startswith("two modes on 2 of 3 nets; dip ")
    assert f"{100 * w['share_below']['mean']:.1f} % of weights below" in text
    assert P.dip_row_words(a, 400) == "two modes on 2 of 3 nets"


def test_outside_words_place_the_weights_outside_the_histogram_by_its_left_tail():
    import math
    lo, hi, n = P.DB_EDGES
    width = (hi - lo) / n
    # a left tail falling by e per dB: bin k (from -40 dB) holds 100 e^(k width)
    hist = [round(100 * math.exp(k * width)) if k < 40 else 0 for k in range(n)]
    entry = {"snr_hist": hist, "n_weights": sum(hist) + 400, "snr_outside": 400}
    est = P.left_tail_estimate(entry)
    q = math.exp(-width)
    assert abs(est - 100 * q / (1 - q)) < 5  # the geometric tail of the same slope
    text = P.outside_words(entry)
    assert "the 400 weights (" in text and "keeps their count, not their side" in text
    assert f"would hold about {est:,.0f} weights, an extrapolation, not measured" in text
    # a tail that does not fall to the left, or an empty lowest bin: no extrapolation
    flat = {**entry, "snr_hist": [0] + hist[1:]}
    assert P.left_tail_estimate(flat) is None and "extrapolation" not in P.outside_words(flat)
    assert P.outside_words({**entry, "snr_outside": 0}) == ""
