"""Table 1 under the paper's own protocol (plain SGD on the summed cost, random start, 600 epochs).

Version 2 (the default; ``helpers.paper_search``) searches what the paper leaves open (rho0, rho's
learning rate, mu's initial range, the schedule, the prior grid) by successive halving on tuning
seeds 100-101, then trains each method's recipe on seeds 0-4 at 2x400 and 2x1200:

    python tools/paper_protocol.py plan    # write v2/plan.json (estimate from epoch_times.json)
    python tools/paper_protocol.py run     [--threads 1] [--methods ...] [--stages ...]
    python tools/paper_protocol.py status

Version 1 (issue 33's campaign, finished; ``helpers.paper_protocol``), with ``--version 1``:

    python tools/paper_protocol.py plan    [--profile default]   # measure s/epoch, write plan.json
    python tools/paper_protocol.py run     [--profile default] [--widths 1200] [--threads 1]
                                           [--device cpu|cuda]
                                           [--methods sgd dropout]
    python tools/paper_protocol.py status  [--profile default]

``plan`` writes results/01_mnist_classification/paper_protocol/plan.json: the declared grid,
stages, seeds, tests and verdict words, and the campaign's cost estimated from seconds per epoch
measured here (on seed 10, outside the notebooks' seeds). It must be committed before ``run``
computes a test number. ``run`` takes ready jobs one at a time (start it twice for two cores:
each process claims its own jobs), resumes unfinished runs from their per-epoch checkpoints and
skips finished ones; ``--widths 1200`` trains only the final runs at that width.
"""
import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

NB = "01_mnist_classification"

QUOTES = {
    "optimiser": "'Stochastic Gradient Descent on the MLE objective in Section 2' (section 5.1); "
                 "the update of section 3.2: mu <- mu - alpha Delta_mu, rho <- rho - alpha "
                 "Delta_rho (eqs. 5-6). No momentum, decay or adaptive step is mentioned.",
    "grid": "'We considered learning rates of 10^-3, 10^-4 and 10^-5 with minibatches of size 128. "
            "For Bayes by Backprop, we averaged over either 1, 2, 5, or 10 samples and considered "
            "pi in {1/4, 1/2, 3/4}, -log sigma1 in {0, 1, 2} and -log sigma2 in {6, 7, 8}.' "
            "(section 5.1)",
    "validation": "'We used the validation set to pick the best hyperparameters (learning rate, "
                  "number of gradients to average) and so we also repeated this protocol for "
                  "dropout and SGD' (section 5.1)",
    "cost": "F_i = pi_i KL[q || P] - E_q[log P(D_i | w)] (eq. 8-9): the log-likelihood summed over "
            "the minibatch; learning rates apply to this sum (reduction='sum' here).",
    "epochs": "Figure 2: test error over 600 epochs (2x1200)",
}

DEPARTURES = [
    "one weight sample per step (the paper also tried 2, 5 and 10): a 5 or 10 sample grid costs "
    "5-10x the CPU time",
    "nine screening trials per method (the mixture: the L9 fraction of its 81-point grid) at "
    "20 epochs, the best three continued to 60, the best of those trained for 600: the paper "
    "trained every grid point (for how long is not stated)",
    "the 2x1200 runs take the 2x400 search's choice",
    "rho0 = -5, means initialised as nn.Linear, Gaussian sigma in {1, e^-1, e^-2}, dropout rate in "
    "{0.2, 0.35, 0.5}: the paper is silent on these",
]

