"""Settings of analysis steps: dataclasses whose fields are the deck keys of their step type.

Each step type declares one settings dataclass (:class:`fem.analysis.static_deck.StaticSettings`,
in its deck module, ...) whose fields are made by :func:`setting`: the deck kind of the key (as in
:mod:`fem.io.schema`), its default, what it means, its bounds, and the *variants* of the step that
use it (a static step's variant is ``"linear"`` or its control; other types have one variant,
``""``). The deck schema of ``[[steps]]``, the keys each variant accepts, the defaults and the
deck reference are all generated from these classes (:mod:`fem.io.schema`,
:mod:`fem.io.build_steps`), so they cannot disagree. A field made with ``deck=False`` is a
setting of the Python API only.
"""

from __future__ import annotations

import dataclasses
from dataclasses import field
from typing import Any

REQUIRED = object()          # the default of a key the deck must give

# Counts that drive loops (the ``maximum`` of the settings that drive them):
# - increments of load/displacement control and arc-length steps: every increment is at least one
#   factorization and one results frame; 1e6 increments of 1e-6 of the load take a quarter of an
#   hour at 1 ms each on the smallest model and are far finer than any path needs (the adaptive
#   control refines by itself where Newton struggles).
MAX_INCREMENTS = 10**6
# - Newton iterations (and the arc-length target): Newton converges quadratically near a solution
#   and the default is 25; an iteration that has not converged in 1000 will not.
MAX_ITERATIONS = 1000
# - halvings of the time step in a row: after 50 the step is 2^-50 = 8.9e-16 of the time step, below
#   the resolution of the time itself in double precision (2.2e-16 relative): more halvings cannot
#   advance the time.
MAX_CUTS = 50
# - buckling modes: a buckling analysis looks at the lowest few; 1000 already needs a Krylov space
#   of about 2000 vectors of the model's size.
MAX_MODES = 1000
# - time steps of a dynamic step (duration / time_step): each is at least one factorization (1 ms
#   on the smallest model: 1e7 steps are about 3 hours), and the time, a sum of 1e7 steps, keeps
#   about 9 of its 16 digits.
MAX_TIME_STEPS = 10**7
# - output frames of a step (duration / output_interval, or the steps written): each frame appends
#   to every results dataset and flushes the file (about 160 bytes per node per frame); 1e6 frames
#   are gigabytes for a 10-node model and 100 times what a plot or a ParaView animation can show.
MAX_FRAMES = 10**6


def setting(kind: str, default: Any = None, doc: str = "", *, used_by: tuple | None = None,
            deck: bool = True, **check) -> Any:
    """A settings field that is also a deck key.

    Parameters
    ----------
    kind : the deck kind (``"int"``, ``"float"``, ``"str"``, ``"bool"``, ``"names"``, ...)
    default : the value when the deck does not give the key (:data:`REQUIRED`: it must)
    doc : what the key means, for the deck reference
    used_by : the variants that use it (None: every variant of the step type)
    deck : False for a setting the deck does not offer
    check : ``choices``, ``positive``, ``nonnegative``, ``maximum`` as in :class:`fem.io.schema.Key`
    """
    meta = {"kind": kind, "doc": doc, "used_by": used_by, "deck": deck,
            "required": default is REQUIRED, "check": check}
    return field(default=None if default is REQUIRED else default, metadata={"setting": meta})


def deck_fields(cls) -> list[dataclasses.Field]:
    """The fields of settings class ``cls`` that are deck keys, in declaration order."""
    return [f for f in dataclasses.fields(cls) if f.metadata.get("setting", {}).get("deck")]


def uses(f: dataclasses.Field, variant: str) -> bool:
    """Whether the deck key of field ``f`` is used by ``variant``."""
    used_by = f.metadata["setting"]["used_by"]
    return used_by is None or variant in used_by


def from_values(cls, values: dict):
    """An instance of settings class ``cls`` from deck values ``values`` (its defaults filled)."""
    return cls(**{f.name: values[f.name] for f in deck_fields(cls)})


class OneVariant:
    """Base of the settings of a step type with one variant, ``""``, that takes no ``remove``.

    A step type whose one variant does take ``remove`` sets ``REMOVES = ("",)``.
    """

    VARIANTS = ("",)
    REMOVES = ()

    @staticmethod
    def variant(values: dict) -> str:
        """The variant of the step with deck values ``values``: always ``""``."""
        return ""


def mass_setting() -> Any:
    """The ``mass`` key of the eigenvalue steps: the lumped or the consistent mass matrix."""
    return setting("str", "lumped", "the mass matrix: the one dynamic steps integrate "
                   "(lumped nodal, with consistent beam inertia where a group asks for it) "
                   "or the consistent element masses", choices=("lumped", "consistent"))


def where_setting() -> Any:
    """The step entry's deck path, for messages (set by the deck's check, not a deck key)."""
    return setting("str", "steps", deck=False)
