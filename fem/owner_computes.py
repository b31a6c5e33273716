"""Owner-computes assembly across MPI ranks: each rank evaluates the elements of its rows only.

Issue 31, stage 5. With ``-fem_distributed_assembly`` on the command line of a replicated run
(``mpiexec -n N fem run deck.toml -o out.h5 -fem_distributed_assembly``; it implies
``-fem_distributed_solve``, :mod:`fem.solvers.linear_system`), the static and dynamic steps'
Newton matrices are assembled by their owners. The model is partitioned once
(:class:`fem.partition.Partition`); rank ``r`` owns the unknowns (and the fixed positions, whose
rows hold reactions) the partition gives it, and the PETSc matrix's rows are numbered by the
partition (:class:`fem.linalg.RowMap`), rank 0's first. Each rank then evaluates only the
elements that touch a position it owns (its elements and one layer of ghosts: a part of each
group, :meth:`fem.elements.base.ElementGroup.take`), assembles them with the serial assembler's
pattern and slots cut to those elements, and sets only its rows of the matrix. Every entry of an
owned row sums the same element values in the same order as the serial assembly (the elements
keep their global order, a part runs the same compiled or numpy code as its whole group), so
the rows are the serial ones bit for bit; the other rows of the rank's values are partial sums
and are never used.

The state stays replicated (stage 6, collective control, is not built): the internal-force
vector's owned positions are gathered to every rank (:meth:`OwnerComputes.complete`, one
``Allgatherv`` of ``n`` numbers), so the residual, its norms and every decision are the serial
ones, bit for bit; so is the round-off floor ``|K| q`` of the convergence test. Right-hand
sides and solutions cross into and out of the partition's numbering in the solve
(:mod:`fem.linalg.checked`). What is still whole on every rank: the model, the state, the
serial CSR pattern and its slots, mass matrices, constraint groups (joints are evaluated whole:
they are few) and the nodal blocks; memory per rank therefore does not yet fall as 1/N.

Only element groups of the families ``beam``, ``shell`` and ``truss`` larger than
:data:`MIN_TAKE` are cut; other groups are evaluated whole on every rank (their owned rows are
still right). What a step assembles outside :meth:`fem.system.System.evaluate` and
:meth:`~fem.system.System.tangent` (mass matrices, the energy-conserving integrator's element
forces) is assembled whole, as before, and is right on every row. Steps other than static and
dynamic ones, and models whose element sets change (contact), keep the replicated assembly and
say so in the log.
"""

from __future__ import annotations

import copy
import logging

import numpy as np
from numpy.typing import NDArray

from fem import _petsc, mpi
from fem.assembly import Scatter
from fem.partition import Partition

log = logging.getLogger(__name__)

#: the command-line option that asks for owner-computes assembly (module docstring)
OPTION = "fem_distributed_assembly"

#: element families whose groups are cut into parts (:meth:`ElementGroup.take`)
FAMILIES = ("beam", "shell", "truss")

#: groups of fewer elements are evaluated whole: no array of theirs can be mistaken for a
#: per-element one (:meth:`fem.elements.base.ElementGroup.take`), and they cost little
MIN_TAKE = 64


def requested() -> bool:
    """Whether ``-fem_distributed_assembly`` was given in a run of several ranks."""
    return mpi.size() > 1 and bool(_petsc.PETSc().Options().getBool(OPTION, False))