ANALYSIS = {
    "predictor": "BBB: posterior-mean weights or the average of 10 weight samples, whichever has "
                 "the lower validation error (helpers.classification.choose_predictor); others: "
                 "the network",
    "cell_vs_paper": "95% t-interval of the mean over seeds (two-sided); 'matches the paper' when "
                     "the paper's value lies inside it, else 'better than the paper by x pp' or "
                     "'worse than the paper by x pp' (x: mean minus paper)",
    "orderings": {"family": ["bbb_mixture < bbb_gaussian", "bbb_mixture < sgd", "dropout < sgd"],
                  "tests": "paired across seeds (same seed = same initial draw and data order): "
                           "two-sided paired t-test and exact sign test; Holm-corrected over the "
                           "family at each width on the t-test p-values",
                  "alpha": 0.05,
                  "words": {"holds": "Holm-adjusted p < alpha and the paper's direction",
                            "reversed": "Holm-adjusted p < alpha against the paper's direction",
                            "not resolved at n seeds": "otherwise"}},
    "comparable": {"pair": "bbb_mixture vs dropout", "margin_pp": 0.1,
                   "rule": "'comparable' when the paired difference's 95% t-interval lies inside "
                           "+-0.1 pp; else 'not shown comparable at n seeds'"},
    "mc_noise": "sd of the test error over the single weight samples of each BBB run, beside the "
                "seed sd",
    "at_2x1200": "one seed per method: per-seed values only, no test",
    "goal": "scale mixture at 2x400 within the paper's 1.36% + 0.1 pp (<= 1.46%)",
}


def measure(s, threads):
    """Return seconds per epoch (training + the per-epoch validation and test pass) per method and
    width, from a 2-epoch run on seed 10 (reserved for checks outside the notebooks)."""
    import tempfile

    import torch

    import helpers as H
    from helpers import paper_protocol as P
    from helpers.classification import RunConfig, run
    from helpers.profiles import PAPER_FIXED
    torch.set_num_threads(threads)
    data = H.load_mnist(scale="paper", n_train=s["n_train"], n_test=s["n_eval"])
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["BBB_CHECKPOINT_DIR"] = tmp
        for H_ in s["widths"]:
            for method in P.COST_ORDER:
                point = P.design(method, 1)[0]
                cfg = RunConfig(method=method, H=H_, epochs=2, seed=10, **PAPER_FIXED, **point)
                t0 = time.perf_counter()
                run(cfg, data, notebook=NB, eval_samples=1, test=False, checkpoint_every=1)
                per_epoch = (time.perf_counter() - t0) / 2
                out[f"{method}_h{H_}"] = round(per_epoch, 2)
                print(f"{method} H={H_}: {per_epoch:.2f} s/epoch", flush=True)
        del os.environ["BBB_CHECKPOINT_DIR"]
    return out


def estimate(s, spe):
    """Return the campaign's CPU-hours per stage from seconds per epoch ``spe``."""
    H0 = s["search_width"]
    screen = sum(s["trials"] * s["screen_epochs"] * spe[f"{m}_h{H0}"] for m in spe_methods(spe))
    cont = sum(s["keep"] * (s["continue_epochs"] - s["screen_epochs"]) * spe[f"{m}_h{H0}"]
               for m in spe_methods(spe))
    final = {w: sum(len(s["seeds"][w]) * s["final_epochs"] * spe[f"{m}_h{w}"]
                    for m in spe_methods(spe)) for w in s["widths"]}
    return {"screen_cpu_h": round(screen / 3600, 2), "continue_cpu_h": round(cont / 3600, 2),
            **{f"final_h{w}_cpu_h": round(v / 3600, 2) for w, v in final.items()},
            "per_run_cpu_h": {k: round(v * s["final_epochs"] / 3600, 2) for k, v in spe.items()}}


def spe_methods(spe):
    return sorted({k.rsplit("_h", 1)[0] for k in spe})


