"""The deck's text: TOML parsed with its errors' lines, and the line of any deck key.

:func:`parse` turns TOML into a dict, a syntax error into a :class:`~fem.errors.DeckError` with its
line and column, and what :mod:`tomllib` fails on without saying where (nesting deeper than
:data:`fem.io.keys.MAX_DEPTH`, an integer of more than :data:`MAX_INT_DIGITS` digits) into an error
naming the key and line (:func:`_value_lines`, a small scanner). :func:`locate` finds the line of a
deck key (``"elements[2].section"``) for the messages of :mod:`fem.io.deck`, which builds the model.
"""

from __future__ import annotations

import os
import re
import tomllib

from fem.errors import DeckError
from fem.io.keys import MAX_DEPTH


def _key_line(name: str) -> re.Pattern:
    """A line assigning key ``name`` (bare or quoted)."""
    return re.compile(r"""^\s*(?:%s|"%s"|'%s')\s*=""" % ((re.escape(name),) * 3))


def _header(table: str, array: bool | None, sub: str | None = None) -> re.Pattern:
    """A ``[table]`` (``array`` false), ``[[table]]`` (true) or either (None) header line."""
    name = re.escape(table) + (r"\s*\.\s*" + re.escape(sub) if sub else "")
    opening = {True: r"\[\[", False: r"\[(?!\[)", None: r"\[\[?"}[array]
    return re.compile(r"^\s*" + opening + r"\s*" + name + r"\s*\]")


def locate(text: str, key: str) -> int | None:
    r"""1-based line of ``key`` (``"elements[2].section"``) in the deck text, if it can be found.

    >>> locate("[model]\ndim = 2\n\n[[steps]]\nname = 'a'\n[[steps]]\nname = 'b'",
    ...        "steps[1].name")
    7
    """
    m = re.match(r"(\w+)(?:\[(\d+)\])?(?:\.([^.\[]+))?", key)
    if not m:
        return None
    table, index, sub = m.group(1), m.group(2) or "", m.group(3)
    lines = text.splitlines()
    # a header is a whole line (rows of a multi-line array also start with "[")
    any_header = re.compile(r"^\s*\[\[?\s*[A-Za-z_][\w.\s-]*\]\]?\s*(#.*)?$")
    start = None
    if index:
        count = -1
        for i, line in enumerate(lines):
            if _header(table, True).match(line):
                count += 1
                if count == int(index):
                    start = i
                    break
    else:
        for i, line in enumerate(lines):
            if _header(table, None).match(line):
                start = i
                break
        if sub is not None:         # a sub-table written as its own header: [solver.petsc_options]
            for i, line in enumerate(lines):
                if _header(table, None, sub).match(line):
                    return i + 1
        if start is None:           # a top-level table written inline, or a key of the root table
            for i, line in enumerate(lines):
                if any_header.match(line):
                    break
                if _key_line(table).match(line):
                    return i + 1
    if start is None:
        return None
    if sub is None:
        return start + 1
    for i in range(start + 1, len(lines)):
        if any_header.match(lines[i]):
            break
        if _key_line(sub).match(lines[i]):
            row = re.match(r"\[(\d+)\]", key[m.end():])
            return (_row_line(lines, i, int(row.group(1))) if row else None) or i + 1
    return start + 1


def _row_line(lines: list[str], i: int, row: int) -> int | None:
    r"""1-based line where element ``row`` of the array assigned on line ``i`` (0-based) starts.

    >>> _row_line(["x = [", "  [1, 2],  # one", "  [3, 4],", "]"], 0, 1)
    3
    """
    depth, count, quote = 0, 0, None
    for n in range(i, len(lines)):
        line = lines[n]
        j = line.index("=") + 1 if n == i and "=" in line else 0
        while j < len(line):
            c = line[j]
            if quote is not None:
                if c == "\\" and quote in ('"', '"""'):
                    j += 2
                    continue
                if line.startswith(quote, j):
                    j += len(quote) - 1
                    quote = None
                j += 1
                continue
            if c == "#":
                break
            starts = depth == 1 and count == row
            if c in "\"'":
                if starts:
                    return n + 1
                quote = c * 3 if line.startswith(c * 3, j) else c
                j += len(quote)
                continue
            if c in "[{":
                depth += 1
                if depth == 2 and count == row:
                    return n + 1
            elif c in "]}":
                depth -= 1
                if depth <= 0:
                    return None
            elif c == "," and depth == 1:
                count += 1
            elif not c.isspace() and starts:
                return n + 1
            j += 1
        if quote in ('"', "'"):
            quote = None
    return None


