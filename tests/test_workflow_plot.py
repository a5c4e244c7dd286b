"""Roofline picture: files written in every format, with the ceilings and kernels drawn."""
from __future__ import annotations

import base64

import matplotlib.image as mpimg
import numpy as np
import pytest
from roofcast.gpu_specs import load_gpu
from workflow_reports import SPECS, report

from roofcast.workflow import plot as rp
from roofcast.workflow.view import kernel_views


@pytest.fixture
def fig(tmp_path):
    return rp.figure(report("rtx3080", SPECS, tmp_path), load_gpu("rtx3080"), tmp_path)


def test_png_shows_every_class_ceiling(tmp_path, fig):
    out = tmp_path / "roofline.png"
    rp.save(fig, out)
    img = mpimg.imread(out)[..., :3]
    assert img.shape[0] > 500 and img.shape[1] > 800
    for cls, color in rp.COLORS.items():
        rgb = np.array([int(color[i:i + 2], 16) / 255 for i in (1, 3, 5)])
        close = np.abs(img - rgb).max(axis=2) < 0.08
        assert close.sum() > 200, f"{cls} ceiling not drawn"


def test_svg_names_every_kernel_and_balance_point(tmp_path, fig):
    out = tmp_path / "roofline.svg"
    rp.save(fig, out)
    text = out.read_text()
    for name in ("saxpy", "dp_poly", "sgemm_tile", "FP64 balance 0.515", "INT32 balance 16.5"):
        assert name in text
    gpu = load_gpu("rtx3080")
    for group in rp._ceilings(gpu.peaks):
        names = "/".join(rp.LABELS[c] for c in group)
        assert f"{names} balance {gpu.balance_points[group[0]]:.3g}" in text


def test_equal_peaks_share_one_ceiling():
    assert rp._ceilings({"sp": 25e12, "dp": 0.4e12, "hp": 25e12, "int": 12.5e12}) == [
        ["sp", "hp"], ["dp"], ["int"]]
    assert rp._ceilings({"sp": 19.5e12, "dp": 9.7e12}) == [["sp"], ["dp"]]


def test_html_embeds_the_svg(tmp_path, fig):
    out = tmp_path / "roofline.html"
    rp.save(fig, out)
    html = out.read_text()
    payload = html.split("base64,")[1].split('"')[0]
    assert b"<svg" in base64.b64decode(payload)


def test_unknown_format_is_refused(tmp_path, fig):
    with pytest.raises(ValueError, match="use one of"):
        rp.save(fig, tmp_path / "roofline.jpg")


def test_kernels_sit_on_their_dominant_roof(tmp_path):
    """Same spot, same marker: the plot groups kernels that coincide instead of overprinting."""
    specs = SPECS + [("saxpy2", "src/b2.cu", 1, 8, 4, {"sp": 2, "int": 3})]
    views = list(kernel_views(report("rtx3080", specs, tmp_path), tmp_path))
    points, unplaced = rp._points(views, 1e4)
    assert unplaced == []
    labels = {p.label for p in points}
    assert "saxpy, saxpy2" in labels or "saxpy2, saxpy" in labels