def cmd_plan(args):
    from helpers import paper_protocol as P
    from helpers.profiles import PAPER_FIXED, PAPER_SPACES
    from helpers.utils import atomic_write_bytes, machine_info
    s = P.settings(args.profile)
    path = P.root() / "plan.json"
    if path.exists() and not args.force:
        sys.exit(f"{path} exists: a plan is changed only as a new version (--force, then say "
                 "why in docs/choices.md)")
    spe = measure(s, args.threads)
    rec = {"version": 1, "protocol": "paper", "profile": args.profile,
           "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "quotes": QUOTES, "fixed": PAPER_FIXED, "spaces": PAPER_SPACES,
           "designs": {m: P.design(m, s["trials"]) for m in P.COST_ORDER},
           "stages": {"screen": f"{s['trials']} trials per method, {s['screen_epochs']} epochs, "
                                f"seed {s['tuning_seed']}, width {s['search_width']}, validation "
                                "error of the chosen predictor; no test number",
                      "continue": f"the best {s['keep']} per method continued to "
                                  f"{s['continue_epochs']} epochs from their checkpoints",
                      "final": f"the best continued trial per method: {s['final_epochs']} epochs "
                               "from a random start on each reported seed and width; validation "
                               "and test error after every epoch (test only drawn)"},
           "settings": s, "departures": DEPARTURES, "analysis": ANALYSIS,
           "seconds_per_epoch": spe, "threads": args.threads,
           "estimate": estimate(s, spe), "machine": machine_info()}
    atomic_write_bytes(path, (json.dumps(rec, indent=1) + "\n").encode())
    print(json.dumps(rec["estimate"], indent=1))
    print(f"wrote {path}: commit it before `run`")


def cmd_run(args):
    import torch

    import helpers as H
    from helpers import paper_protocol as P
    s = P.settings(args.profile)
    if not (P.root() / "plan.json").exists():
        sys.exit("no plan.json: run `python tools/paper_protocol.py plan` and commit it first")
    if args.widths:
        bad = [w for w in args.widths if w not in s["widths"]]
        if bad:
            sys.exit(f"widths {bad} are not in the plan's {list(s['widths'])}")
        s["widths"] = tuple(args.widths)
    torch.set_num_threads(args.threads)
    from helpers.utils import get_device
    device = get_device(args.device)  # a clear error when CUDA is asked for and absent
    data = H.load_mnist(scale="paper", n_train=s["n_train"], n_test=s["n_eval"], device=device)
    n = P.drive(data, s, log=lambda m: print(m, flush=True), poll_s=args.poll,
                max_jobs=args.max_jobs, stop_after_stage=args.until,
                methods=args.methods)
    print(f"ran {n} jobs; {P.plan_jobs(s)[1]} still to do")


def cmd_status(args):
    from helpers import paper_protocol as P
    s = P.settings(args.profile)
    ready, remaining = P.plan_jobs(s)
    by_stage = {}
    for j in ready:
        by_stage[j.stage] = by_stage.get(j.stage, 0) + 1
    print(f"ready: {by_stage or 'none'}; still to do: {remaining}")
    for m in P.COST_ORDER:
        rec = P.chosen(s, m)
        print(f"{m:14s} chosen: {rec['name'] if rec else '(search running)'}")
    for name, epoch, epochs in P.progress(s):
        print(f"in progress: {name}  epoch {epoch}/{epochs}")


# --- version 2 ------------------------------------------------------------------------------------

QUOTES_V2 = dict(QUOTES, **{
    "rho": "'the variational posterior parameters are theta = (mu, rho)' ... 'sigma = "
           "log(1 + exp(rho))' (section 3.2): no initial value of rho is given",
    "schedule": "no learning-rate schedule is mentioned (sections 3.2 and 5.1)",
})

PILOT = ("A pilot before this plan (2x400, plain SGD, summed cost, lr 1e-3, 30 epochs, validation "
         "only, a reserved seed; issue 49) informed the grid: with one learning rate sigma stayed "
         "within 3 % of its start for rho0 = -5 and -3; sigma1 = 1 beat e^-2; rho's learning rate "
         "x30 let sigma move, x300 diverged. Hence rho0 in {-5, -4, -3}, rho's rate x1 or x30, "
         "and the paper's full sigma1 range re-screened.")

