"""Redundant joint constraints: found by a rank-revealing factorization, released, reported.

A planar four-bar built with 3D revolute joints has 20 constraint rows of rank 17 (notes
``mufti_blajer.md`` D1): three rows repeat what the others impose, the saddle-point matrix is
singular, and their reactions are not unique (only the accelerations are). Here the Jacobian of
every constraint row at the reference, on the DOFs that are not supported, is factored as
``G^T = Q R`` with the rows in deck order: a row whose ``|R_kk|`` is at round-off level is a
combination of the rows before it (Mufti's appendix, case rank H = K < N). Such rows of joint
groups are *released*: replaced by ``lambda = 0`` (:meth:`fem.constraints.joint.Joint.
with_released`), so the remaining rows are independent, the motion is the same (the released
rows hold wherever the others do, for a mechanism whose redundancy persists, such as the
four-bar or Bricard's linkage) and their reactions are reported as zero. Each release is named
by joint, row and node pair in the run's log.

The factorization is dense, on the DOFs the constraint rows touch only: quick for mechanisms
with thousands of joint rows; scipy has no sparse rank-revealing QR to go further.
"""

from __future__ import annotations

import logging

import numpy as np
from numpy.typing import NDArray

from fem.state import State

log = logging.getLogger("fem")

#: a row is redundant when its component outside the span of the rows before it is below this,
#: relative to its own norm
TOLERANCE = 1e-9


def redundant_rows(model) -> list[NDArray]:
    """Per constraint group, ``(E, r)`` bool: the rows dependent on the rows before them."""
    groups = model.constraints
    if not groups:
        return []
    ref = State.reference(model.dim, model.n_nodes)
    held = model.fixed.copy()
    for p in model.prescribed:
        held[p.nodes, p.slot] = True
    slot_of = {name: k for k, name in enumerate(model.slots)}
    # every group's rows as (row, DOF key, value) entries: groups differ in their DOFs per row
    # (a tie's translations, a joint's translations and rotations)
    row_of, keys, values = [], [], []
    count = 0
    for c in groups:
        G = c.jacobian(ref)                                     # (E, r, nd)
        E, r, nd = G.shape
        slots = np.tile([slot_of[d] for d in c.dof_names], c.conn.shape[1])
        nodes = np.repeat(c.conn, len(c.dof_names), axis=1)      # (E, nd)
        G = np.where(held[nodes, slots][:, None, :], 0.0, G)     # supported DOFs: no column
        row_of.append(np.repeat(count + np.arange(E * r), nd))
        keys.append(np.repeat(nodes * model.nslots + slots, r, axis=0).ravel())
        values.append(G.ravel())
        count += E * r
    used, columns = np.unique(np.concatenate(keys), return_inverse=True)
    A = np.zeros((len(used), count))                     # G^T on the DOFs the rows touch
    np.add.at(A, (columns, np.concatenate(row_of)), np.concatenate(values))
    norms = np.linalg.norm(A, axis=0)
    diag = np.zeros(count)
    if A.size:
        R = np.linalg.qr(A, mode="r")
        m = min(R.shape)
        diag[:m] = np.abs(np.diag(R[:m, :m]))
    dependent = diag <= TOLERANCE * np.maximum(norms, 1e-300)
    out, start = [], 0
    for c in groups:
        n = len(c) * c.n_multipliers
        out.append(dependent[start:start + n].reshape(len(c), c.n_multipliers))
        start += n
    return out


def release_redundant(model):
    """The model with its joints' redundant rows released, and what was released (messages)."""
    found = redundant_rows(model)
    notes, groups = [], []
    for c, dep in zip(model.constraints, found, strict=True):
        if dep.any() and hasattr(c, "with_released"):
            for e, k in np.argwhere(dep):
                notes.append(f"redundant constraint released: {c.describe_unknown(int(e), int(k))}"
                             " repeats what the other joints and supports impose; its reaction "
                             "is reported as zero")
            c = c.with_released(dep)
        groups.append(c)
    for note in notes:
        log.warning(note)
    return (model.with_changes(constraints=tuple(groups)) if notes else model), notes
