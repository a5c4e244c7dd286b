"""Gradient-boosted trees as flat numpy arrays: what a shipped model is at prediction time.

The model file holds plain node arrays (gzipped JSON, never a pickle), so prediction needs
numpy only, offline, with no scikit-learn import on the analysis path.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Forest:
    """Every tree of every bag of every class, laid end to end in flat node arrays, so that
    a prediction is `depth` passes of a few array operations over all trees at once.

    Leaves point to themselves, so every tree can take the same number of steps. A class's
    prediction is the bags' mean of `init + rate * sum(tree values)`, which equals
    `offset + sum(weight_t * value_t)` with the bags' mean init and weight rate / n_bags.
    A class's trees lie together, so that sum is one `reduceat`: no BLAS call, whose worker
    threads would spin on a core the analysis needs."""

    roots: np.ndarray  # (trees,) flat index of each tree's root
    left: np.ndarray  # (nodes,) flat index of the left child; itself at a leaf
    right: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    value: np.ndarray
    weight: np.ndarray  # (trees,)
    first_tree: np.ndarray  # (classes,) index of each class's first tree
    offset: np.ndarray  # (classes,)
    depth: int

    @classmethod
    def from_classes(cls, models: list[list[dict]]) -> Forest:
        """One entry of `models` per class: its bags, each {init, rate, trees}."""
        left, right, feature, threshold, value, weights = [], [], [], [], [], []
        roots: list[int] = []
        first_tree = []
        base = 0
        for bags in models:
            first_tree.append(len(roots))
            for bag in bags:
                for tree in bag["trees"]:
                    own = np.asarray(tree["left"], dtype=np.int64)
                    flat = np.arange(base, base + len(own))
                    leaf = own < 0
                    left.append(np.where(leaf, flat, base + own))
                    right.append(np.where(leaf, flat, base + np.asarray(tree["right"])))
                    feature.append(np.maximum(np.asarray(tree["feature"], dtype=np.int64), 0))
                    threshold.append(np.asarray(tree["threshold"], dtype=float))
                    value.append(np.asarray(tree["value"], dtype=float))
                    roots.append(base)
                    weights.append(bag["rate"] / len(bags))
                    base += len(own)
        starts, lefts, rights = np.asarray(roots), np.concatenate(left), np.concatenate(right)
        return cls(
            roots=starts,
            left=lefts,
            right=rights,
            feature=np.concatenate(feature),
            threshold=np.concatenate(threshold),
            value=np.concatenate(value),
            weight=np.asarray(weights, dtype=float),
            first_tree=np.asarray(first_tree),
            offset=np.array([np.mean([b["init"] for b in bags]) for bags in models]),
            depth=_longest_path(starts, lefts, rights),
        )

    def predict(self, X: np.ndarray) -> np.ndarray:
        """(samples, classes) predictions for (samples, features) inputs."""
        position = np.broadcast_to(self.roots, (len(X), len(self.roots)))
        for _ in range(self.depth):
            go_left = (
                np.take_along_axis(X, self.feature[position], axis=1) <= self.threshold[position]
            )
            position = np.where(go_left, self.left[position], self.right[position])
        weighted = self.value[position] * self.weight
        return self.offset + np.add.reduceat(weighted, self.first_tree, axis=1)


def _longest_path(roots: np.ndarray, left: np.ndarray, right: np.ndarray) -> int:
    """Levels from a root to the deepest leaf over all trees (leaves point to themselves)."""
    level, depth = roots, 0
    while True:
        inner = level[left[level] != level]
        if not len(inner):
            return depth
        level = np.concatenate([left[inner], right[inner]])
        depth += 1
