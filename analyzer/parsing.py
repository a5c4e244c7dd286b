"""tree-sitter parsers, one per grammar, created once: parsing is the analyzer's floor cost."""

from __future__ import annotations

from functools import cache

import tree_sitter
import tree_sitter_cpp
import tree_sitter_cuda


@cache
def language(grammar: str) -> tree_sitter.Language:
    module = tree_sitter_cuda if grammar == "cuda" else tree_sitter_cpp
    return tree_sitter.Language(module.language())


@cache
def parser(grammar: str) -> tree_sitter.Parser:
    return tree_sitter.Parser(language(grammar))


def parse(text: str | bytes, grammar: str = "cuda") -> tree_sitter.Tree:
    data = text.encode("utf-8") if isinstance(text, str) else text
    return parser(grammar).parse(data)


def node_text(node: tree_sitter.Node) -> str:
    return node.text.decode("utf-8", "replace") if node.text is not None else ""
