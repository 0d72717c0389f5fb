"""Rewrite (or check) the README's line on run times and docs/reading.md's table of long runs
from the results files.

    python tools/runtimes_table.py           # rewrite the blocks between the runtimes markers
    python tools/runtimes_table.py --check   # exit 1 when a block differs from the results

Times, all recorded by committed code: `make notebooks` from results/runtimes.json (written by
tools/run_notebooks.py), every training step from the wall times its own results files hold:
the runs of the version each notebook reports (``steps``), each record timed by
``record_seconds``. Campaigns still running whose runs no notebook reports yet (the paper
protocol's version 2, the bandit's plan v3) are not timed.
"""
import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))
from marked_block import rewrite  # noqa: E402

START, END = "<!-- runtimes:start -->", "<!-- runtimes:end -->"
NOTEBOOKS = ("00_theory", "01_mnist_classification", "02_regression_uncertainty",
             "03_contextual_bandit", "04_pruning", "05_uncertainty", "06_alternatives")


def _results():
    from helpers.utils import results_dir
    return results_dir()


def _load(rel):
    path = _results() / rel
    return json.loads(path.read_text()) if path.exists() else None


def duration(seconds):
    """'1.5 min' below 10 minutes, '12 min' below 90, else '3.4 h'; '—' when unknown."""
    if seconds is None:
        return "—"
    if seconds < 600:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 60:.0f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"


def notebooks_time(profile="default"):
    """Return (seconds, entries) of the latest run of every notebook in ``profile`` (None when one
    is missing)."""
    runs = (_load("runtimes.json") or {}).get(profile, {})
    entries = [runs.get(nb) for nb in NOTEBOOKS]
    if any(e is None for e in entries):
        return None, entries
    return sum(e["wall_s"] for e in entries), entries


NB01, NB05, NB06 = "01_mnist_classification", "05_uncertainty", "06_alternatives"
V3 = f"{NB06}/v3"  # the version of notebook 06's runs that notebooks 05 and 06 report
OOD_METHODS = ("map", "mc_dropout", "ensemble", "bbb")  # notebook 05's four (ood_plan.ROWS)
OOD_SEARCHES = ("map", "mc_dropout", "bbb")  # the deep ensemble's members are MAP's setting
MORE_06 = ("ivon", "laplace_ll_kron", "laplace_diag", "laplace_kron")  # 06's rows beyond 05's


