"""What the bandit agents' buffers hold at the end of notebook 03's reported runs.

    python tools/bandit_window_census.py [--steps 50000 --last 4096]

Reads the finished checkpoints of tools/bandit_runs.py (checkpoints/03_contextual_bandit/
reported_<buffer>_<steps>_s<seed>.pt; checkpoints are not committed, so this runs where the
reported runs were made) and counts, per buffer, agent and seed, the poisonous mushrooms eaten and
the edible ones passed in the last ``--last`` steps (the regret those steps cost follows: 15 and
5 each), and the poisonous mushrooms eaten among every tuple stored. Writes
results/03_contextual_bandit/window_census.json (docs/lab_log.md reads it).
"""
import re
import sys
import time

from bandit_jobs import NB, parser


def main(argv=None):
    ap = parser(__doc__)
    ap.add_argument("--steps", type=int, default=50_000)
    ap.add_argument("--last", type=int, default=4096)
    args = ap.parse_args(argv)
    import torch

    import helpers as H
    from helpers import bandit as B
    t0 = time.perf_counter()
    features, poisonous = H.load_mushroom()
    pattern = re.compile(rf"reported_(paper|keep_all)_{args.steps}_s([0-9]+)\.pt")
    rows, used = [], []
    for path in sorted((H.checkpoints_dir() / NB).glob(f"reported_*_{args.steps}_s*.pt")):
        match = pattern.fullmatch(path.name)
        if not match:
            continue
        buffer, seeds = match.group(1), (int(match.group(2)),)
        state = H.load_checkpoint(path)
        if int(state["t"]) != args.steps:
            print(f"skipping {path.name}: stopped at step {int(state['t'])} of {args.steps}")
            continue
        for row in B.window_census(state, features, poisonous, seeds=seeds, last=args.last):
            rows.append({"buffer": buffer, **row})
        used.append(path.name)
        print(f"read {path.name}")
    if not rows:
        sys.exit(f"no finished reported runs of {args.steps} steps under "
                 f"{H.checkpoints_dir() / NB}: run tools/bandit_runs.py first")
    order = [a.name for a in B.PAPER_AGENTS]  # the paper's buffer first, agents as in Figure 6
    rows.sort(key=lambda r: (r["buffer"] != "paper", order.index(r["agent"]), r["seed"]))
    path = H.save_results(NB, "window_census",
                          config={"profile": args.profile, "steps": args.steps, "last": args.last,
                                  "checkpoints": used},
                          metrics={"rows": rows}, profile=args.profile, seed=None,
                          wall_s=time.perf_counter() - t0)
    for r in rows:
        print(f"{r['buffer']:9s} {r['agent']:7s} seed {r['seed']}: last {r['last']} steps "
              f"{r['eaten_poisonous']:4d} poisonous eaten, {r['passed_edible']:3d} edible passed, "
              f"regret {r['regret_last']:5d}; poisonous eaten stored {r['eaten_poisonous_stored']}")
    print(f"wrote {path} (torch {torch.__version__})")


if __name__ == "__main__":
    main()
