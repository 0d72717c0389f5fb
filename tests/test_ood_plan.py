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
