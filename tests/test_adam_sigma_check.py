"""σ measured in the Adam recipe's warm-started scale-mixture Table 1 runs (issue 52): a rerun of
seed 0 at each width (helpers.posterior_diagnostics.adam_rerun), section 3's rule read on it both
ways, whether the rerun reproduced its record both ways, the smoke CLI, and the committed file's
numbers in notebook 01's rendered text. Planted records or the committed files: each can fail."""
import json
import sys
from pathlib import Path

import pytest

from helpers import posterior_diagnostics as PD
from helpers import table1 as T

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = ROOT / "results" / PD.NB / "adam_sigma_check.json"


def _layers(med, top, sigma=(0.002, 0.01, 0.08)):
    """Three layers' readings with ρ drift (median ``med``, 95th percentile ``top``)."""
    return {n: {"n": 100, "sigma_q": list(sigma), "rho_drift_q": [med, top],
                "narrow_share": 0.3} for n in ("0", "2", "4")}


def _entry(med, top, test=0.0138, record=0.0138, exact=True):
    return {"H": 400, "sigma_start": 0.0024757, "layers": _layers(med, top),
            "metrics": {"test_error": test}, "record_metrics": {"test_error": record},
            "reproduced": {"exact": exact, "max_abs_diff": 0.0 if exact else abs(test - record)}}


LEARNED = {"widths": {"400": _entry(0.5, 4.0)}}           # ρ spread apart: 95th ≫ median
SHIFTED = {"widths": {"400": _entry(1.0, 1.02, 0.0150, exact=False)}}  # every ρ alike


def _mixture(H=400):
    return {"config": {"method": "bbb_mixture", "H": H}, "history": [{"kl": 7.0}],
            "metrics": {"test_error_single_samples": [0.02, 0.022]}}


def test_the_rule_is_section_3s_both_ways():
    assert not PD.shifted_uniformly(LEARNED["widths"]["400"]["layers"])
    assert PD.shifted_uniformly(SHIFTED["widths"]["400"]["layers"])
    # the same rule as section 3's reading of its traces (``words``, ``_growth``)
    for layers, alike in ((_layers(0.5, 4.0), False), (_layers(1.0, 1.02), True)):
        rec = {"settings": {"epochs": 1}, "runs": {"x, y": {
            "trace": [{"epoch": 0, "nll": None, "kl": None, "layers": _layers(0.0, 0.0)},
                      {"epoch": 1, "nll": 0.1, "kl": 2.0, "layers": layers}],
            "val_error": [0.02]}}}
        assert bool(PD._growth(rec)[0]) == alike


def test_verdicts_void_only_where_sigma_did_not_learn():
    assert PD.adam_unlearned(LEARNED) == [] and PD.adam_unlearned(None) == []
    assert PD.adam_unlearned(SHIFTED) == [400]
    assert PD.mixture_verdict(LEARNED, 400, "*holds*") == "*holds*"
    assert PD.mixture_verdict(SHIFTED, 400, "*holds*") == PD.MIXTURE_NO_VERDICT
    assert PD.mixture_verdict(SHIFTED, 800, "*holds*") == "*holds*"  # not measured there
    assert PD.MIXTURE_NO_VERDICT == "no verdict (σ did not learn)"


