"""The committed plan v1 summary is what its committed run records give (issue 32).

``results/01_mnist_classification/plan_v1/summary.json`` is written by hand-run code
(``tools/table1_plan.py summary`` or ``make notebooks ONLY=01``) and committed by hand, while the
campaign's records land one by one. These tests read only committed files and check three things:

- every record the summary lists under ``inputs`` is committed with the SHA-256 it lists (no
  record was changed after it was aggregated);
- at every width whose tests are done in the summary, the rows and the plan's tests recomputed
  from the records by ``helpers.table1_plan`` are the summary's (a stale or hand-edited summary
  fails);
- the verdicts, recomputed independently with scipy from the run records alone (not with
  ``helpers.stats``): each cell's 95 % t-interval against the paper, the paired t-tests of the
  orderings and controls with Holm's step-down correction, and the comparability interval.

While a width's campaign is running, its analysis is "pending" and only the first check applies.
"""
import hashlib
import json
import math
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "results"
PLAN_DIR = RESULTS / "01_mnist_classification" / "plan_v1"
SUMMARY = PLAN_DIR / "summary.json"

pytestmark = pytest.mark.skipif(not SUMMARY.exists(), reason="no committed plan v1 summary")


def _summary():
    return json.loads(SUMMARY.read_text())


def _done_widths(summary):
    return [H for H, a in summary["analysis"].items() if a.get("status") == "done"]


def _close(a, b, tol=1e-9):
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))


def test_every_aggregated_record_is_committed_unchanged():
    summary = _summary()
    assert summary["inputs"], "the summary lists no input records"
    changed = [name for name, digest in summary["inputs"].items()
               if not (PLAN_DIR / name).exists()
               or hashlib.sha256((PLAN_DIR / name).read_bytes()).hexdigest() != digest]
    assert not changed, (f"records the summary aggregated are missing or changed: {changed[:5]}; "
                         "rerun `make notebooks ONLY=01` and commit summary.json")
    listed = hashlib.sha256(json.dumps(summary["inputs"], sort_keys=True).encode()).hexdigest()
    assert listed == summary["inputs_sha256"]


def test_done_widths_recompute_from_the_committed_records(monkeypatch):
    from helpers import table1_plan as TP
    monkeypatch.setenv("BBB_RESULTS_DIR", str(RESULTS))
    summary = _summary()
    done = _done_widths(summary)
    assert done, "no width of plan v1 is complete in the committed summary"
    s = TP.settings(TP.load_plan(), "default")
    for H in done:
        rows = json.loads(json.dumps(TP.rows(s, int(H)), default=str))
        committed = [r for r in summary["rows"] if str(r["H"]) == H]
        assert rows == committed, f"2x{H}: the summary's rows are not what the records give"
        analysis = json.loads(json.dumps(TP.analysis(s, rows), default=str))
        assert analysis == summary["analysis"][H], f"2x{H}: the summary's tests are stale"


# ---- an independent recomputation (scipy, not helpers.stats) -------------------------------

def _records(H):
    """Test error per row key and seed, from the run records the summary names."""
    summary = _summary()
    out = {}
    for row in summary["rows"]:
        if str(row["H"]) != H:
            continue
        for rel in row["runs"]:
            rec = json.loads((PLAN_DIR / rel).read_text())
            out.setdefault(row["key"], {})[rec["config"]["seed"]] = rec["metrics"]["test_error"]
    return out


def _paired(vals, a, b):
    seeds = sorted(set(vals[a]) & set(vals[b]))
    return [vals[a][s] - vals[b][s] for s in seeds]


def _t_interval(x, level=0.95):
    from scipy import stats
    m = sum(x) / len(x)
    half = stats.t.ppf(0.5 + level / 2, len(x) - 1) * stats.tstd(x) / math.sqrt(len(x))
    return m, (m - half, m + half)


def _holm(pvalues):
    order = sorted(pvalues, key=pvalues.get)
    out, run = {}, 0.0
    for i, k in enumerate(order):
        run = max(run, min(1.0, (len(order) - i) * pvalues[k]))
        out[k] = run
    return out


def _family_words(vals, claims, alpha, n):
    from scipy import stats
    raw = {c: stats.ttest_1samp(_paired(vals, *c.split(" < ")), 0.0).pvalue for c in claims}
    holm = _holm(raw)
    words = {}
    for c in claims:
        diff = sum(_paired(vals, *c.split(" < "))) / n
        words[c] = (("holds" if diff < 0 else "reversed") if holm[c] < alpha
                    else f"not resolved at {n} seed{'s' if n != 1 else ''}")
    return raw, holm, words


@pytest.mark.parametrize("H", ["400", "800", "1200"])
def test_verdicts_recomputed_with_scipy(H):
    summary = _summary()
    if H not in _done_widths(summary):
        pytest.skip(f"2x{H}: the plan's tests are not done in the committed summary")
    a = summary["analysis"][H]
    vals = _records(H)
    plan = json.loads((RESULTS / "01_mnist_classification" / "analysis_plan.json").read_text())
    alpha = plan["tests"]["alpha"]
    rows = {r["key"]: r for r in summary["rows"] if str(r["H"]) == H}
    # each cell against the paper: inside the interval "matches", else better/worse by the gap
    for key, cell in a["cells"].items():
        x = [vals[key][s] for s in sorted(vals[key])]
        assert x == rows[key]["test_error"]
        m, (lo, hi) = _t_interval(x, 1 - alpha)
        assert _close(m, cell["mean"]) and _close(lo, cell["ci"][0]) and _close(hi, cell["ci"][1])
        paper = rows[key]["paper"]
        word = ("matches the paper" if lo <= paper <= hi else
                f"{'better' if m < paper else 'worse'} than the paper by {100 * abs(m - paper):.2f} pp")
        assert cell["verdict"] == word, (key, cell["verdict"], word)
    # the orderings (one Holm family) and the controls (their own family)
    for fam in ("orderings", "controls"):
        if fam not in a:
            continue
        n = len(next(iter(vals.values())))
        raw, holm, words = _family_words(vals, list(a[fam]), alpha, n)
        for claim, got in a[fam].items():
            assert _close(raw[claim], got["t_test"]["p"], 1e-7), (claim, raw[claim])
            assert _close(holm[claim], got["p_holm"], 1e-7), (claim, holm[claim])
            assert got["verdict"] == words[claim], (claim, got["verdict"], words[claim])
    # comparability: the paired difference's interval inside the declared margin
    comp = a["comparable"]
    first, second = comp["pair"].split(" vs ")
    d = _paired(vals, first, second)
    m, (lo, hi) = _t_interval(d, 1 - alpha)
    assert _close(lo, comp["t_test"]["ci"][0], 1e-7) and _close(hi, comp["t_test"]["ci"][1], 1e-7)
    margin = plan["tests"]["comparability"]["margin_pp"] / 100
    word = ("comparable" if -margin <= lo and hi <= margin
            else f"not shown comparable at {len(d)} seed{'s' if len(d) != 1 else ''}")
    assert comp["verdict"] == word
