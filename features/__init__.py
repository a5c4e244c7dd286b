"""Feature counting: what one thread or iteration does (docs/counting.md)."""

from roofcast.features.entry import count_features
from roofcast.features.vector import FeatureVector

__all__ = ["FeatureVector", "count_features"]
