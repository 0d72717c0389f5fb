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
    bad = " | ".join(O.validate(p))
    assert "reported seeds" in bad and "not BBB against a row" in bad


def _rec(method, seed, auroc, ece):
    return {"method": method, "seed": seed, "full": {"auroc_entropy": auroc, "ece": ece},
            "subset": {"auroc_entropy": auroc, "ece": ece}}


def test_the_claims_are_tested_paired_over_the_seeds_both_sides_have():
    recs = {}
    for s in range(6):
        recs[("bbb", s)] = _rec("bbb", s, 0.95 + 0.001 * s, 0.010)
        recs[("map", s)] = _rec("map", s, 0.80 + 0.002 * s, 0.004 + 0.0001 * s)
        recs[("mc_dropout", s)] = _rec("mc_dropout", s, 0.95 + 0.001 * s + (-1) ** s * 1e-3,
                                       0.010)
    recs[("ensemble", 0)] = _rec("ensemble", 0, 0.9, 0.003)  # one seed: untestable
    out = O.analysis(recs)
    auroc = out["OOD AUROC (entropy)"]
    assert auroc["map < bbb on auroc_entropy"]["verdict"] == "holds"
    assert auroc["mc_dropout < bbb on auroc_entropy"]["verdict"].startswith("not resolved at 6")
    assert auroc["ensemble < bbb on auroc_entropy"]["verdict"] == "not measured yet"
    assert out["test ECE"]["bbb < map on ece"]["verdict"] == "reversed"
    assert all(r["family_size"] == 3 for r in auroc.values())
