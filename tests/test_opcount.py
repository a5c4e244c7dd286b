"""Op counting (features/opcount.py) on a counted kernel IR built by hand: per-thread totals
are each record's count times its nest's trips, summed; by line and by rule for `explain`."""

from __future__ import annotations

import sympy
from roofcast.features.lowered import LoweredKernel
from roofcast.features.opcount import OpCounter, special_kind

n, bx = sympy.symbols("n blockDim_x", positive=True)


def kernel() -> LoweredKernel:
    """for (j < n) { 2 sp on line 5; a division; for (k < 8) 1 sp on line 7 }; 3 int outside."""
    ir = LoweredKernel()
    j = ir.add_loop(n, line=4, variable="j").id
    k = ir.add_loop(sympy.Integer(8), line=6, variable="k").id
    ir.ops[("flops_sp", "F2", 5, (j,))] += 2
    ir.ops[("special:div.sp", "F4", 5, (j,))] += 1
    ir.ops[("flops_sp", "F2", 7, (j, k))] += 1
    ir.ops[("int_ops", "I1", 2, ())] += 3
    ir.ops[("int_ops", "I3", 4, (j,))] += 2
    ir.ops[("int_ops", "I1", 4, (j,))] += 1
    ir.ops[("load_bytes", "A1", 9, ())] += 4096 / bx  # a block's copy, shared by its threads
    ir.ops[("store_bytes", "M2", 10, ())] += 0  # recorded, but nothing counted
    return ir


def test_totals_multiply_each_record_by_its_nest_trips():
    totals = OpCounter(kernel()).per_thread()
    assert sympy.simplify(totals["flops_sp"] - (2 * n + 8 * n)) == 0
    assert sympy.simplify(totals["int_ops"] - (3 + 3 * n)) == 0
    assert sympy.simplify(totals["special:div.sp"] - n) == 0
    assert sympy.simplify(totals["load_bytes"] - 4096 / bx) == 0
    assert totals["store_bytes"] == 0


def test_by_line_and_the_rules_behind_each_line():
    ops = OpCounter(kernel())
    by_line = ops.by_line()
    assert sympy.simplify(by_line[(5, "flops_sp")] - 2 * n) == 0
    assert sympy.simplify(by_line[(7, "flops_sp")] - 8 * n) == 0
    rules = ops.line_rules()
    assert rules[(4, "int_ops")] == ("I1", "I3")  # two rules on one line, both named
    assert rules[(5, "special:div.sp")] == ("F4",)
    assert (10, "store_bytes") not in rules  # a zero count names no rule
    nests = ops.line_nests()
    assert nests[7] == ["8*n"] and nests[2] == []


def test_integer_counts_in_integer_nests_are_exact():
    ir = LoweredKernel()
    outer = ir.add_loop(sympy.Integer(10**9), line=1).id
    inner = ir.add_loop(sympy.Integer(10**9), line=2).id
    ir.ops[("int_ops", "I1", 3, (outer, inner))] += 3
    ir.ops[("int_ops", "I1", 4, ())] += 1
    total = OpCounter(ir).per_thread()["int_ops"]
    assert total == sympy.Integer(3 * 10**18 + 1)  # no float rounding on the way


def test_special_names():
    assert special_kind("special:div.sp") == ("div", "sp")
    assert special_kind("special:sqrt.dp") == ("sqrt", "dp")
    assert special_kind("flops_sp") is None
