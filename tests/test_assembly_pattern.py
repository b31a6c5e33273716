"""The CSR pattern and every source's slots (fem.assembly.csr_pattern, issue 31's memory) against
the one-``np.unique`` construction they replace and against scipy's COO -> CSR pattern.

The models have several element groups, a joint's multipliers and beams' interior unknowns
(``cases/portal_frame_pinned`` numbered for linear buckling), inactive slots (a 2D truss node
without rotation), an empty group, and a lattice of 3D beams; each is built at once (its size)
and in chunks smaller than one element, a few elements and one group.
"""

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from test_assembly import mixed_model

from benchmarks.common import space_frame
from benchmarks.pattern_memory import reference_pattern
from fem import assembly
from fem.assembly import csr_pattern, pattern_sources
from fem.dofs import DofMap
from fem.io import deck as deck_io
from fem.system import System

PORTAL = Path(__file__).resolve().parents[1] / "cases" / "portal_frame_pinned" / "deck.toml"


def _models():
    """``{name: (model, dofmap)}``."""
    portal = deck_io.load(str(PORTAL)).model
    empty = portal.groups[0].take(np.zeros(0, dtype=np.int64))
    emptied = portal.with_changes(groups=(portal.groups[0], empty, portal.groups[1]))
    mixed = mixed_model()
    lattice = space_frame(4)[0]
    return {"portal": (portal, DofMap.build(portal, internal=True)),
            "empty_group": (emptied, DofMap.build(emptied, internal=True)),
            "inactive_slots": (mixed, DofMap.build(mixed)),
            "lattice": (lattice, DofMap.build(lattice))}


MODELS = _models()
# (at once up to, chunk): at once; chunks under one element's entries; a few elements; one group
WAYS = [(None, None), (0, 5), (0, 1000), (0, 1 << 22)]


def _assert_same(got, want):
    """Equal arrays of equal dtypes: ``(indptr, indices, slots)``."""
    for a, b in zip((got[0], got[1], *got[2]), (want[0], want[1], *want[2]), strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert np.array_equal(a, b)


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("name", list(MODELS))
def test_the_pattern_and_slots_equal_the_one_unique_construction(name, way, monkeypatch):
    """Bit for bit and dtype for dtype, whichever way they are built."""
    model, dm = MODELS[name]
    if way[0] is not None:
        monkeypatch.setattr(assembly, "PATTERN_AT_ONCE", way[0])
        monkeypatch.setattr(assembly, "PATTERN_CHUNK", way[1])
    sources = pattern_sources(model, dm)
    assert dm.blocks["internal"].stop > dm.blocks["internal"].start or name in (
        "inactive_slots", "lattice")
    _assert_same(csr_pattern(sources, dm.n_free), reference_pattern(sources, dm.n_free))


@pytest.mark.parametrize("way", WAYS[:2])
@pytest.mark.parametrize("name", list(MODELS))
def test_the_pattern_is_scipys_and_each_slot_is_its_entry(name, way, monkeypatch):
    """The pattern is scipy's COO -> CSR of the entries that couple two unknowns and the
    diagonal; each slot is the CSR position of its own entry's (row, column), ``nnz`` where the
    entry touches an inactive slot (-1), a fixed DOF or nothing."""
    model, dm = MODELS[name]
    if way[0] is not None:
        monkeypatch.setattr(assembly, "PATTERN_AT_ONCE", way[0])
        monkeypatch.setattr(assembly, "PATTERN_CHUNK", way[1])
    n = dm.n_free
    sources = pattern_sources(model, dm)
    indptr, indices, slots = csr_pattern(sources, n)
    assert indptr.dtype == indices.dtype == np.int64
    rows, cols, drops = [np.arange(n)], [np.arange(n)], 0
    for ed, slot in zip(sources, slots, strict=True):
        r = np.repeat(ed, ed.shape[1], axis=1).reshape(-1)
        c = np.tile(ed, (1, ed.shape[1])).reshape(-1)
        keep = (r >= 0) & (r < n) & (c >= 0) & (c < n)
        assert slot.dtype == np.int32 and slot.shape == r.shape
        assert np.all(slot[~keep] == len(indices))
        entry_rows = np.searchsorted(indptr, slot[keep], side="right") - 1
        assert np.array_equal(entry_rows, r[keep]) and np.array_equal(indices[slot[keep]], c[keep])
        rows.append(r[keep])
        cols.append(c[keep])
        drops += int((~keep).sum())
    assert drops > 0                       # fixed DOFs (and inactive slots) are dropped
    ref = sp.csr_matrix((np.ones(sum(map(len, rows))), (np.concatenate(rows),
                                                         np.concatenate(cols))), shape=(n, n))
    ref.sum_duplicates()
    assert np.array_equal(indptr, ref.indptr) and np.array_equal(indices, ref.indices)


def test_a_system_built_in_chunks_has_the_reference_scatters(monkeypatch):
    """``System`` (the assembler's sources, groups, joints and nodal blocks) in chunks."""
    model, _ = MODELS["portal"]
    sysm_once = System(model)
    monkeypatch.setattr(assembly, "PATTERN_AT_ONCE", 0)
    monkeypatch.setattr(assembly, "PATTERN_CHUNK", 7)
    sysm = System(model)
    a, b = sysm.assembler, sysm_once.assembler
    sources = pattern_sources(model, sysm.dofmap)
    scatters = [*a.groups, *a.constraints, a.nodes]
    assert len(scatters) == len(sources) and len(a.constraints) == 1
    for sc, ed in zip(scatters, sources, strict=True):
        assert np.array_equal(sc.edofs, ed)
    _assert_same((a.indptr, a.indices, [sc.slot for sc in scatters]),
                 reference_pattern(sources, sysm.n_free))
    _assert_same((a.indptr, a.indices, [sc.slot for sc in scatters]),
                 (b.indptr, b.indices, [sc.slot for sc in (*b.groups, *b.constraints, b.nodes)]))


def test_a_source_of_elements_without_dofs_takes_one_chunk():
    """A source of many elements with no DOFs among small ones (one np.unique for all): its
    empty slots and the others' are the reference's (it was cut in chunks of the total's size,
    and its chunks taken for the next sources' keys)."""
    rng = np.random.default_rng(7)
    sources = [np.zeros((10, 0), dtype=np.int64), rng.integers(-1, 4, size=(1, 1)),
               rng.integers(-1, 4, size=(2, 2))]
    _assert_same(csr_pattern(sources, 4), reference_pattern(sources, 4))
