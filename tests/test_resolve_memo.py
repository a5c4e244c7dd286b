"""Memoised resolution steps give what they would compute afresh, whatever came before."""

from __future__ import annotations

import sympy
from roofcast.analyzer.hostvalues import find_struct
from roofcast.analyzer.parsing import parse
from roofcast.features.resolve import substitute
from roofcast.features.symbolic import symbol


def test_a_binding_of_equal_value_but_another_type_is_not_served_from_the_memo():
    n = symbol("n")
    count = 2 * n + 1
    exact = substitute(count, {"n": 3})
    assert exact == sympy.Integer(7) and exact.is_Integer
    floating = substitute(count, {"n": 3.0})  # 3 == 3.0 and hash alike: a memo key must differ
    assert floating.is_Float and float(floating) == 7.0
    assert substitute(count, {"n": True}) == sympy.Integer(3)
    assert substitute(n, {"n": -0.0}).is_Float
    assert substitute(count, {"n": "4"}) == sympy.Integer(9)
    assert substitute(count, {"m": 5}) is count  # nothing bound: the expression itself


def test_a_struct_is_found_in_a_folder_file_and_a_builtin_type_word_is_none():
    source = b"struct Params { int n; float x; };\nvoid run(Params p, int k) { }\n"
    tree = parse(source, "cpp")
    func = next(c for c in tree.root_node.named_children if c.type == "function_definition")
    found = find_struct("Params", func, "cpp", None)
    assert found is not None and [f.name for f in found[0]] == ["n", "x"]
    assert find_struct("int", func, "cpp", None) is None
    assert find_struct("Other", func, "cpp", None) is None