DEPARTURES_V2 = [
    "one weight sample per step (the paper also tried 2, 5 and 10)",
    "12 trials per method at 60 epochs on two tuning seeds, the best 4 continued to 200, the best "
    "2 to 600 under both schedules: the paper trained every grid point (for how long is not "
    "stated); the scale mixture's 12 trials cover its 3 x 3 x 3 prior grid in a balanced design "
    "(each value 4 times, pairs of factors nearly orthogonal), not all 27 points",
    "searched although the paper is silent: rho0, a learning rate for rho of its own (x1 or x30 "
    "mu's), mu's initial range (nn.Linear's or U(-0.1, 0.1)), the schedule (constant, or x0.1 "
    "after epoch 300), the Gaussian prior's sigma and the dropout rate",
    "learning rates: the paper's grid is {1e-3, 1e-4, 1e-5}; here plain SGD tries 12 values "
    "from 1e-4 to 10^-1.8 (1.2 decades above 1e-3, none at 1e-5), dropout 10^-3.5 to 10^-2 (none "
    "at 1e-4 or 1e-5), BBB 1e-3 and 10^-2.5 only (half a decade above; none below 1e-3: version "
    "1's screen found 1e-4 and 1e-5 far behind)",
    "widths 2x400 and 2x1200 only (the paper's Table 1 also has 2x800); the 2x1200 runs take the "
    "2x400 search's recipe",
]

ANALYSIS_V2 = dict(ANALYSIS, **{
    "search_score": "mean validation error over tuning seeds 100 and 101 of the chosen predictor "
                    "at the rung's end; a run that diverged scores worst; ties by setting",
    "cell_vs_paper": "mean over seeds 0-4 with its 95% t-interval, and the difference mean - "
                     "paper with the same interval; 'matches the paper' when the paper's value "
                     "lies inside the interval, else 'better/worse than the paper by x pp'",
    "orderings": dict(ANALYSIS["orderings"], **{
        "report": "each ordering as the paired difference (mean over seeds 0-4) with its 95% "
                  "t-interval, the paper's difference beside it, and whether the interval "
                  "excludes the paper's difference; verdict words from helpers.stats (paired "
                  "two-sided t-test, Holm over the family at each width)",
        "words": {"holds": "Holm-adjusted p < alpha and the paper's direction",
                  "reversed": "Holm-adjusted p < alpha against the paper's direction",
                  "not resolved at 5 seeds": "otherwise; always with its interval and whether "
                                             "the interval excludes the paper's difference"}}),
    "at_2x1200": "5 seeds per method, the same tests as at 2x400",
    "posterior_trained": "before any BBB verdict: per final BBB run and layer, the ratio of "
                         "sigma's 95 % to its 5 % quantile (1 at the start: every sigma is "
                         "softplus(rho0); a drift that moves all sigmas alike keeps it near 1) "
                         "and the median sigma's move from its start; a row where some seed has "
                         "no layer with a ratio >= 1.5 is labelled 'posterior widths did not "
                         "train' beside its numbers",
    "reported_error": "the chosen predictor's test error after the last epoch (600); the "
                      "per-epoch test curves are drawn, never used to pick an epoch",
    "diverged": "a final or ablation run that diverges is reported as diverged for its seed and "
                "method (not rerun, not replaced); the tests use the seeds both sides finished",
    "grid_edges": "a recipe at the edge of its grid is named as such beside its row (BBB's "
                  "learning rate has two values: always an edge); no grid is widened after "
                  "these numbers",
    "sign_test": "reported beside the t-test; at 5 seeds its smallest two-sided p is 2/32 = "
                 "0.0625, so it cannot reach alpha 0.05 alone",
    "noise": "validation error on 10k images: a 2-seed mean has a standard error of about "
             "0.1 pp, so near-ties in the search are within noise: the recipe (prior, schedule) "
             "is a choice, never reported as a finding",
    "ablations": "the scale mixture's recipe with one choice set back to version 1's at a time, "
                 "seeds 0 and 1 at 2x400, 600 epochs: the paired difference to the recipe on the "
                 "same seeds; labelled ablations, no verdict words",
    "figure2": "2x1200: test error against epoch, mean over seeds 0-4 with the range, the paper's "
               "Table 1 values marked",
    "goal": "scale mixture <= 1.46% at 2x400 and <= 1.42% at 2x1200 (mean over seeds)",
})


