"""Notebook 05's plan v2 (helpers/ood_plan.py): its out-of-distribution table from notebook 06's
equal searches, committed before the runs it reads, its claims tested by the statistics module."""
import json
import subprocess

import pytest

from helpers import alternatives_plan as A
from helpers import ood_plan as O
from helpers.analysis_plan import plan_precedes
from helpers.utils import PROJECT_ROOT as ROOT


def test_the_committed_plan_is_valid_is_the_codes_and_precedes_what_it_reads():
    committed = json.loads((ROOT / O.PLAN).read_text())
    assert O.validate(committed) == []
    assert committed == json.loads(json.dumps(O.plan()))
    assert committed["runs"]["from"] == str(A.PLAN)
    if subprocess.run(["git", "-C", str(ROOT), "rev-parse"], capture_output=True).returncode:
        pytest.skip("not a git checkout")
    assert plan_precedes(ROOT, plan=O.PLAN, governs=O.GOVERNS) == []


def test_breaches_are_found():
    p = json.loads(json.dumps(O.plan()))
    p["runs"]["reported_seeds"] = [0, 1, 2]
    p["tests"]["families"]["x"] = ["map < ivon on nll"]
    p["tests"]["from_plan_v3"]["families"]["OOD AUROC (entropy)"].append("bbb < map on ece")
    bad = " | ".join(O.validate(p))
    assert "reported seeds" in bad and "not BBB against a row" in bad
    assert "does not test" in bad


def _rec(method, seed, auroc, ece):
    return {"method": method, "seed": seed, "full": {"auroc_entropy": auroc, "ece": ece},
            "subset": {"auroc_entropy": auroc, "ece": ece}}


def test_the_claims_are_tested_paired_over_the_seeds_both_sides_have():
    recs = {}
    for s in range(6):
        recs[("bbb", s)] = _rec("bbb", s, 0.95 + 0.001 * s, 0.010)
        recs[("map", s)] = _rec("map", s, 0.80 + 0.002 * s, 0.004 + 0.0001 * s)
        recs[("mc_dropout", s)] = _rec("mc_dropout", s, 0.95 + 0.001 * s + (-1) ** s * 1e-3,
                                       0.010 + (-1) ** s * 1e-3)
    recs[("ensemble", 0)] = _rec("ensemble", 0, 0.9, 0.003)  # one seed: untestable
    # the AUROC verdicts are plan v3's (Holm over its seven claims), quoted
    v3 = {"families": {"OOD AUROC (entropy)": {
        c: {"verdict": f"v3's word for {c}", "family_size": 7}
        for c in O.FROM_V3["OOD AUROC (entropy)"]}}}
    out = O.analysis(recs, v3=v3)
    auroc = out["OOD AUROC (entropy)"]
    assert auroc["map < bbb on auroc_entropy"] == {
        "verdict": "v3's word for map < bbb on auroc_entropy", "family_size": 7, "from": "plan v3"}
    ece = out["test ECE"]
    assert ece["bbb < map on ece"]["verdict"] == "reversed"
    assert ece["bbb < mc_dropout on ece"]["verdict"].startswith("not resolved at 6")
    assert ece["bbb < ensemble on ece"]["verdict"] == "not measured yet"
    assert all(r["family_size"] == 3 for r in ece.values())


def test_the_summary_and_its_tables_read_plan_v3s_records(monkeypatch):
    from helpers import alternatives_final as F
    from helpers import alternatives_report as R
    recs = {}
    for s in range(3):
        for m, (auroc, ece) in {"bbb": (0.95, 0.01), "map": (0.9, 0.004),
                                "mc_dropout": (0.93, 0.006), "ensemble": (0.94, 0.003),
                                "ivon": (0.92, 0.005)}.items():
            recs[(m, s)] = {**_rec(m, s, auroc + 0.003 * s * (m == "bbb"), ece + 1e-4 * s),
                            "code": {"dirty": False}}
            for part in ("full", "subset"):
                recs[(m, s)][part].update({k: 0.1 for k in F.SCORES if k not in
                                           ("auroc_entropy", "ece")})
    monkeypatch.setattr(A, "chosen", lambda m: None)
    v3 = F.analysis(recs)
    out = O.summary(recs, v3)
    assert out["interim"] and set(out["table"]) == set(O.ROWS) and out["seeds"] == [0, 1, 2]
    assert out["n_records"] == 3 * len(O.ROWS)
    json.dumps(out)  # a results file
    header, rows = R.test_rows(out)
    assert len(rows) == sum(len(c) for c in out["families"].values())
    auroc = [r for r in rows if r[0].startswith("OOD AUROC")]
    assert all("plan v3, Holm over 7" in r[0] for r in auroc)
    ece = [r for r in rows if r[0] == "test ECE"]
    assert [r[3] for r in ece] == ["3", "3", "3"] and all(r[-1].endswith("(interim)") for r in ece)
    text = R.status_text(out, methods=O.ROWS)
    assert text.startswith(f"**{3 * len(O.ROWS)} of {10 * len(O.ROWS)} final runs**")
    assert f"Missing: {7 * len(O.ROWS)} runs" in text
    assert [r[0] for r in R.table_rows(out, methods=O.ROWS)[1]] == \
        [R.LABELS[m] for m in O.ROWS]


def test_search_words_count_what_the_sweeps_did():
    """Notebook 05's sentence on its searches is read from the sweep records: planted records
    with one warm-started trial that ASHA let run to the cap."""
    from helpers import uncertainty as U

    def rec(epochs, val, warm=()):
        trials = [{"config": {"init_from": "sgd"}, "epochs_run": e} for e in warm]
        trials.append({"config": {"init_from": None}, "epochs_run": epochs})
        return {"config": {"max_epochs": 50, "scheduler": {"grace_period": 5}},
                "metrics": {"chosen": {"epochs": epochs, "val": val}, "trials": trials}}
    words = U.search_words({"deterministic_mnist": rec(10, 0.07),
                            "bbb_mnist": rec(40, 0.05, warm=(5, 5, 50))})
    assert "single network 10" in words and "BBB 40" in words
    assert "(lowest validation NLL: BBB)" in words
    assert "first rung 2 of 3 on MNIST (1 ran all 50 epochs)" in words
    words = U.search_words({"deterministic_mnist": rec(10, 0.04),
                            "bbb_mnist": rec(40, 0.05, warm=(5, 5))})
    assert "(lowest validation NLL: the single network)" in words
    assert "2 of 2 on MNIST." in words
