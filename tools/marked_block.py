"""Rewrite (or check) the generated block between two markers of a text file: the shared main of
tools/status_table.py and tools/lab_log.py."""
import sys


def rewrite(path, start, end, body, what, command, check=False):
    """Put ``body`` between ``start`` and ``end`` in ``path``; with ``check`` only compare."""
    text = path.read_text()
    if start not in text or end not in text:
        sys.exit(f"{path} lacks the markers {start} ... {end}")
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    new = f"{head}{start}\n{body}\n{end}{tail}"
    if check:
        if new != text:
            sys.exit(f"{what} differs from the results: run `{command}`")
        print(f"{what}: up to date with the results")
        return
    path.write_text(new)
    print(f"{what} rewritten from results/")
