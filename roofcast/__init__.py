"""roofcast: is this CUDA / OpenMP-offload kernel compute-bound or bandwidth-bound, and why."""

__version__ = "0.1.0"
