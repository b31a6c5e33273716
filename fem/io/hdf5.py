"""The results file (HDF5), written as the analysis goes.

Layout (DESIGN.md, "Results file")::

    /                       attrs: fem_version, versions, created, title, units, deck, deck_path
    /model/nodes            (n, 3) reference coordinates        node_ids (n,)
    /model/cells            (E_total, 2) node indices of all line elements (for ParaView)
    /model/sets/<name>      node ids of each node set
    /model/groups/<g>/      connectivity (E, nen) node indices, per-element properties; attrs
    /steps/<s>/             attrs: type, index, time_offset, dof_names
        time                (T,)     time, or load factor in static steps
        displacement        (T, n, 3)
        rotation            (T, n, 4) unit quaternions (w, x, y, z), from the reference
        rotation_vector     (T, n, 3)
        reaction            (T, n, nslots) at supported DOFs (zero elsewhere)
        velocity, acceleration (T, n, nslots)       dynamic steps
        elements/<g>/<q>    (T, E)   section forces
        energy/<kind>       (T,)     dynamic steps: kinetic, strain, external_work,
                                     constraint_work, total, dissipated; (T, 3) momenta
        increments/<name>   (T,)     Newton statistics per output frame
    /modes/<s>/             eigenvalues (m,), shapes (m, n, nslots), attrs
    /xdmf/...               virtual datasets (views of the arrays above) that the XDMF files name

Every time-indexed dataset is chunked and extended by one frame at a time, and the file is flushed
after each frame, so an interrupted run keeps every completed frame readable.
"""

from __future__ import annotations

import datetime
import os
import re

import h5py
import numpy as np
from numpy.typing import NDArray

from fem import _petsc
from fem.errors import FemError
from fem.io import paraview


class ResultsFileError(FemError):
    """The results file cannot be created (exit code 2, like any bad input)."""

    exit_code = 2


def _create(path: str) -> h5py.File:
    """``h5py.File(path, "w")``, with a clear error when it cannot be created."""
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        return h5py.File(path, "w")
    except OSError as err:
        m = re.search(r"error message = '([^']*)'", str(err))
        reason = m.group(1) if m else (err.strerror or str(err))
        if "lock" in str(err).lower():
            reason = ("it is locked by another program (is it open in ParaView or another "
                      "fem run?)")
        raise ResultsFileError(f"cannot create the results file {path}: {reason}") from None