def test_measured_rows_render_both_ways():
    text = PD.measured_words(LEARNED, [400])
    # reader r17: the rule's ratio (largest 95th percentile / smallest median) printed per run
    # reader r18: drifts to three significant figures, so that the ratio can be recomputed
    # reader r19: the start to three figures (0.00248), so that σ's ratios to it recompute
    assert "| 2×400 | 0.0100; 0.00200–0.0800 (start 0.00248) | 0.500; 4.00 (8.00) | learned |" in text
    assert "(their ratio, the rule's)" in text.split("\n")[0]
    assert "| the rerun reproduced the record |" in text.split("\n")[0]
    assert "| exactly (test error 1.38 %) |" in text
    assert "At 2×400 σ learned" in text and "verdicts count" in text
    assert PD.MIXTURE_NO_VERDICT not in text
    text = PD.measured_words(SHIFTED, [400])
    assert "| 1.00; 1.02 (1.02) | shifted uniformly |" in text  # 3 significant figures
    assert ("not exactly (same recipe and seed): test error 1.50 % vs the record's 1.38 %"
            in text)
    assert f"verdicts there read *{PD.MIXTURE_NO_VERDICT}*" in text and "σ learned" not in text
    both = {"widths": {"400": LEARNED["widths"]["400"], "800": SHIFTED["widths"]["400"]}}
    text = PD.measured_words(both, [400, 800])
    assert "At 2×400 σ learned" in text and "At 2×800 σ shifted uniformly" in text
    assert PD.measured_words(None, [400]) == "" and PD.measured_words(LEARNED, [800]) == ""
    spread = json.loads(json.dumps(LEARNED))  # the output layer's median ρ moved further
    spread["widths"]["400"]["layers"]["4"]["rho_drift_q"] = [2.0, 3.0]
    assert "| 0.500–2.00; 4.00 (8.00) | learned |" in PD.measured_words(spread, [400])
    big = json.loads(json.dumps(LEARNED))  # a ratio of 10 or more is quoted as a whole number
    big["widths"]["400"]["layers"]["4"]["rho_drift_q"] = [0.01, 3.0]
    assert "| 0.0100–0.500; 4.00 (400) | learned |" in PD.measured_words(big, [400])


def test_the_check_replaces_not_checked_where_measured():
    recs = {"bbb_mixture": {400: [_mixture(400)], 800: [_mixture(800)]}}
    get = lambda m, H: recs.get(m, {}).get(H, [])  # noqa: E731
    warm = {"bbb_mixture": [400, 800]}
    text = PD.adam_sigma_check(get, [400, 800], T.BRIEF, warm, LEARNED)
    assert "measured in a rerun of seed 0 (below)" in text
    assert "BBB, scale mixture prior at 2×800: not checked on these runs" in text
    assert "At 2×400 σ learned" in text
    full = {"widths": {"400": LEARNED["widths"]["400"], "800": LEARNED["widths"]["400"]}}
    text = PD.adam_sigma_check(get, [400, 800], T.BRIEF, warm, full)
    assert "not checked" not in text and "At 2×400 and 2×800 σ learned" in text
    three = {"widths": {H: LEARNED["widths"]["400"] for H in ("400", "800", "1200")}}
    assert "At 2×400, 2×800 and 2×1200 σ learned" in PD.measured_words(three, [400, 800, 1200])
    assert "not checked on these runs" in PD.adam_sigma_check(get, [400, 800], T.BRIEF, warm)


def test_compare_runs_both_ways():
    rec = {"history": [{"loss": 1.0, "nll": 0.5, "kl": 0.5, "val_error": 0.02,
                        "test_error": 0.021, "wall_s": 3.0}],
           "metrics": {"test_error": 0.0138, "val_error": 0.0161, "predictor": "mean_weights",
                       "test_error_single_samples": [0.02, 0.021]}}
    same = {**rec, "history": [{**rec["history"][0], "wall_s": 9.0}]}  # wall time not compared
    c = PD.compare_runs(same, rec)
    assert c["exact"] and c["max_abs_diff"] == 0.0
    off = {**rec, "metrics": {**rec["metrics"], "test_error": 0.0140}}
    c = PD.compare_runs(off, rec)
    assert not c["exact"] and c["max_abs_diff"] == pytest.approx(0.0002)
    other = {**rec, "metrics": {**rec["metrics"], "predictor": "ensemble"}}
    assert not PD.compare_runs(other, rec)["exact"]
    short = {**rec, "history": []}
    c = PD.compare_runs(short, rec)
    assert not c["exact"] and c["max_abs_diff"] is None and c["epochs"] == [0, 1]


