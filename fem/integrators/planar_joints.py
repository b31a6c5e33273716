"""The joints of the compiled energy-conserving step (:mod:`fem.integrators.planar`), as arrays.

:func:`joint_data` batches the rows of every 2D joint group by kind for
:func:`fem.integrators.planar_joint_kernel.revolute`, ``angles`` and ``slides``;
:func:`free_rows` says which node and slot (or multiplier) each unknown is;
:func:`joint_order` numbers the unknowns for the banded LU without pivoting
(:mod:`fem.solvers.banded`): each joint's multipliers right after the last unknown of its nodes,
so that no multiplier meets a structural zero pivot.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem.solvers.banded import RCM_ABOVE

#: the joint arrays of a model without joints (the compiled time step's arguments)
NO_JOINTS = {"conn": np.empty((0, 2), np.int64), "offsets": np.empty((0, 2, 3)),
             "mpos": np.empty((0, 2), np.int64), "scale": np.empty(0),
             "edofs": np.empty((0, 8), np.int64), "slot": np.empty(0, np.int64),
             "aconn": np.empty((0, 2), np.int64), "ampos": np.empty(0, np.int64),
             "ascale": np.empty(0), "atarget": np.empty(0),
             "aedofs": np.empty((0, 3), np.int64), "aslot": np.empty(0, np.int64),
             "sconn": np.empty((0, 2), np.int64), "soffsets": np.empty((0, 2, 3)),
             "sframe": np.empty((0, 2)), "smpos": np.empty(0, np.int64), "sscale": np.empty(0),
             "sedofs": np.empty((0, 7), np.int64), "sslot": np.empty(0, np.int64),
             "driven": []}


def joint_data(system) -> dict | None:
    """The 2D joints of every constraint group as one batch of rows per kind (None: no joints).

    Every joint's ``point`` rows: ``conn (J, 2)``, ``offsets (J, 2, 3)``, ``mpos (J, 2)``
    (positions in ``State.multipliers``), ``scale (J,)`` (each group's row scale),
    ``edofs (J, 8)``, ``slot (J * 64,)`` (their part of the assembler's constraint scatter). The
    ``angle`` rows of fixed, prismatic and driven revolute joints: ``aconn``, ``ampos``,
    ``ascale``, ``aedofs (A, 3)`` (``rz`` of both nodes, the multiplier), ``aslot (A * 9,)``,
    ``atarget`` (the drives' values, set by :func:`set_targets`) and ``driven``: (slice of
    ``atarget``, joint group) of each driven group. The ``slide`` rows of inline and prismatic
    joints: ``sconn``, ``soffsets``, ``sframe (S, 2)`` (the frame's vector along which the gap
    vanishes, in node ``a``), ``smpos (S,)``, ``sscale``, ``sedofs (S, 7)``, ``sslot (S * 49,)``.
    """
    groups = getattr(system.model, "constraints", ())
    if not groups:
        return None
    asm = system.assembler
    point, angle, slide, driven, start = [], [], [], [], 0
    for c, sc, lam, s in zip(groups, asm.constraints, system._lam, system.constraint_scales,
                             strict=True):
        nd = c.nd + c.n_multipliers
        edofs = np.asarray(sc.edofs, dtype=np.int64)
        slot = np.asarray(sc.slot, dtype=np.int64).reshape(len(c), nd, nd)
        scale = np.full(len(c), s)
        k = 0
        for row in c.rows:
            if row[0] == "point":
                cols = [0, 1, 2, 3, 4, 5, 6 + k, 7 + k]
                point.append((c.conn, c.offsets, lam[:, k:k + 2], scale, edofs[:, cols],
                              slot[:, cols][:, :, cols].reshape(-1)))
                k += 2
            elif row[0] == "angle":
                cols = [2, 5, 6 + k]
                angle.append((c.conn, lam[:, k], scale, edofs[:, cols],
                              slot[:, cols][:, :, cols].reshape(-1)))
                if c.drive is not None:
                    driven.append((slice(start, start + len(c)), c))
                start += len(c)
                k += 1
            else:                                 # slide (PlanarStep.eligible: no other)
                cols = [0, 1, 2, 3, 4, 5, 6 + k]
                slide.append((c.conn, c.offsets, c.frames[:, :2, row[1]], lam[:, k], scale,
                              edofs[:, cols], slot[:, cols][:, :, cols].reshape(-1)))
                k += 1
    out = dict(NO_JOINTS)
    for key, k in (("conn", 0), ("offsets", 1), ("mpos", 2), ("scale", 3), ("edofs", 4),
                   ("slot", 5)):
        if point:
            out[key] = np.ascontiguousarray(np.concatenate([p[k] for p in point]))
    for key, k in (("aconn", 0), ("ampos", 1), ("ascale", 2), ("aedofs", 3), ("aslot", 4)):
        if angle:
            out[key] = np.ascontiguousarray(np.concatenate([a[k] for a in angle]))
    for key, k in (("sconn", 0), ("soffsets", 1), ("sframe", 2), ("smpos", 3), ("sscale", 4),
                   ("sedofs", 5), ("sslot", 6)):
        if slide:
            out[key] = np.ascontiguousarray(np.concatenate([a[k] for a in slide]))
    out["atarget"] = np.zeros(len(out["aconn"]))
    out["driven"] = driven
    for key in ("conn", "mpos", "edofs", "slot", "aconn", "ampos", "aedofs", "aslot", "sconn",
                "smpos", "sedofs", "sslot"):
        out[key] = out[key].astype(np.int64)
    return out


def set_targets(joints: dict, t: float) -> None:
    """Set the driven angle rows' targets to the drives' values at time ``t``.

    :meth:`fem.constraints.joint.Joint._drive_at`, the reported coordinate's sign included.
    """
    for where, c in joints["driven"]:
        joints["atarget"][where] = c._drive_at(t)


def free_rows(dm) -> tuple[NDArray, NDArray]:
    """``(n_free,)`` each unknown's node and slot (0-2: ``ux, uy, rz``), for the compiled loops.

    Multipliers have slot 3 and, for node, their position in ``State.multipliers``.
    """
    free = (dm.index >= 0) & (dm.index < dm.n_free)
    nodes_, slots = np.nonzero(free)
    rows = dm.index[free]
    free_node, free_slot = np.empty(dm.n_free, np.int64), np.empty(dm.n_free, np.int64)
    free_node[rows], free_slot[rows] = nodes_, slots
    mult = dm.blocks["multipliers"]
    free_node[mult] = np.arange(mult.stop - mult.start)
    free_slot[mult] = 3
    return free_node, free_slot


def joint_order(system) -> tuple[NDArray, int]:
    """A numbering of the unknowns for the banded LU without pivoting, and its band ``kl``.

    Nodes in their own order or in reverse Cuthill-McKee's (of the nodal pattern, where that is
    narrower and the band wider than :data:`~fem.solvers.banded.RCM_ABOVE`), each node's unknowns
    together; each joint's multipliers right after the last unknown of its two nodes. A
    multiplier's pivot is then the Schur complement ``-G M^-1 G^T`` of unknowns already
    eliminated, never a structural zero. ``order[k]``: the unknown at position ``k``.
    """
    dm, asm = system.dofmap, system.assembler
    n, n_nodal = dm.n_free, dm.n_nodal
    free_node, _ = free_rows(dm)
    rows = np.repeat(np.arange(n), np.diff(asm.indptr))
    cols = asm.indices

    def numbered(rank):
        key = np.empty(n)
        key[:n_nodal] = rank[free_node[:n_nodal]]
        for sc in asm.constraints:
            nodal = np.where((sc.edofs[:, :6] >= 0) & (sc.edofs[:, :6] < n_nodal),
                             key[np.clip(sc.edofs[:, :6], 0, n_nodal - 1)], -np.inf)
            key[sc.edofs[:, 6:]] = nodal.max(axis=1)[:, None] + 0.5
        order = np.argsort(key, kind="stable").astype(np.int64)
        where = np.empty(n, dtype=np.int64)
        where[order] = np.arange(n)
        return order, int(np.abs(where[rows] - where[cols]).max()) if n else 0

    order, kl = numbered(np.arange(system.model.n_nodes, dtype=float))
    if kl > RCM_ABOVE and n_nodal:
        import scipy.sparse as sp
        from scipy.sparse.csgraph import reverse_cuthill_mckee

        nod = (rows < n_nodal) & (cols < n_nodal)
        a, b = free_node[rows[nod]], free_node[cols[nod]]
        nn = system.model.n_nodes
        graph = sp.csr_matrix((np.ones(len(a)), (a, b)), shape=(nn, nn))
        rcm = reverse_cuthill_mckee(graph, symmetric_mode=True)
        rank = np.empty(nn)
        rank[rcm] = np.arange(nn)
        other, narrow = numbered(rank)
        if narrow < kl:
            order, kl = other, narrow
    return order, kl