class OwnerComputes:
    """A rank's part of the assembly of a :class:`fem.system.System` (module docstring).

    Parameters
    ----------
    system : the system (its model, DOF map and assembler)
    partition : the model's partition
    rank : this rank
    comm : the mpi4py communicator of the ranks (``None``: gathering is left to the caller,
        tests)
    """

    def __init__(self, system, partition: Partition, rank: int, comm=None):
        self.system, self.partition, self.rank, self.comm = system, partition, rank, comm
        asm = system.assembler
        mine = partition.owner == rank
        groups, scatters = [], []
        for g, sc in zip(system.model.groups, asm.groups, strict=True):
            E, nd = sc.edofs.shape
            touch = np.any((sc.edofs >= 0) & mine[np.maximum(sc.edofs, 0)], axis=1)
            keep = np.flatnonzero(touch)
            if g.type_name not in FAMILIES or len(g) < MIN_TAKE or len(keep) == E:
                groups.append(g)
                scatters.append(sc)
                continue
            groups.append(g.take(keep))
            scatters.append(Scatter(sc.edofs[keep], sc.slot.reshape(E, nd * nd)[keep].reshape(-1),
                                    whole=len(sc.slot)))
        self.groups = groups
        self.assembler = copy.copy(asm)
        self.assembler.groups = scatters
        self.assembler._orders = {}           # compiled gathers' orders, per source
        self.elements = sum(len(g) for g in groups)
        self._gathers: dict[int, tuple[NDArray, NDArray, NDArray]] = {}

    @classmethod
    def of(cls, system) -> OwnerComputes:
        """The rank's owner-computes assembly of ``system`` (partitioned once per pattern)."""
        got = system.__dict__.get("_owner_computes")
        if got is not None and got.system.assembler is system.assembler:
            return got
        comm = mpi.mpi4py_comm()
        partition = Partition.build(system.model, system.dofmap, comm.Get_size(), comm)
        got = cls(system, partition, comm.Get_rank(), comm)
        system.__dict__["_owner_computes"] = got
        total = sum(len(g) for g in system.model.groups)
        log.info("owner-computes assembly: rank %d owns %d of %d unknowns and evaluates %d of "
                 "%d elements", got.rank, int(np.diff(partition.ranges)[got.rank]),
                 system.n_free, got.elements, total)
        return got

    # --- what System.evaluate and System.tangent give under owner-computes ---------------------
    def evaluate(self, state, load_stiffness: NDArray | None = None, tangent: bool = True,
                 constraints: bool = True) -> tuple[NDArray, NDArray | None]:
        """:meth:`fem.system.System.evaluate`: the whole force, the tangent's owned rows."""
        sysm = self.system
        pairs = [g.evaluate(state, tangent) for g in self.groups]
        f = self.assembler.vector([fe for fe, _ in pairs],
                                  constraints=sysm._constraints(state, "vector") if constraints
                                  else None)
        f = self.complete(f)
        if not tangent:
            return f, None
        K = self.assembler.matrix([ke for _, ke in pairs], load_stiffness,
                                  constraints=sysm._constraints(state, "tangent") if constraints
                                  else None)
        return f, K

    def tangent(self, state, load_stiffness: NDArray | None = None,
                constraints: bool = True) -> NDArray:
        """:meth:`fem.system.System.tangent`: CSR values right on the owned rows."""
        return self.assembler.matrix(
            [g.tangent(state) for g in self.groups], load_stiffness,
            constraints=self.system._constraints(state, "tangent") if constraints else None)

    def complete(self, v: NDArray) -> NDArray:
        """``v`` (a full vector or its first positions) with every position from its owner.

        This rank's owned positions of ``v`` are right; the others are taken from their owners
        (one ``Allgatherv``). Without a communicator ``v`` is returned as it is.
        """
        if self.comm is None:
            return v
        n = len(v)
        got = self._gathers.get(n)
        if got is None:
            owner = self.partition.owner[:n]
            order = np.argsort(owner, kind="stable")        # positions grouped by owner
            counts = np.bincount(owner, minlength=self.partition.size)
            start = int(counts[:self.rank].sum())
            got = self._gathers[n] = (order, counts, order[start:start + counts[self.rank]])
        order, counts, mine = got
        buf = np.empty(n)
        self.comm.Allgatherv(np.ascontiguousarray(v[mine], dtype=float), [buf, counts])
        out = np.empty(n)
        out[order] = buf
        return out


def attach(step) -> None:
    """Give ``step``'s system and linear system owner-computes assembly when asked and able.

    Called when the step opens its solver: a step that cannot (module docstring) says why in the
    log and keeps the replicated assembly (with the distributed solve).
    """
    sysm = step.system
    sysm.owner = None
    if not requested() or not step.linear.distributed:
        return
    reason = _unsupported(step)
    if reason:
        log.info("step '%s': owner-computes assembly not used (%s); each rank assembles the "
                 "whole model", step.name, reason)
        return
    oc = OwnerComputes.of(sysm)
    sysm.owner = oc
    p = oc.partition
    step.linear.rows = (p.serial, p.new, p.ranges, oc.rank)


def detach(step) -> None:
    """The system's own (whole) assembly again, after ``step``."""
    step.system.owner = None


def _unsupported(step) -> str:
    """Why ``step`` cannot assemble by owners ('' if it can)."""
    kind = getattr(step, "step_type", "")
    if kind not in ("static", "dynamic"):
        return f"a {kind} step"
    for g in step.system.model.groups:
        if g.type_name == "contact":
            return f"element group '{g.name}' changes its elements"
    return ""