AMENDMENT = (
    "Re-declared on 2026-11-28 at about 09:55 UTC, 16 minutes after the first declaration "
    "(aea247a), when two rung-1 validation records existed (two of the scale mixture's trials "
    "that the new design drops; deleted) and no rung decision had been made, after a referee's "
    "reading of the plan: (1) at each rung BBB keeps the best trial of each value of rho's "
    "learning rate (STRATIFY), since sigma moves slowly and a 60-epoch screen would drop the "
    "learned-width settings the plan exists to test; (2) the BBB designs try every pair of values "
    "of two factors (the first design never paired pi 3/4 with sigma1 = 1, the pilot's prior); "
    "(3) 'posterior trained' reads sigma's spread, not its median; (4) the ablations also step "
    "back the learning rate and mu's start; (5) rules for diverged runs, grid edges, the reported "
    "epoch, the sign test's floor and the search's noise declared; the departures corrected.")


def estimate_v2(s, rates):
    """Return the campaign's CPU-hours per part from seconds per epoch ``rates`` ({(method, H)})."""
    from helpers import paper_search as P
    n_seeds, (r1, r2, r3), (k1, k2) = len(s["tuning_seeds"]), s["rungs"], s["keep"]
    per_trial = (s["trials"] * r1 + k1 * (r2 - r1) + k2 * len(s["schedules"]) * (r3 - r2))
    search = {m: n_seeds * per_trial * rates[(m, s["search_width"])] for m in P.COST_ORDER}
    final = {H: sum(len(s["seeds"][H]) * s["final_epochs"] * rates[(m, H)] for m in P.COST_ORDER)
             for H in s["widths"]}
    abl = 6 * len(s["ablation_seeds"]) * s["final_epochs"] * rates[("bbb_mixture",
                                                                    s["search_width"])]
    out = {"search_epochs_per_method": n_seeds * per_trial,
           "search_cpu_h": round(sum(search.values()) / 3600, 1),
           **{f"final_h{H}_cpu_h": round(v / 3600, 1) for H, v in final.items()},
           "ablations_cpu_h": round(abl / 3600, 1)}
    out["total_cpu_h"] = round(out["search_cpu_h"] + sum(v for k, v in out.items()
                                                         if k.startswith("final_"))
                               + out["ablations_cpu_h"], 1)
    return out


def cmd_plan_v2(args):
    from helpers import paper_search as P
    from helpers.utils import PROJECT_ROOT, atomic_write_bytes, machine_info
    s = P.settings(args.profile)
    path = P.root() / "plan.json"
    if path.exists() and not args.force:
        sys.exit(f"{path} exists: a plan is changed only as a new version (--force, then say "
                 "why in docs/choices.md)")
    bench = PROJECT_ROOT / "results" / "benchmarks" / "epoch_times.json"
    rows = json.loads(bench.read_text())["rows"]
    rates = {(r["method"], r["H"]): r["s_per_epoch"] for r in rows}
    spaces = {m: {k: ["nn.Linear's bound" if v is None else v for v in vals]
                  for k, vals in sp.items()} for m, sp in P.SPACES.items()}
    rec = {"version": 2, "protocol": "paper v2", "profile": args.profile,
           "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "quotes": QUOTES_V2, "fixed": P.FIXED, "spaces": spaces,
           "designs": {m: P.design(m, s["trials"]) for m in P.COST_ORDER},
           "schedules": {k: (f"lr x {P.GAMMA} after epochs {list(v)}" if v else "constant")
                         for k, v in s["schedules"].items()},
           "stages": {"rung1": f"{s['trials']} trials per method, {s['rungs'][0]} epochs, "
                               f"seeds {list(s['tuning_seeds'])}, width {s['search_width']}, "
                               "constant learning rate, validation only",
                      "rung2": f"the best {s['keep'][0]} continued to {s['rungs'][1]} epochs",
                      "rung3": f"the best {s['keep'][1]} continued to {s['rungs'][2]} epochs "
                               "under each schedule (a step decay branches from the constant "
                               "run's checkpoint); the best (setting, schedule): the recipe",
                      "final": f"each recipe from a random start, {s['final_epochs']} epochs, "
                               f"seeds {dict((k, list(v)) for k, v in s['seeds'].items())}; "
                               "validation and test error after every epoch (test only "
                               "reported and drawn)",
                      "ablation": "the scale mixture's recipe with one of version 1's choices "
                                  f"at a time, seeds {list(s['ablation_seeds'])}, width "
                                  f"{s['search_width']}"},
           "order": "searches first, then the 2x400 final runs, the ablations, the 2x1200 runs",
           "settings": {k: (v if k != "seeds" else {str(h): list(x) for h, x in v.items()})
                        for k, v in s.items()},
           "pilot": PILOT, "departures": DEPARTURES_V2, "analysis": ANALYSIS_V2,
           "seconds_per_epoch": {f"{m}_h{H}": v for (m, H), v in sorted(rates.items())},
           "rate_source": "results/benchmarks/epoch_times.json (1 thread, idle machine, "
                          "validation and test after every epoch: an upper bound for the search, "
                          "which skips the test pass)",
           "estimate_note": "rates from an idle machine, one process per core; a shared machine "
                            "ran version 1's BBB runs 1.2-1.5x slower: expect 80-100 CPU-h",
           "amendment": AMENDMENT,
           "estimate": (estimate_v2(s, rates) if all((m, H) in rates for m in P.COST_ORDER
                                                     for H in s["widths"]) else None),
           "machine": machine_info(),
           "version_1": "results/01_mnist_classification/paper_protocol/plan.json (its runs stay "
                        "in the results as version 1)"}
    atomic_write_bytes(path, (json.dumps(rec, indent=1) + "\n").encode())
    print(json.dumps(rec["estimate"], indent=1))
    print(f"wrote {path}: commit it before `run`")


