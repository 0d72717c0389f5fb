"""The README: short, and its status table is exactly what the committed results say."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_readme_fits_on_a_screen():
    text = (ROOT / "README.md").read_text()
    assert len(text) < 8000, f"README.md has {len(text)} characters (limit 8,000)"
    assert "make notebooks" in text and "make test" in text


def test_status_table_matches_the_results():
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "status_table.py"), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_docs_exist_and_cite_results_files():
    for name in ("lab_log.md", "performance.md"):
        text = (ROOT / "docs" / name).read_text()
        assert "results/" in text, f"docs/{name} cites no results file"


def test_lab_log_tables_match_the_results():
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "lab_log.py"), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