def test_the_smoke_cli_writes_one_entry_per_width_once(shared_data, monkeypatch, tmp_path, capsys):
    sys.path.insert(0, str(ROOT / "tools"))
    import posterior_diagnostics as tool
    monkeypatch.setenv("BBB_DATA_DIR", str(shared_data))
    monkeypatch.setenv("BBB_OUTPUT_DIR", str(tmp_path))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # restored after the test (the tool sets them)
    monkeypatch.setenv("MKL_NUM_THREADS", "1")
    for v in ("BBB_RESULTS_DIR", "BBB_CHECKPOINT_DIR"):
        monkeypatch.delenv(v)
    tool.main(["--adam-mixture", "--profile", "smoke"])
    path = tmp_path / "results" / PD.NB / "adam_sigma_check.json"
    out = json.loads(path.read_text())
    assert list(out["widths"]) == ["400"] and out["profile"] == "smoke" and out["threads"] == 1
    assert "nothing is chosen from them" in out["note"] and out["code"] and out["machine"]
    e = out["widths"]["400"]
    rec = json.loads((ROOT / e["source"]).read_text())
    assert e["ran_with"]["commit"] == rec["code"]["commit"] and e["ran_with"]["threads"] == 1
    assert e["config"]["seed"] == 0 and "current_code" not in out
    assert e["config"]["init_from"] == "sgd" and e["config"]["epochs"] == 1
    assert set(e["layers"]) == set(e["biases"]) and len(e["layers"]) == 3
    assert all(v["rho_drift_q"][1] >= v["rho_drift_q"][0] > 0 for v in e["layers"].values())
    assert e["sigma_start"] == pytest.approx(PD._softplus(e["config"]["rho_init"]))
    assert not e["reproduced"]["exact"]  # a 1-epoch tiny network is not the record
    assert PD.rerun_words(e).startswith("not exactly (same recipe and seed)")
    assert list((tmp_path / "checkpoints").iterdir()) == [tmp_path / "checkpoints" / PD.ADAM_NOTEBOOK]
    before = path.read_bytes()
    capsys.readouterr()
    tool.main(["--adam-mixture", "--profile", "smoke"])
    assert "2x400: done already" in capsys.readouterr().out and path.read_bytes() == before
    tool.main(["--adam-mixture", "--profile", "smoke", "--current-code"])  # today's code, apart
    out = json.loads(path.read_text())
    assert out["widths"] == json.loads(before)["widths"] and list(out["current_code"]) == ["400"]
    assert out["current_code"]["400"]["ran_with"]["how"] == "today's code"


def test_committed_measurements_appear_in_notebook_01():
    assert COMMITTED.exists(), "run tools/posterior_diagnostics.py --adam-mixture"
    measured = json.loads(COMMITTED.read_text())
    assert measured["profile"] == "default" and measured["threads"] == 1
    widths = [int(H) for H in measured["widths"]]
    assert widths and widths == sorted(widths)
    for H, e in measured["widths"].items():
        rec = json.loads((ROOT / e["source"]).read_text())
        assert rec["config"]["H"] == int(H) and rec["config"]["seed"] == 0
        assert e["record_metrics"]["test_error"] == rec["metrics"]["test_error"]
    nb = json.loads((ROOT / "notebooks" / f"{PD.NB}.ipynb").read_text())
    shown = "".join("".join(o.get("data", {}).get("text/markdown", []))
                    for c in nb["cells"] for o in c.get("outputs", []))
    rows = [line for line in PD.measured_words(measured, widths).split("\n")
            if line.startswith("| 2×")]
    assert len(rows) == len(widths)
    for line in rows:
        assert line in shown, line


def test_table1_reads_no_verdict_where_the_mixtures_sigma_did_not_learn(committed):
    """helpers.table1 routes the Adam recipe's mixture comparisons through the rule: where the
    rerun found σ shifted uniformly (planted at 2×400) every comparison with the mixture there
    reads ``MIXTURE_NO_VERDICT`` with no Holm p; elsewhere, and with σ learned, unchanged."""
    _, paper, plan = committed
    base = T.effects(plan)
    assert T.effects(T.sigma_checked(plan, LEARNED)) == base
    void = T.effects(T.sigma_checked(plan, SHIFTED))
    hit = [k for k in void if k[0] == 400 and "bbb_mixture" in k[1:] and void[k]["ci"]]
    assert hit
    for k, e in void.items():
        if k in hit:
            assert T._verdict_of(e) == PD.MIXTURE_NO_VERDICT and e["p_holm"] is None
        else:
            assert e == base[k]
    _, rows = T.answer_rows(paper, T.sigma_checked(plan, SHIFTED))
    assert any(PD.MIXTURE_NO_VERDICT in r[3] for r in rows)
    _, rows = T.answer_rows(paper, T.sigma_checked(plan, LEARNED))
    assert not any(PD.MIXTURE_NO_VERDICT in r[3] for r in rows)
    assert T.sigma_checked(None, SHIFTED) is None and "mixture_unlearned" not in plan
