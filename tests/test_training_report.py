"""The report of a training audit shows its canaries, guesses and assumptions, not pairs."""

from __future__ import annotations

from pathlib import Path

import pytest
from _cli import run_cli_quiet


@pytest.mark.parametrize(("flaw", "verdict"), [("reused-noise", "VIOLATION"), ("none", "")])
def test_the_report_of_a_training_audit(tmp_path: Path, capsys, flaw: str, verdict: str) -> None:
    out = tmp_path / "run"
    argv = ["-p", "noise_multiplier=2", "-p", "steps=500", "-p", f"flaw={flaw}"]
    code, _, _ = run_cli_quiet(
        capsys, "audit-training", "dpsgd", *argv, "--workers", "1", "--out", str(out)
    )
    assert code == 0
    code, _, _ = run_cli_quiet(capsys, "report", str(out))
    text = (out / "report.md").read_text(encoding="utf-8")
    assert code == 0 and "### Canaries and guesses" in text
    assert "### What the bound assumes" in text and "inclusion bits independent" in text
    assert "No witness" not in text and "Pairs tried" not in text
    assert verdict in text
    if flaw == "none":
        assert "no bound above" in text  # the power: what these canaries could have shown
