"""Write a parsed deck back as TOML text (the fuzzer mutates dicts, fem reads text).

Only what decks use: tables, arrays of tables, inline tables and arrays, strings, booleans,
integers of any size (TOML readers may refuse huge ones: that is what the fuzzer wants to see),
and floats including ``nan`` and ``inf``.
"""

import json
import math
import re

_BARE = re.compile(r"[A-Za-z0-9_-]+")


def key(k: str) -> str:
    """A bare key, or a quoted one when it needs quotes."""
    return k if _BARE.fullmatch(k) else string(k)


def string(s: str) -> str:
    """A TOML basic string (control characters and DEL escaped)."""
    text = json.dumps(s, ensure_ascii=False)
    return text.replace("\x7f", "\\u007f")


def value(v) -> str:
    """A TOML value."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return string(v)
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{key(k)} = {value(x)}" for k, x in v.items()) + " }"
    if isinstance(v, list):
        return "[" + ", ".join(value(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} as TOML")


def _is_table_array(v) -> bool:
    return isinstance(v, list) and v and all(isinstance(x, dict) for x in v)


def dumps(data: dict) -> str:
    """TOML text of ``data``: top-level values, then ``[tables]`` and ``[[arrays of tables]]``."""
    lines = [f"{key(k)} = {value(v)}" for k, v in data.items()
             if not isinstance(v, dict) and not _is_table_array(v)]
    for k, v in data.items():
        if isinstance(v, dict):
            lines += ["", f"[{key(k)}]"] + [f"{key(a)} = {value(b)}" for a, b in v.items()]
        elif _is_table_array(v):
            for item in v:
                lines += ["", f"[[{key(k)}]]"] + [f"{key(a)} = {value(b)}"
                                                  for a, b in item.items()]
    return "\n".join(lines) + "\n"
