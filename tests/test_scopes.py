"""The walk's scope stack finds each name's innermost binding, as searching the scopes from
the innermost out would, through every way the walk opens, closes and swaps them."""

from __future__ import annotations

import random

from roofcast.features.scopes import Scopes


def _searched(frames: list[dict[str, int]], name: str) -> int | None:
    for frame in reversed(frames):
        if name in frame:
            return frame[name]
    return None


def test_inner_bindings_hide_outer_ones_until_their_scope_closes():
    scopes: Scopes[str] = Scopes()
    scopes.declare("n", "param")
    scopes.push()
    scopes.declare("n", "block")
    scopes.declare("n", "again")  # declared twice in one block: the second wins
    scopes.declare("i", "counter")
    assert scopes.get("n") == "again" and scopes.get("i") == "counter"
    scopes.pop()
    assert scopes.get("n") == "param"
    assert scopes.get("i") is None
    assert len(scopes) == 1 and scopes.outermost == {"n": "param"}


def test_close_to_closes_every_scope_above_a_depth():
    scopes: Scopes[int] = Scopes([{"a": 1}])
    depth = len(scopes)
    for k in range(5):
        scopes.push({"a": 10 + k, f"b{k}": k})
    scopes.close_to(depth)
    assert len(scopes) == depth
    assert scopes.get("a") == 1 and all(scopes.get(f"b{k}") is None for k in range(5))


def test_stacks_made_apart_share_no_scope():
    """Each kernel's walk makes its own stack: a parameter of one kernel must not be seen by
    the next (a shared default first scope once leaked `W` from one program into another)."""
    first: Scopes[str] = Scopes()
    first.declare("W", "weights")
    second: Scopes[str] = Scopes()
    assert second.get("W") is None and second.outermost == {}


def test_random_walks_match_searching_the_scopes():
    rng = random.Random(7)
    names = ["a", "b", "c", "d"]
    scopes: Scopes[int] = Scopes()
    frames: list[dict[str, int]] = [{}]
    for step in range(3000):
        move = rng.random()
        if move < 0.3:
            seeded = {n: step for n in rng.sample(names, rng.randint(0, 2))}
            scopes.push(dict(seeded))
            frames.append(dict(seeded))
        elif move < 0.5 and len(frames) > 1:
            scopes.pop()
            frames.pop()
        elif move < 0.55 and len(frames) > 1:
            depth = rng.randint(1, len(frames))
            scopes.close_to(depth)
            del frames[depth:]
        else:
            name = rng.choice(names)
            scopes.declare(name, step)
            frames[-1][name] = step
        assert len(scopes) == len(frames)
        for name in names:
            assert scopes.get(name) == _searched(frames, name)
