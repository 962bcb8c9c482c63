"""Unit tests of scripts/bench's charts (benchlib/charts.py): every value
axis linear and from zero, latency.png in µs. They need matplotlib
(scripts/setup --bench): without it the file exits 77, skipped. The run is
test_report_format.py's made-up `--quick`."""
import os
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
sys.path.insert(0, HERE)

from benchlib import charts  # noqa: E402
from test_report_format import META, quick_cells  # noqa: E402

import ctest_unittest  # noqa: E402


def chart_axes(cells, meta=META):
    """Every chart charts() saves: {name: [(axes, value axis "x" or "y")]}."""
    drawn = {}
    real_save = charts._save

    def save(plt, fig, out, name, made):
        # rps.png and cpu.png are horizontal bars: their values run along x.
        drawn[name] = [(ax, "x" if name in ("rps.png", "cpu.png") else "y") for ax in fig.axes]
        real_save(plt, fig, out, name, made)

    with tempfile.TemporaryDirectory() as out, mock.patch.object(charts, "_save", save):
        made = charts.charts(out, cells, meta)
    return made, drawn


def has_matplotlib():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


@unittest.skipUnless(has_matplotlib(), "matplotlib is not installed (scripts/setup --bench)")
class AxesFromZeroTest(unittest.TestCase):
    def test_every_value_axis_starts_at_zero(self):
        # 2 workers 7% below 1: from zero, a 7% dip reads as one, not as a collapse.
        cells = quick_cells()
        for c in cells:
            if c["workers"] == 2:
                c["rps"] *= 0.93
        made, drawn = chart_axes(cells)
        self.assertEqual(sorted(made), ["cpu.png", "latency.png", "rps.png", "workers.png"])
        for name, axes in drawn.items():
            for ax, value in axes:
                scale = ax.get_xscale() if value == "x" else ax.get_yscale()
                low = (ax.get_xlim() if value == "x" else ax.get_ylim())[0]
                self.assertEqual(scale, "linear", f"{name}: {ax.get_title()}")
                self.assertEqual(low, 0, f"{name}: {ax.get_title()} starts at {low}")

    def test_scaling_chart_too(self):
        meta = dict(META, server_cpus="1-2", scaling={"workers": [1, 2], "server_cpus": 2, "connections": 64})
        made, drawn = chart_axes(quick_cells(), meta)
        self.assertIn("scaling.png", made)
        for ax, _ in drawn["scaling.png"]:
            self.assertEqual((ax.get_yscale(), ax.get_ylim()[0]), ("linear", 0), ax.get_ylabel())

    def test_latency_chart_in_us_with_the_server_on_its_own_panel(self):
        made, drawn = chart_axes(quick_cells())
        axes = [ax for ax, _ in drawn["latency.png"]]
        self.assertEqual(len(axes), 2)  # client ~540 µs beside server ~9 µs: too short to read alone
        self.assertTrue(all("µs" in ax.get_ylabel() for ax in axes), [ax.get_ylabel() for ax in axes])
        self.assertAlmostEqual(max(p.get_height() for p in axes[1].patches), 0.0057 * 1.6 * 1000)


if __name__ == "__main__":
    ctest_unittest.main()
