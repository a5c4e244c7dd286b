"""Kernel discovery: CUDA `__global__` functions and OpenMP target regions (tree-sitter)."""

from roofcast.analyzer.discover import DiscoveryResult, discover
from roofcast.analyzer.sources import SourceError

__all__ = ["DiscoveryResult", "SourceError", "discover"]