def cmd_run_v2(args):
    import torch

    import helpers as H
    from helpers import paper_search as P
    from helpers.utils import get_device
    s = P.settings(args.profile)
    if not (P.root() / "plan.json").exists():
        sys.exit("no v2/plan.json: run `python tools/paper_protocol.py plan` and commit it first")
    torch.set_num_threads(args.threads)
    device = get_device(args.device)
    data = H.load_mnist(scale="paper", n_train=s["n_train"], n_test=s["n_eval"], device=device)
    n = P.drive(data, s, log=lambda m: print(m, flush=True), poll_s=args.poll,
                max_jobs=args.max_jobs, methods=args.methods, stages=args.stages)
    print(f"ran {n} jobs; {P.plan_jobs(s)[1]} still to do")


def cmd_status_v2(args):
    from helpers import paper_search as P
    s = P.settings(args.profile)
    ready, todo = P.plan_jobs(s)
    by_stage = {}
    for j in ready:
        by_stage[j.stage] = by_stage.get(j.stage, 0) + 1
    print(f"ready: {by_stage or 'none'}; still to do: {todo}")
    for line in P.progress(s):
        print(line)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["plan", "run", "status"])
    ap.add_argument("--version", type=int, choices=[1, 2], default=2,
                    help="2: the search of what the paper leaves open (default); 1: issue 33's")
    ap.add_argument("--stages", nargs="*", default=None,
                    help="version 2: take only these stages' jobs (rung1 rung2 rung3 final "
                         "ablation)")
    ap.add_argument("--profile", default="default")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--device", default="cpu",
                    help="where `run` trains: cpu (default) or cuda; each run's record names its "
                         "machine (the GPU included)")
    ap.add_argument("--widths", type=int, nargs="*", default=None)
    ap.add_argument("--poll", type=float, default=30.0)
    ap.add_argument("--max-jobs", type=int, default=None)
    ap.add_argument("--until", choices=["screen", "continue", "final"], default=None,
                    help="version 1 only")
    ap.add_argument("--force", action="store_true")
    ap.add_argument("--methods", nargs="*", default=None,
                    help="take only these methods' jobs (e.g. sgd dropout: the short runs)")
    args = ap.parse_args(argv)
    from helpers.utils import use_profile_outputs
    use_profile_outputs(args.profile)  # only `default` writes the committed results
    if args.version == 2:
        {"plan": cmd_plan_v2, "run": cmd_run_v2, "status": cmd_status_v2}[args.command](args)
    else:
        {"plan": cmd_plan, "run": cmd_run, "status": cmd_status}[args.command](args)


if __name__ == "__main__":
    main()
