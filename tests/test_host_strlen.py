"""Rule D35 (docs/counting.md): `strlen` of a string literal in host code is its length."""

from __future__ import annotations

import textwrap

import pytest
import tree_sitter
from roofcast.analyzer.hostvalues import HostScope
from roofcast.analyzer.parsing import captures, language, node_text, parse


def arguments(source: str) -> list[object]:
    """The values HostScope gives the arguments of the last `use(...)` call of `main`."""
    tree = parse(textwrap.dedent(source), "cuda")
    query = tree_sitter.Query(language("cuda"), "(call_expression) @c")
    calls = [c for c in captures(query, tree.root_node)["c"] if node_text(c).startswith("use(")]
    main = next(f for f in tree.root_node.named_children if "main(" in node_text(f))
    args = calls[-1].child_by_field_name("arguments").named_children
    return [HostScope(main, "cuda").value(a, calls[-1].start_byte) for a in args]


@pytest.mark.rule("D35")
def test_the_length_of_a_string_literal_a_local_holds_is_a_host_value():
    """`strlen(key)` of `const char *key = "000102030405"` is 12, of `char n[] = "ab" "c\\n"`
    4 (adjacent literals join, an escape is one character, so `/ 2` is 2), of a literal
    itself its length. A local assigned a command-line word since, or the word itself,
    stays unknown."""
    found = arguments(
        r"""
        int main(int argc, char** argv) {
          const char *key = "000102030405";
          char nonce[] = "ab" "c\n";
          const char *other = "xyz";
          other = argv[1];
          int a = strlen(key);
          int b = strlen(nonce) / 2;
          use(a, b, strlen(other), strlen("h\x41llo"), strlen(argv[1]));
        }
        """
    )
    assert found == [12, 2, None, 5, None]
