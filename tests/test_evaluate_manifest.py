"""Manifest loading: dev.csv's layout parses; bad manifests fail with one clear line."""
from __future__ import annotations

from pathlib import Path

import pytest

from roofcast.evaluation.manifest import ManifestError, load_manifest, parse_dim

DATA = Path(__file__).parent / "data" / "eval"
DEV_CSV = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "gpuflopbench-rtx3080" \
    / "dev.csv"
HEADER = ("target,family,language,kernel,kernel_signature,omp_function,omp_line,block,grid,"
          "exe_args,xtime_ns,dram_bytes,sp_flops,dp_flops,int_ops,sp_ai,dp_ai,int_ai,label\n")


def test_fixture_manifest_rows_are_parsed():
    rows = load_manifest(DATA / "manifest.csv")
    assert len(rows) == 14
    first = rows[0]
    assert (first.target, first.language, first.kernel) == ("vecops-cuda", "CUDA", "saxpy")
    assert first.block == (256, 1, 1) and first.grid == (4096, 1, 1)
    assert first.threads == 256 * 4096
    assert first.label == "bandwidth"
    assert first.measured["sp_flops"] == 2097152
    omp = rows[8]
    assert omp.language == "OMP" and omp.omp_line == 7 and omp.exe_args == "1024"
    assert omp.omp_function_name() == "saxpy"
    assert rows[10].omp_function_name() == "relax"  # Grid::relax(double)


@pytest.mark.skipif(not DEV_CSV.is_file(), reason="dev.csv not present")
def test_dev_csv_loads_completely():
    rows = load_manifest(DEV_CSV)
    assert len(rows) == 1377
    assert {r.language for r in rows} == {"CUDA", "OMP"}
    assert all(r.block and r.grid for r in rows)
    assert all(r.omp_line is not None for r in rows if r.language == "OMP")


@pytest.mark.parametrize(("text", "dims"), [
    ("(256, 1, 1)", (256, 1, 1)), ("128", (128, 1, 1)), ("16x16", (16, 16, 1)),
    ("[8, 8, 4]", (8, 8, 4)), ("", None),
])
def test_parse_dim(text, dims):
    assert parse_dim(text) == dims


@pytest.mark.parametrize("text", ["(256, a, 1)", "(1, 2, 3, 4)", "(0, 1, 1)", "abc"])
def test_parse_dim_rejects_nonsense(text):
    with pytest.raises(ValueError):
        parse_dim(text)


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "m.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_missing_columns_are_named(tmp_path):
    path = _write(tmp_path, "target,language,kernel\nx-cuda,CUDA,k\n")
    with pytest.raises(ManifestError) as err:
        load_manifest(path)
    message = str(err.value)
    assert "\n" not in message
    assert "missing column(s)" in message and "label" in message and "block" in message


def test_bad_label_names_the_line(tmp_path):
    row = 'a-cuda,a,CUDA,k,k(int),,,"(1, 1, 1)","(1, 1, 1)",,1,1,1,1,1,1,1,1,Maybe\n'
    path = _write(tmp_path, HEADER + row)
    with pytest.raises(ManifestError, match=r"m.csv line 2: label 'Maybe'"):
        load_manifest(path)


def test_bad_block_names_the_line(tmp_path):
    good = 'a-cuda,a,CUDA,k,k(int),,,"(1, 1, 1)","(1, 1, 1)",,1,1,1,1,1,1,1,1,Compute\n'
    bad = 'a-cuda,a,CUDA,k,k(int),,,"(x, 1, 1)","(1, 1, 1)",,1,1,1,1,1,1,1,1,Compute\n'
    with pytest.raises(ManifestError, match=r"line 3: launch dimension"):
        load_manifest(_write(tmp_path, HEADER + good + bad))


def test_omp_row_needs_line(tmp_path):
    row = 'a-omp,a,OMP,e,e,main,,"(1, 1, 1)","(1, 1, 1)",,1,1,1,1,1,1,1,1,Compute\n'
    with pytest.raises(ManifestError, match="omp_function/omp_line"):
        load_manifest(_write(tmp_path, HEADER + row))


def test_missing_empty_and_binary_files(tmp_path):
    with pytest.raises(ManifestError, match="no such file"):
        load_manifest(tmp_path / "absent.csv")
    with pytest.raises(ManifestError, match="no data rows"):
        load_manifest(_write(tmp_path, HEADER))
    binary = tmp_path / "b.csv"
    binary.write_bytes(b"\xff\xfe\x00\x81garbage")
    with pytest.raises(ManifestError, match="not UTF-8|missing column"):
        load_manifest(binary)