def _value_lines(text: str):
    """Per line of ``text``: ``(line, key, depth)``, the deck key whose value the line is in.

    ``key`` is the dotted key of the value (``"steps[1].loads"``; ``None`` outside values) and
    ``depth`` the deepest nesting of arrays and inline tables the line reaches. Strings and comments
    are skipped. A small scanner for the places tomllib cannot report (it recurses, and limits
    integers to 4300 digits without saying where); it does not validate anything.
    """
    header = re.compile(r"^\s*(\[\[?)\s*([^\[\]]+?)\s*\]\]?\s*(#.*)?$")
    part = r"""(?:[\w-]+|"[^"]*"|'[^']*')"""
    assign = re.compile(r"^\s*(%s(?:\s*\.\s*%s)*)\s*=" % (part, part))
    table, key, depth, quote = "", None, 0, None
    counts: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        i = 0
        if quote is None and depth == 0:
            m = header.match(line)
            if m:
                name = re.sub(r"\s*\.\s*", ".", m.group(2)).replace('"', "").replace("'", "")
                if m.group(1) == "[[":
                    counts[name] = counts.get(name, -1) + 1
                    name = f"{name}[{counts[name]}]"
                table, key = name, None
                yield number, None, 0
                continue
            m = assign.match(line)
            if m:
                sub = re.sub(r"\s*\.\s*", ".", m.group(1)).replace('"', "").replace("'", "")
                key = f"{table}.{sub}" if table else sub
                i = m.end()
        deepest = depth
        while i < len(line):
            c = line[i]
            if quote is not None:                      # inside a string
                if c == "\\" and quote in ('"', '"""'):
                    i += 2
                    continue
                if line.startswith(quote, i):
                    i += len(quote)
                    quote = None
                    continue
                i += 1
                continue
            if c == "#":
                break
            if c in "\"'":
                quote = c * 3 if line.startswith(c * 3, i) else c
                i += len(quote)
                continue
            if c in "[{":
                depth += 1
                deepest = max(deepest, depth)
            elif c in "]}":
                depth = max(depth - 1, 0)
            i += 1
        if quote in ('"', "'"):                        # single-line strings end with the line
            quote = None
        yield number, key, deepest


MAX_INT_DIGITS = 4300      # Python's limit on the digits of an integer read from text


def _unparsable(text: str, path: str, err: Exception) -> DeckError:
    """The error of a deck tomllib fails on without a TOML error: deep nesting, a long integer."""
    long_int = re.compile(r"(?<![\w.])[+-]?\d[\d_]{%d,}" % MAX_INT_DIGITS)
    for number, key, depth in _value_lines(text):
        if isinstance(err, RecursionError) and depth > MAX_DEPTH:
            return DeckError(key or os.path.basename(path), "expected a value nested at most "
                             f"{MAX_DEPTH} levels deep (a matrix is 2 levels), got deeper nesting",
                             number)
        line = text.splitlines()[number - 1]
        m = long_int.search(line) if isinstance(err, ValueError) else None
        if m:
            n = sum(ch.isdigit() for ch in m.group())
            return DeckError(key or os.path.basename(path), "expected an integer of magnitude "
                             f"below 2^63 (64 bits), got an integer of {n} digits; write a large "
                             "number as a float (e.g. 1e20)", number)
    what = "nested too deeply" if isinstance(err, RecursionError) else str(err)
    return DeckError(os.path.basename(path), f"cannot read the deck: {what}")


def parse(text: str, path: str = "<deck>") -> dict:
    """TOML text -> dict; syntax errors become a DeckError with their line.

    A byte-order mark (U+FEFF, written by some Windows editors) is dropped at the start of the text
    and at the start of any line (files joined with ``cat`` keep the marks of the later ones).
    """
    text = strip_bom(text)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        msg = str(err)
        m = re.search(r"\(at line (\d+), column (\d+)\)", msg)
        line = int(m.group(1)) if m else None
        column = f" at column {m.group(2)}" if m else ""
        if re.search(r"\(at end of document\)", msg):
            line = max(1, len(text.splitlines()))
            column = " at the end of the file"
        reason = re.sub(r"\s*\(at (line|end of document).*\)", "", msg)
        raise DeckError(os.path.basename(path), f"TOML syntax error{column}: {reason}",
                        line) from None
    except (RecursionError, ValueError) as err:
        raise _unparsable(text, path, err) from None


def strip_bom(text: str) -> str:
    r"""``text`` without byte-order marks at the start of its lines.

    >>> strip_bom("\ufeff[model]\ndim = 2\n\ufeff# joined\n")
    '[model]\ndim = 2\n# joined\n'
    """
    return re.sub(r"(?m)^\ufeff", "", text)
