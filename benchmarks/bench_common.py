"""What the benchmarks share: a command line with a seconds-long ``--quick`` mode, the machine's
load beside every timing, and the results file (``results/benchmarks/<name>.json``; quick runs
write ``build/benchmarks/<name>_quick.json``, so a test never touches the committed numbers)."""
import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def parser(doc, quick_help):
    """Return a benchmark's argument parser with ``--quick``, ``--threads`` and ``--out``."""
    ap = argparse.ArgumentParser(description=doc,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help=f"seconds, for CI: {quick_help}")
    ap.add_argument("--threads", type=int, default=None, help="torch threads (2; --quick: 1)")
    ap.add_argument("--out", default=None, help="the results file (default: see --quick)")
    return ap


def settle(ap, args, name, full, quick, at_least=None):
    """Fill the command-line settings left at None from the ``quick`` or ``full`` preset (its
    other entries are the benchmark's own), check that the settings named in ``at_least``
    (setting -> minimum) hold, and return the results path."""
    for key, value in (quick if args.quick else full).items():
        if hasattr(args, key) and getattr(args, key) is None:
            setattr(args, key, value)
    for key, low in (at_least or {}).items():
        values = getattr(args, key)
        values = values if isinstance(values, list) else [values]
        if any(v is not None and v < low for v in values):
            ap.error(f"--{key.replace('_', '-')} must be >= {low}, got {getattr(args, key)}")
    if args.out:
        return Path(args.out)
    folder, file = ("build", f"{name}_quick.json") if args.quick else ("results", f"{name}.json")
    return ROOT / folder / "benchmarks" / file


def load_avg():
    """Return the 1, 5 and 15 minute load averages (timings on a loaded machine say so)."""
    return [round(v, 2) for v in os.getloadavg()]


def load_note(before, threads):
    """Return what the load average before a timing run says of it, in words."""
    cpus = os.cpu_count() or 1
    if before[0] + threads <= cpus:
        return (f"load average {before[0]} before the run, {threads} thread(s) on {cpus} CPUs: "
                "the machine had room for the benchmark")
    return (f"LOADED MACHINE: load average {before[0]} before the run with {threads} thread(s) "
            f"on {cpus} CPUs: other jobs shared the CPUs, so absolute times are inflated and "
            "noisy; ratios between rows of this run (interleaved rounds) still compare")


def write(out, record):
    """Write ``record`` to ``out`` atomically and say so; return the record."""
    from helpers.utils import atomic_write_bytes
    atomic_write_bytes(out, (json.dumps(record, indent=2) + "\n").encode())
    print(f"wrote {out}")
    return record