def _chunk(shape: tuple[int, ...]) -> tuple[int, ...]:
    per_frame = int(np.prod(shape)) or 1
    return (max(1, min(1024, 262144 // per_frame)),) + tuple(shape)


class ResultsFile:
    """An open results file; :meth:`begin_step` returns a writer for one step's frames."""

    def __init__(self, path: str, model, *, deck_text: str = "", deck_path: str = "",
                 versions: dict | None = None):
        self.path = os.path.abspath(path)
        self.xdmf_path = os.path.splitext(self.path)[0] + ".xdmf"
        self.model = model
        # Start MPI (through PETSc) before opening the file: Open MPI's singleton start-up forks a
        # helper that would inherit the file descriptor and keep HDF5's lock after we close it.
        _petsc.init()
        self.h5 = _create(self.path)
        attrs = self.h5.attrs
        from fem import __version__

        attrs["fem_version"] = __version__
        attrs["created"] = datetime.datetime.now().isoformat(timespec="seconds")
        attrs["title"] = model.title
        attrs["units"] = model.units
        attrs["deck"] = deck_text
        attrs["deck_path"] = deck_path
        for k, v in (versions or {}).items():
            attrs[f"version_{k}"] = str(v)
        self._write_model()
        self.time_offset = 0.0
        self.step_index = 0
        self.frames: list[paraview.Frame] = []
        self.series = paraview.SeriesFile(self.xdmf_path, os.path.basename(self.path), model)
        self.h5.flush()

    def _write_model(self) -> None:
        m = self.model
        g = self.h5.create_group("model")
        g.attrs["dim"] = m.dim
        g.attrs["dof_names"] = list(m.slots)
        g.create_dataset("nodes", data=m.X)
        g.create_dataset("node_ids", data=m.node_ids)
        sets = g.create_group("sets")
        for name, idx in m.node_sets.items():
            sets.create_dataset(name, data=m.node_ids[idx])
        groups = g.create_group("groups")
        cells = []
        for grp in m.groups:
            gg = groups.create_group(grp.name)
            gg.attrs["type"] = grp.type_name
            for key in ("formulation", "theory", "strain"):
                if hasattr(grp, key):
                    gg.attrs[key] = getattr(grp, key)
            gg.create_dataset("connectivity", data=grp.conn)
            for key, val in grp.properties().items():
                gg.create_dataset(key, data=val)
            if grp.nen == 2:
                cells.append(grp.conn)
        g.create_dataset("cells", data=np.concatenate(cells) if cells else np.zeros((0, 2), int))

    def begin_step(self, name: str, step_type: str, system) -> StepWriter:
        """A writer for the frames of step ``name``."""
        w = StepWriter(self, name, step_type, system, self.step_index, self.time_offset)
        self.step_index += 1
        return w

    def write_modes(self, name: str, step_type: str, eigenvalues: NDArray, shapes: NDArray,
                    attrs: dict | None = None, extra: dict | None = None) -> str:
        """Eigenvalues ``(m,)`` and nodal shapes ``(m, n, nslots)``; returns the XDMF path."""
        g = self.h5.require_group("modes").create_group(name)
        g.attrs["type"] = step_type
        g.attrs["dof_names"] = list(self.model.slots)
        for k, v in (attrs or {}).items():
            g.attrs[k] = v
        g.create_dataset("eigenvalues", data=eigenvalues)
        g.create_dataset("shapes", data=shapes)
        for k, v in (extra or {}).items():
            g.create_dataset(k, data=v)
        self.h5.flush()
        path = os.path.splitext(self.path)[0] + f"_{name}_modes.xdmf"
        paraview.write_modes(path, self, name, len(eigenvalues))
        return path

    def close(self) -> None:
        """Flush and close the file."""
        if self.h5:
            self.h5.flush()
            self.h5.close()
            self.h5 = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class StepWriter:
    """Appends frames of one step; each :meth:`frame` extends every dataset and flushes."""

    def __init__(self, results: ResultsFile, name: str, step_type: str, system, index: int,
                 time_offset: float):
        self.results = results
        self.h5 = results.h5
        self.system = system
        self.name = name
        self.g = self.h5.require_group("steps").create_group(name)
        self.g.attrs["type"] = step_type
        self.g.attrs["index"] = index
        self.g.attrs["time_offset"] = time_offset
        self.g.attrs["dof_names"] = list(system.model.slots)
        self.time_offset = time_offset
        self.count = 0
        self.last_time = 0.0

    def _append(self, path: str, value) -> None:
        value = np.asarray(value, dtype=float)
        if path not in self.g:
            self.g.create_dataset(path, shape=(0,) + value.shape, maxshape=(None,) + value.shape,
                                  chunks=_chunk(value.shape), dtype="f8")
        d = self.g[path]
        d.resize(self.count + 1, axis=0)
        d[self.count] = value

    def frame(self, state, *, time: float, reactions: NDArray | None = None,
              stats: dict | None = None, energy: dict | None = None,
              dynamic: bool = False) -> None:
        """Write one output frame of ``state``; ``reactions`` is a full active-DOF vector."""
        sysm = self.system
        self._append("time", time)
        self._append("displacement", state.u)
        self._append("rotation", state.quaternions())
        self._append("rotation_vector", state.rotation_vectors())
        if reactions is not None:
            nodal = sysm.dofmap.to_nodal(reactions)
            nodal[~sysm.dofmap.fixed] = 0.0
            self._append("reaction", nodal)
        if dynamic:
            self._append("velocity", state.v)
            self._append("acceleration", state.a)
        for gname, outs in sysm.outputs(state).items():
            for q, arr in outs.items():
                self._append(f"elements/{gname}/{q}", arr)
        for k, v in (stats or {}).items():
            self._append(f"increments/{k}", v)
        for k, v in (energy or {}).items():
            self._append(f"energy/{k}", v)
        self.results.frames.append(paraview.Frame(self.name, self.count,
                                                  self.time_offset + time))
        self.count += 1
        self.last_time = time
        fields = paraview.add_frame_views(self.results, self.name, self.count - 1)
        self.h5.flush()
        self.results.series.add(f"{self.name} {self.count - 1}", self.time_offset + time, fields)

    def close(self) -> None:
        """Finish the step: the next step's times continue after this one's."""
        self.results.time_offset = self.time_offset + self.last_time
        self.h5.flush()
