"""The reported runs of notebook 03: the recipe chosen on the tuning seeds (tools/bandit_tuning.py)
for each buffer, all four of the paper's agents, on seeds that were never used for a choice.

    python tools/bandit_runs.py [--profile default --buffers paper keep_all --workers 2]
    python tools/bandit_runs.py --agents neural_linear lin_full_post bootstrap dropout uniform

Each (buffer, seed) runs in its own process on one CPU thread (``--workers`` at a time) and
checkpoints every 1,000 steps (a killed run resumes). Writes
results/03_contextual_bandit/reported_<buffer>.json: per seed and agent the cumulative regret
every ``record_every`` steps, the share of poisonous mushrooms eaten, BBB's mean sigma and the
wall time.

With ``--agents`` it runs instead the named agents of helpers/bandit_agents.py (Riquelme, Tucker &
Snoek 2018: NeuralLinear, LinFullPost, bootstrapped networks, dropout, uniform), with the
profile's steps and update budget, on the same mushroom sequence per seed; they need no tuning,
and do not checkpoint (a killed seed starts again). Writes showdown_<buffer>.json (same rows,
plus each agent's learning time per step and per update).
"""
import argparse
import json
import sys
import time

from bandit_jobs import NB, child, parser, run_jobs


def main(argv=None):
    ap = parser(__doc__)
    ap.add_argument("--buffers", nargs="+", default=["paper", "keep_all"])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--agents", nargs="+", default=None,
                    help="agents of helpers/bandit_agents.py to run instead of the paper's four")
    # child: buffer seed [agents of helpers/bandit_agents.py]
    ap.add_argument("--one", nargs="+", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    import helpers as H
    from helpers import bandit as B
    from helpers import bandit_agents as BA
    if args.agents:
        unknown = [a for a in args.agents if a not in BA.AGENTS]
        if unknown:
            ap.error(f"unknown agents {unknown}; choose from {sorted(BA.AGENTS)}")
    if args.one:
        buffer, seed, names = args.one[0], int(args.one[1]), args.one[2:]
        if names:
            child(lambda features, poisonous: BA.showdown_seed(buffer, seed, args.profile, names,
                                                               features, poisonous))
            return
        tuning = H.load_results(NB, "tuning")
        child(lambda features, poisonous: B.reported_seed(buffer, seed, args.profile, tuning,
                                                          features, poisonous))
        return
    tuning = None
    if not args.agents:
        tuning = H.load_results(NB, "tuning")
        if not tuning["metrics"]["complete"]:
            sys.exit("the tuning is not complete: run tools/bandit_tuning.py first")
    prefix = "showdown" if args.agents else "reported"
    prof = H.get_profile(NB, args.profile)
    done = {}
    for buffer in args.buffers:
        path = H.results_dir() / NB / f"{prefix}_{buffer}.json"
        if path.exists():
            old = json.loads(path.read_text())
            if old["profile"] == args.profile and (
                    not args.agents or old["config"]["agents"] == args.agents):
                done[buffer] = {r["seed"]: r for r in old["metrics"]["per_seed"]}
    todo = [(b, str(s), *(args.agents or [])) for b in args.buffers for s in prof.seeds
            if s not in done.get(b, {})]
    t0 = time.perf_counter()
    for (buffer, seed, *_), row in run_jobs(__file__, args.profile, todo, args.workers,
                                            label=lambda job: " ".join(job[:2])):
        seed = int(seed)
        done.setdefault(buffer, {})[seed] = row
        if args.agents:
            BA.save_showdown(buffer, list(done[buffer].values()), args.profile, args.workers,
                             time.perf_counter() - t0)
        else:
            B.save_reported(buffer, list(done[buffer].values()), args.profile, tuning,
                            args.workers, time.perf_counter() - t0)
        finals = {n: c[-1] for n, c in zip(row["names"], row["cum_regret"])}
        print(f"{buffer} seed {seed}: {finals} ({row['wall_s'] / 60:.1f} min)", flush=True)
    print(f"done in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
