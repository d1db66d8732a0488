"""The notebooks' figures: computed data in, matplotlib Figure out."""

from fp8lab.plots.atlas import plot_boundaries, plot_codes
from fp8lab.plots.chains import plot_rounding_cost
from fp8lab.plots.detect import (
    plot_count_distribution,
    plot_exposable_midpoints,
    plot_strength_vs_scale,
)
from fp8lab.plots.gates import plot_class_mismatches, plot_detector_counts
from fp8lab.plots.gemm import (
    plot_accumulation_deviation,
    plot_bound_tightness,
    plot_epilogue_deviation,
    plot_error_ratios,
)
from fp8lab.plots.mutants import plot_margins
from fp8lab.plots.schemes import plot_floor_rceil, plot_scheme_errors

__all__ = [
    "plot_accumulation_deviation",
    "plot_boundaries",
    "plot_bound_tightness",
    "plot_class_mismatches",
    "plot_codes",
    "plot_count_distribution",
    "plot_detector_counts",
    "plot_epilogue_deviation",
    "plot_error_ratios",
    "plot_exposable_midpoints",
    "plot_floor_rceil",
    "plot_margins",
    "plot_rounding_cost",
    "plot_scheme_errors",
    "plot_strength_vs_scale",
]
