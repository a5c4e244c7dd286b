"""Work shared between questions and between copies of a text gives each asker what its own
walk would: the body query's parts (one query pass over a host function body) and the
expression names remembered by text."""

from __future__ import annotations

import tree_sitter
from roofcast.analyzer.bodyquery import BodyQueryPart
from roofcast.analyzer.parsing import captures, infix_parts, language, operator, parse, token_text
from roofcast.analyzer.session import AnalysisSession
from roofcast.features import lowering

HOST = """
int main(int argc, char** argv) {
  int n = atoi(argv[1]);
  float* d = nullptr;
  cudaMalloc(&d, n * sizeof(float));
  setup(&n, d);
  for (int i = 0; i < 4; i++) { n++; d[i] = 0; }
  int m = n * 2;
  run(n, m);
  return 0;
}
"""

#: two parts that use the same capture names for different things
_CALLS = "(call_expression function: (identifier) @name arguments: (argument_list) @value)"
_DECLARED = "(init_declarator declarator: (identifier) @name value: (_) @value)"
CALLS = BodyQueryPart("test_calls", _CALLS)
DECLARED = BodyQueryPart("test_declared", _DECLARED)


def _body() -> tree_sitter.Node:
    root = parse(HOST, "cuda").root_node
    body = root.named_children[0].child_by_field_name("body")
    assert body is not None
    return body


def _alone(patterns: str, body: tree_sitter.Node) -> dict[str, list[tuple[int, int]]]:
    found = captures(tree_sitter.Query(language("cuda"), patterns), body)
    return {name: [(n.start_byte, n.end_byte) for n in nodes] for name, nodes in found.items()}


def _spans(found: dict[str, list[tree_sitter.Node]]) -> dict[str, list[tuple[int, int]]]:
    return {name: [(n.start_byte, n.end_byte) for n in nodes] for name, nodes in found.items()}


def test_each_part_gets_what_its_patterns_alone_capture():
    body = _body()
    with AnalysisSession() as session, session.group():
        calls = CALLS.captures(body, "cuda")
        declared = DECLARED.captures(body, "cuda")
    assert _spans(calls) == _alone(_CALLS, body)
    assert _spans(declared) == _alone(_DECLARED, body)
    text = HOST.encode()
    called = [text[s:e].decode() for s, e in _spans(calls)["name"]]
    assert called == ["atoi", "cudaMalloc", "setup", "run"]  # no declared name among them
    assert [text[s:e].decode() for s, e in _spans(declared)["name"]] == ["n", "i", "m"]


def test_a_callers_change_to_its_lists_does_not_reach_the_next_asker():
    body = _body()
    with AnalysisSession() as session, session.group():
        first = CALLS.captures(body, "cuda")
        first["name"].clear()
        again = CALLS.captures(body, "cuda")
    assert len(again["name"]) == 4


def test_without_a_session_a_part_is_still_answered():
    assert _spans(DECLARED.captures(_body(), "cuda")) == _alone(_DECLARED, _body())


def _value(text: str, grammar: str) -> tree_sitter.Node:
    tree = parse(f"int x = {text};", grammar)
    declarator = tree.root_node.named_children[0].child_by_field_name("declarator")
    assert declarator is not None
    value = declarator.child_by_field_name("value")
    assert value is not None
    return value


def test_names_remembered_by_text_keep_each_grammars_reading():
    """`(std::uint32_t) (0) - 1` is a cast under one grammar and a call under the other: a
    text met under one grammar must not answer for the other."""
    text = "(std::uint32_t) (0) - 1"
    walked = {g: lowering._names_of(_value(text, g)) for g in ("cuda", "cpp")}
    assert walked["cuda"] != walked["cpp"]  # the grammars do read it differently
    for order in (("cuda", "cpp"), ("cpp", "cuda")):
        with AnalysisSession():
            remembered = {g: lowering._names_by_text(_value(text, g)) for g in order}
        assert remembered == walked


def test_names_remembered_by_text_are_the_walks_names():
    text = "a[i] * threadIdx.x + n"
    with AnalysisSession():
        first = lowering._names_by_text(_value(text, "cuda"))
        again = lowering._names_by_text(_value(text, "cuda"))
    assert first == again == lowering._names_of(_value(text, "cuda"))
    assert first[0] == frozenset({"a", "i", "threadIdx.x", "n"})
    assert first[1] is None  # a subscript inside


def test_tokens_remembered_by_text_are_the_walks_tokens():
    for grammar in ("cuda", "cpp"):
        for text in ("a[i + 1] * /* step */ s", "(std::uint32_t) (0) - 1", '"x" [k]'):
            with AnalysisSession():
                first = lowering._tokens_by_text(_value(text, grammar))
                again = lowering._tokens_by_text(_value(text, grammar))
            assert first == again == token_text(_value(text, grammar))
    assert token_text(_value("a[i + 1] * /* step */ s", "cuda")) == "a [ i + 1 ] * s"


HOST_EXPRESSIONS = "void f() { x = a + b * c; y += a /* add */ - b; z = (a) << 2; w = a\n  % b; }"


def _operand_texts(parts: tuple) -> tuple:
    left, op, right = parts
    text = HOST_EXPRESSIONS.encode()
    return (
        text[left.start_byte : left.end_byte].decode() if left is not None else None,
        op,
        text[right.start_byte : right.end_byte].decode() if right is not None else None,
    )


def test_infix_parts_are_the_fields_with_or_without_comments_between():
    """An infix expression's parts read off its children are what its fields say, and a
    comment among the children falls back to the fields."""
    for grammar in ("cuda", "cpp"):
        root = parse(HOST_EXPRESSIONS, grammar).root_node
        stack, seen = [root], []
        while stack:
            node = stack.pop()
            if node.type in ("binary_expression", "assignment_expression"):
                by_field = (
                    node.child_by_field_name("left"),
                    operator(node),
                    node.child_by_field_name("right"),
                )
                assert _operand_texts(infix_parts(node)) == _operand_texts(by_field)
                seen.append(_operand_texts(by_field))
            stack.extend(node.children)
        assert ("a", "-", "b") in seen  # across the comment
        assert ("a", "%", "b") in seen  # across a line break
        assert ("y", "+=", "a /* add */ - b") in seen
        assert len(seen) == 9
