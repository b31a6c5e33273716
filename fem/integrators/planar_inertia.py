"""The consistent beam inertia of the compiled energy-conserving step, as arrays (issue 32).

:func:`consistent_data` batches the consistent inertia groups of a planar model
(:class:`fem.inertia.beam.ConsistentBeamInertia`) for
:func:`fem.integrators.planar_inertia_kernel.consistent`; :func:`director_rates` reads a state's
director rates for it (the stored ones where they still belong to the nodes, else the rigid
ones) and :func:`write_rates` writes the converged step's, as
:meth:`~fem.inertia.beam.ConsistentBeamInertia.update_rates` does.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

#: the arrays of a model without consistent inertia (the compiled time step's arguments)
NO_INERTIA = {"conn": np.empty((0, 2), np.int64), "axis": np.empty((0, 2)), "mu": np.empty(0),
              "edofs": np.empty((0, 6), np.int64), "slot": np.empty(0, np.int64),
              "groups": []}


def consistent_data(integ) -> dict | None:
    """The consistent inertia groups of ``integ`` as one batch (None: there are none).

    ``conn (E, 2)``, ``axis (E, 2)`` (reference axis times ``l0``), ``mu (E,)`` (``rho A l0``),
    the beam groups' scatter ``edofs (E, 6)`` and ``slot (E * 36,)``, ``pattern`` and
    ``groups``: (name, slice of the batch) of each group, whose rates ``State.rates[name]`` are.
    """
    from fem.integrators.planar_inertia_kernel import PATTERN

    if not integ.extras:
        return None
    asm = integ.system.assembler
    parts, groups, start = [], [], 0
    for x in integ.extras:
        sc = asm.groups[x.index]
        parts.append((x.conn, x.a[:, :2], x.mu, np.asarray(sc.edofs, dtype=np.int64),
                      np.asarray(sc.slot, dtype=np.int64)))
        groups.append((x.name, slice(start, start + len(x.mu))))
        start += len(x.mu)
    out = {key: np.ascontiguousarray(np.concatenate([p[k] for p in parts]))
           for k, key in enumerate(("conn", "axis", "mu", "edofs", "slot"))}
    for key in ("conn", "edofs", "slot"):
        out[key] = out[key].astype(np.int64)
    out["axis"] = out["axis"].astype(float)
    out["pattern"] = PATTERN
    out["groups"] = groups
    return out


def director_rates(kernel, data: dict, state) -> NDArray:
    """(E, 2, 2) the director slots' velocities of ``state`` (``director_rates`` of the groups).

    Where a group has no rates in ``state`` (or of another shape), its rigid rates.
    """
    E = len(data["mu"])
    out = np.empty((E, 2, 2))
    groups = data["groups"]
    if len(groups) == 1:                  # the state's own arrays, where it has them
        got = state.rates.get(groups[0][0])
        if _written(got, E):
            kernel.director_rates(state.v, state.rot, data["conn"], data["axis"], got["v"],
                                  got["nodal_v"], got["nodal_rot"], out)
            return out
    stored, nodal_v = np.zeros((E, 2, 3)), np.full((E, 2, 3), np.nan)
    nodal_rot = np.full((E, 2), np.nan)
    for name, where in groups:
        got = state.rates.get(name)
        if _written(got, where.stop - where.start):
            stored[where] = got["v"]
            nodal_v[where], nodal_rot[where] = got["nodal_v"], got["nodal_rot"]
    kernel.director_rates(state.v, state.rot, data["conn"], data["axis"], stored, nodal_v,
                          nodal_rot, out)
    return out


def _written(got: dict | None, n: int) -> bool:
    """Whether ``got`` holds the director rates of ``n`` elements (their shapes)."""
    return bool(got and "v" in got and got["v"].shape == (n, 2, 3)
                and got["nodal_v"].shape == (n, 2, 3) and got["nodal_rot"].shape == (n, 2))


def write_rates(data: dict, s1, ud1: NDArray) -> None:
    """Write the director rates ``ud1 (E, 2, 2)`` of the converged step into ``s1``.

    With the nodal velocities and rotations of ``s1`` they belong to, as
    :meth:`fem.inertia.beam.ConsistentBeamInertia.update_rates` writes them.
    """
    conn = data["conn"]
    for name, where in data["groups"]:
        v = np.zeros((where.stop - where.start, 2, 3))
        v[:, :, :2] = ud1[where]
        c = conn[where]
        s1.rates[name] = {"v": v, "nodal_v": s1.v[c], "nodal_rot": s1.rot[c]}