def record_seconds(rec):
    """Seconds that one record's run took: the largest of its training time
    (``metrics.train_wall_s``, or its trial row's ``wall_s``: both span every process of a run
    resumed after a stop), its process's wall time (``process_wall_s``: the last process only,
    evaluation included) and a plain ``wall_s``; None when it holds none."""
    metrics = rec.get("metrics") if isinstance(rec.get("metrics"), dict) else {}
    row = rec.get("row") if isinstance(rec.get("row"), dict) else {}
    found = [metrics.get("train_wall_s"), row.get("wall_s"), rec.get("process_wall_s"),
             rec.get("wall_s")]
    found = [v for v in found if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return max(found) if found else None


def _on_gpu(rec):
    """True when the run (or a segment of a resumed run) ran on a GPU."""
    machines = [rec.get("machine")] + [s.get("machine") for s in rec.get("segments") or []]
    return any(isinstance(m, dict) and str(m.get("device", "")).startswith("cuda")
               for m in machines)


def timed(patterns, keep=None):
    """Sum the records under results/ that match the glob ``patterns``: return (seconds, n,
    n_gpu), seconds None when no record holds a time. ``keep(record)`` filters the records."""
    root, total, n, gpu = _results(), 0.0, 0, 0
    for path in sorted({p for pat in patterns for p in root.glob(pat)}):
        rec = json.loads(path.read_text())
        if keep is not None and not keep(rec):
            continue
        s = record_seconds(rec)
        if s is None:
            continue
        total, n, gpu = total + s, n + 1, gpu + _on_gpu(rec)
    return (total if n else None), n, gpu


def _what(label, n, gpu, noun="runs"):
    """'label: N runs' (+ ', M of them on a GPU, in whole or in part')."""
    on = f", {gpu} of them on a GPU (in whole or in part)" if gpu else ""
    return f"{label}: {n} {noun if n != 1 else noun[:-1]}{on}"


def _v3(kind, methods):
    return [f"{V3}/{kind}/{m}/*.json" for m in methods]


def steps():
    """Return the rows (what, seconds, command, counted in the total) of every long step: the
    runs each notebook reports, read from their own records (the version it reports)."""
    from helpers import pruning
    fits, toy = _load("02_regression_uncertainty/fits.json"), _load("05_uncertainty/priors_2d.json")
    snr = _load("04_pruning/snr.json")
    bandit = [_load(f"03_contextual_bandit/{n}.json")
              for n in ("tuning", "reported_paper", "reported_keep_all")]
    rows = []

    def add(label, patterns, command, noun="runs", keep=None):
        s, n, gpu = timed(patterns, keep)
        rows.append((_what(label, n, gpu, noun), s, command, True))

    v1, pp = f"{NB01}/plan_v1", f"{NB01}/paper_protocol"
    add(f"Table 1, Adam recipe (01): the searches (trials, and the SGD networks the "
        f"warm-started trials start from), `{v1}/search/`", [f"{v1}/search/h*/*/*.json"],
        "`make table1 PROTOCOL=plan_v1 JOBS=2`", noun="records")
    add(f"Table 1, Adam recipe (01): the final runs, controls and warm-start sources, "
        f"`{v1}/runs/`", [f"{v1}/runs/h*/*/*.json"], "`make table1 PROTOCOL=plan_v1 JOBS=2`")
    add(f"Table 1, paper's protocol (01): the searches, `{pp}/search/`",
        [f"{pp}/search/*.json"], "`python tools/paper_protocol.py run --version=1`",
        noun="trials")
    for H in sorted({(json.loads(p.read_text()).get("config") or {}).get("H")
                     for p in _results().glob(f"{pp}/runs/*.json")} - {None}):
        add(f"Table 1, paper's protocol, 2×{H} (01): the final runs, `{pp}/runs/`",
            [f"{pp}/runs/*.json"], "`python tools/paper_protocol.py run --version=1"
            + ("`" if H == 400 else f" --widths {H}`"),
            keep=lambda r, H=H: (r.get("config") or {}).get("H") == H)
    rows.append(("regression fits (02): `02_regression_uncertainty/fits.json`",
                 fits and fits["wall_s"], "`make retrain ONLY=02`", True))
    rows.append(("bandit (03): the earlier runs notebook 03 reports (its tuning, then both "
                 "buffers' runs), `03_contextual_bandit/{tuning,reported_paper,"
                 "reported_keep_all}.json`",
                 sum(b["wall_s"] for b in bandit) if all(bandit) else None,
                 "`python tools/bandit_tuning.py`, then `python tools/bandit_runs.py`", True))
    rows.append(("pruned networks (04): notebook 01's earlier Adam runs, not Table 1's (each "
                 f"with the SGD network its means start from), `{NB01}/runs/`",
                 snr and pruning.retrain_seconds(snr)[0], "`make retrain ONLY=04`", True))
    add("pruning's reference networks (04): SGD and dropout retrained, and BBB's starting "
        "networks, `04_pruning/{v2,v3}/networks/`",
        ["04_pruning/v2/networks/*.json", "04_pruning/v3/networks/*.json"],
        "`python tools/pruning_refs.py run`", noun="networks")
    add(f"unfamiliar inputs (05): notebook 06's final runs of MAP, MC dropout, the deep "
        f"ensemble and BBB, `{V3}/final/`", _v3("final", OOD_METHODS),
        "`python tools/alternatives_search.py final --methods map mc_dropout ensemble bbb`")
    add(f"unfamiliar inputs (05): their searches (the ensemble's members use MAP's), "
        f"`{V3}/search/`", _v3("search", OOD_SEARCHES),
        "`python tools/alternatives_search.py search --methods map mc_dropout bbb`",
        noun="trials")
    add(f"methods compared (06), beyond 05's rows: the final runs of IVON and the three Laplace "
        f"fits (around MAP's networks), `{V3}/final/`", _v3("final", MORE_06),
        "`python tools/alternatives_search.py final --methods " + " ".join(MORE_06) + "`")
    add(f"methods compared (06): IVON's search, `{V3}/search/ivon/`", _v3("search", ("ivon",)),
        "`python tools/alternatives_search.py search --methods ivon`", noun="trials")
    add(f"methods compared (06): the Laplace fits with a fair prior precision (validation, "
        f"then test), `{V3}/laplace_fair/`",
        [f"{V3}/laplace_fair/seed*.json", f"{V3}/laplace_fair/test/seed*.json"],
        "`python tools/laplace_fair.py run`, then `score`", noun="records")
    rows.append(("2-D priors (05), its appendix's networks (the conv net, an exercise, is not "
                 "timed), `05_uncertainty/priors_2d.json`",
                 (toy or {}).get("wall_s"), "`make retrain ONLY=05`", True))
    return rows


def lacking():
    """Return [(what, seconds)]: the training steps of notebooks 02, 04 and 05 whose results a
    plain `make notebooks` cannot read back, with the time they took when last recorded (05's
    conv net is an exercise now: no notebook trains it)."""
    from helpers import regression, toy
    from helpers.profiles import get_profile
    out = []
    p02 = get_profile("02_regression_uncertainty", "default")
    p05 = get_profile("05_uncertainty", "default")
    if regression.load_fits(p02, 0.02) is None:
        fits = _load("02_regression_uncertainty/fits.json")
        out.append(("regression fits", fits and fits["wall_s"]))
    if toy.load_toy("default", p05.toy_n, p05.toy_steps) is None:
        out.append(("2-D priors", (_load("05_uncertainty/priors_2d.json") or {}).get("wall_s")))
    snr = _load("04_pruning/snr.json")
    if not snr or not snr["metrics"].get("complete"):
        from helpers import pruning
        out.append(("pruned networks", snr and pruning.retrain_seconds(snr)[0]))
    return out


def summary():
    """The README's line: how long `make notebooks` takes from results/, and the sum of the
    training times of every run the notebooks report; each step's time, runs and command are
    in docs/reading.md."""
    total, _ = notebooks_time()
    cold = sum(s or 0 for _, s, _, counted in steps() if counted)
    return (f"`make notebooks` takes about {duration(total)}; retraining every reported run, "
            f"about {duration(cold)} summed over the runs "
            "([each step](docs/reading.md#how-long-each-step-takes)).")


def body():
    total, entries = notebooks_time()
    clean = all(e and e.get("train") is not True and e.get("checkpoints") is False
                for e in entries)
    # no date (the machine's history is docs/performance.md's); what the timed runs read
    note = ("from results/ alone" if clean else
            "timed with training checkpoints on disk or `TRAIN=1`; a fresh clone may differ")
    rows = [("all notebooks, from results/", f"{duration(total)} ({note})" if entries else
             "never timed", "`make notebooks`")]
    missing = lacking()
    what = ", ".join(w for w, _ in missing) or "nothing"
    rows.append((f"... `TRAIN=1`, fresh clone (trains {what}"
                 + (": results/ hold every run, so the same time)" if not missing else ")"),
                 duration(None if total is None or any(s is None for _, s in missing)
                          else total + sum(s for _, s in missing)), "`make retrain`"))
    long = steps()
    rows += [(what, duration(s), cmd) for what, s, cmd, _ in long]
    cold = sum(s or 0 for _, s, _, counted in long if counted)
    rows.append(("every run above, from nothing (sum)", duration(cold),
                 "each row's command, on an empty results/"))
    lines = ["| step: the runs timed | time | command |", "|---|---|---|"]
    lines += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    rewrite(ROOT / "README.md", START, END, summary(), "README's line on run times",
            "python tools/runtimes_table.py", check=args.check)
    rewrite(ROOT / "docs" / "reading.md", START, END, body(), "docs/reading.md's table of long runs",
            "python tools/runtimes_table.py", check=args.check)


if __name__ == "__main__":
    main()
