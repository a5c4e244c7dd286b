"""`-D NAME=VALUE`: parsing and the checks of the value, one rule for the command line's
--define and a compile database's -D (`compdb`)."""

from __future__ import annotations

import math

from roofcast.analyzer.cexpr import CExprError
from roofcast.analyzer.cvalue import MAX_COUNT, is_type_name, parse_value


def parse_define(text: str) -> tuple[str, str]:
    """`NAME=VALUE` -> (NAME, VALUE); raises ValueError with a message fit for the user."""
    if "=" not in text:
        raise ValueError(f"malformed --define '{text}': expected NAME=VALUE")
    name, value = (part.strip() for part in text.split("=", 1))
    if not name.isidentifier() or not value:
        raise ValueError(f"malformed --define '{text}': expected NAME=VALUE")
    return name, value


_NOT_FINITE = frozenset({"nan", "inf", "infinity"})


def check_define(name: str, value: str) -> str | None:
    """A warning for a --define value that binds no size as the user may think, or None;
    ValueError (one line) for a value that cannot mean anything: not a C expression or type
    name, not a finite number, or beyond the counts' range (MAX_COUNT)."""
    shown = f"--define {name}={value}"
    if is_type_name(value):
        return None  # a type binding: T=double
    try:
        expr = parse_value(value)
    except CExprError as exc:
        raise ValueError(f"malformed {shown}: not a C expression or type name ({exc})") from None
    if expr.free_symbols:
        if {s.name.lower() for s in expr.free_symbols} & _NOT_FINITE:
            raise ValueError(f"malformed {shown}: not a finite number")
        return f"{shown} is not a number: it binds no count (its names stay symbolic)"
    number = float(expr)
    if not math.isfinite(number) or abs(number) > MAX_COUNT:
        raise ValueError(f"malformed {shown}: out of range (counts stop at {MAX_COUNT:g})")
    if number <= 0:
        return f"{shown} is not a positive size: counts that scale with {name} are 0"
    return None
