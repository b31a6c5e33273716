"""The writer of one step's frames in the results file (:mod:`fem.io.hdf5`, its layout).

A frame is a transaction: every dataset of the step grows by the same frame, or, when writing
fails (a full disk) or a signal arrives, none does; a quantity missing from a frame is ``NaN``.
The frames are committed with their ParaView views by the results file
(:meth:`fem.io.hdf5.ResultsFile.commit`). Datasets are chunked by about one frame (at least
4 KiB, at most 1 MiB), so the file grows with the data instead of by a thousand frames at a time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import h5py
import numpy as np
from numpy.typing import NDArray

from fem import interrupt
from fem.errors import OutputError
from fem.io import files, paraview_views

if TYPE_CHECKING:
    from fem.io.hdf5 import ResultsFile

CHUNK_MIN = 4096            # bytes: one disk page; smaller chunks cost more index than data
CHUNK_MAX = 1 << 20         # bytes
FRAME_OVERHEAD = 1 << 20    # bytes a frame may need beyond its data (views, metadata, XDMF)


def clock_at(clock: str, time: float, index: int) -> float:
    """Where frame ``index`` (from 0) stands on a step's ParaView clock, before its offset.

    ``clock`` is the step's (:class:`StepWriter`), ``time`` the frame's time or load factor.
    """
    if clock == "count":
        return float(index + 1)
    return abs(time) if clock == "abs" else time


def _chunk(shape: tuple[int, ...], itemsize: int = 8) -> tuple[int, ...]:
    """Chunk of an extendable ``(T,) + shape`` dataset: about one frame, 4 KiB to 1 MiB.

    >>> _chunk(())                      # a scalar per frame: 512 frames in a 4 KiB chunk
    (512,)
    >>> _chunk((12000, 3))              # 288 kB per frame: one frame
    (1, 12000, 3)
    >>> _chunk((200000, 3))             # 4.8 MB per frame: split along the nodes
    (1, 43690, 3)
    """
    frame = int(np.prod(shape, dtype=np.int64)) * itemsize
    if frame <= CHUNK_MIN:
        return (max(1, CHUNK_MIN // max(frame, 1)),) + tuple(shape)
    if frame <= CHUNK_MAX or not shape:
        return (1,) + tuple(shape)
    rest = int(np.prod(shape[1:], dtype=np.int64)) * itemsize
    return (1, max(1, CHUNK_MAX // max(rest, 1))) + tuple(shape[1:])



class StepWriter:
    """Appends frames of one step; each :meth:`frame` extends every dataset and flushes.

    ``clock`` says how the step's frames are placed in the ParaView time series, whose times
    must strictly increase: ``"time"`` (dynamic steps: the time), ``"abs"`` (static load control:
    the magnitude of the load factor, which also grows when the load factor goes negative) or
    ``"count"`` (static steps whose load factor can fall, arc-length and displacement control:
    1, 2, 3, ... per frame). The results file keeps the step's own ``time`` in any case. ``span``
    is where the clock ends, for the progress display.
    """

    def __init__(self, results: ResultsFile, name: str, step_type: str, system, index: int,
                 time_offset: float, clock: str = "time", span: float | None = None,
                 resume: bool = False):
        self.results = results
        self.h5 = results.h5
        self.system = system
        self.name = name
        self.clock = clock
        self.count = 0
        self.last_time = 0.0
        self.datasets: dict[str, h5py.Dataset] = {}
        self.progress = None            # the resumable step's progress (checkpoints), if any
        if resume:
            self._reopen()
        else:
            self.g = self.h5.require_group("steps").create_group(name)
            self.g.attrs["type"] = step_type
            self.g.attrs["index"] = index
            self.g.attrs["time_offset"] = time_offset
            self.g.attrs["dof_names"] = list(system.model.slots)
            self.g.attrs["clock"] = clock
            self.attrs = {"type": step_type, "index": index}
            self.time_offset = time_offset
            self.series_time = time_offset
        if results.progress is not None:
            results.progress.begin(name, step_type, span, clock)

    def _reopen(self) -> None:
        """Continue the step's frames in the file (a restart: :mod:`fem.io.restart`).

        Its datasets are those of the step's group (but its state and checkpoints) and its
        views' sources under ``/xdmf/steps/<step>``; the frames continue after the last.
        """
        self.g = self.h5[f"steps/{self.name}"]
        a = self.g.attrs
        self.attrs = {"type": str(a["type"]), "index": int(a["index"])}
        self.clock = str(a["clock"])
        self.time_offset = float(a["time_offset"])

        def add(prefix):
            def visit(name, obj):
                if isinstance(obj, h5py.Dataset) and not name.startswith(("state/",
                                                                          "checkpoints/")):
                    self.datasets[prefix + name] = obj
            return visit
        self.g.visititems(add(""))
        for part in ("drawn", "node"):
            src = self.h5.get(f"xdmf/steps/{self.name}/{part}")
            if src is not None:
                src.visititems(add(f"/xdmf/steps/{self.name}/{part}/"))
        self.count = len(self.g["time"]) if "time" in self.g else 0
        self.series_time = self.time_offset
        if self.count:
            self.last_time = float(self.g["time"][self.count - 1])
            self.series_time = self.time_offset + clock_at(self.clock, self.last_time,
                                                           self.count - 1)
        self.results.step_index = self.attrs["index"] + 1

    def keep_checkpoints(self, progress) -> None:
        """Write checkpoints with the frames; ``progress()`` gives the step's progress then.

        A step that can be resumed from any frame (:mod:`fem.io.restart`) asks for them: after
        every ``checkpoint_interval``-th frame and with the last (``frame(..., last=True)``).
        """
        self.progress = progress

    def _dataset(self, path: str, value: NDArray) -> h5py.Dataset:
        """The dataset of ``path`` (in the step's group, or absolute).

        A dataset that first appears after frame 0 gets ``NaN`` for the frames written before.
        """
        d = self.datasets.get(path)
        if d is None:
            parent = self.h5 if path.startswith("/") else self.g
            d = parent.create_dataset(path, shape=(self.count,) + value.shape,
                                      maxshape=(None,) + value.shape, dtype="f8",
                                      chunks=_chunk(value.shape), fillvalue=np.nan)
            self.datasets[path] = d
        return d

    def _clock(self, time: float) -> float:
        """Where frame ``self.count`` (the next one) stands on the step's clock."""
        return clock_at(self.clock, time, self.count)

    def advance(self, value: float, iterations: int | None = None) -> None:
        """Tell the progress display that the step reached ``value`` (not a frame).

        ``value`` is the load factor or time of an increment or time step, or for the
        ``"count"`` clock the increment number.
        """
        if self.results.progress is not None:
            self.results.progress.update(abs(value) if self.clock == "abs" else value,
                                         iterations)

    def frame(self, state, *, outputs: dict, time: float, reactions: NDArray | None = None,
              stats: dict | None = None, energy: dict | None = None,
              dynamic: bool = False, nodal_fields: dict | None = None,
              last: bool = False) -> None:
        """Write one output frame of ``state``.

        ``outputs`` are the step's element and constraint outputs at ``state``,
        ``{group: {quantity: (E,) or (E, k)}}`` (what :meth:`fem.system.System.outputs` returns):
        the writer is handed them and never evaluates elements; ``nodal_fields`` the nodal
        fields, ``{name: (n,) or (n, 3)}`` (:meth:`fem.system.System.frame_outputs`).
        ``reactions`` is a full active-DOF vector. ``last``: the step's last frame (a
        checkpoint follows it when the step keeps them, :meth:`keep_checkpoints`).
        """
        sysm = self.system
        values = {"time": time, "displacement": state.u, "rotation": state.quaternions(),
                  "rotation_vector": state.rotation_vectors()}
        if reactions is not None:
            nodal = sysm.dofmap.to_nodal(reactions)
            nodal[~sysm.dofmap.fixed] = 0.0
            values["reaction"] = nodal
        if dynamic:
            values["velocity"] = state.v
            values["acceleration"] = state.a
        for gname, outs in outputs.items():
            for q, arr in outs.items():
                values[f"elements/{gname}/{q}"] = arr
        for q, arr in (nodal_fields or {}).items():
            values[f"nodal/{q}"] = arr
        for k, v in (stats or {}).items():
            values[f"increments/{k}"] = v
        for k, v in (energy or {}).items():
            values[f"energy/{k}"] = v
        if self.results.paraview:
            values.update(paraview_views.frame_arrays(self.results.drawing, sysm.model,
                                                      self.name, values))
        sensors = {s.dataset: s.value(values) for s in self.results.sensors}
        values.update(sensors)
        clock = self._clock(time)
        at = self.time_offset + clock
        need = sum(np.asarray(v).nbytes for v in values.values())
        # data, the views ParaView reads, HDF5's metadata and the XDMF text: generously
        files.ensure_room(self.results.path, 2 * need + FRAME_OVERHEAD,
                          f"frame {self.count} of step '{self.name}'")
        every = self.results.checkpoint_interval
        checkpoint = self.progress is not None and (last or (every > 0
                                                             and (self.count + 1) % every == 0))
        with interrupt.critical():
            self._write(values)
            for s in self.results.sensors:
                d = self.datasets[s.dataset]
                if "what" not in d.attrs:
                    d.attrs.update(s.attrs(sysm.model.units))
            self.results.pending.append((self, paraview_views.Frame(self.name, self.count - 1,
                                                                    at, frozenset(values))))
            self.last_time = time
            self.series_time = at
            if checkpoint:
                self.results.write_checkpoint(self.name, self.count - 1, state, self.progress())
        self.results.commit(checkpoint=checkpoint)
        if self.results.progress is not None:
            self.results.progress.frame(self.name, self.count - 1, clock)
        interrupt.check()               # a frame boundary is a safe point to stop at

    def _write(self, values: dict) -> None:
        """Extend every dataset by one frame, or none of them (see the module docstring)."""
        k = self.count
        try:
            for path, value in values.items():
                value = np.asarray(value, dtype=float)
                d = self._dataset(path, value)
                d.resize(k + 1, axis=0)
                d[k] = value
            for path, d in self.datasets.items():
                if path not in values:          # a quantity this frame does not have
                    d.resize(k + 1, axis=0)
        except BaseException as err:
            if files.is_io_error(err):
                self.results.seal()
                raise OutputError(f"cannot write frame {k} of step '{self.name}' to "
                                  f"{self.results.path}: {files.reason(err)}") from None
            self._rollback(k)
            raise
        self.count = k + 1

    def _rollback(self, k: int) -> None:
        """Cut every dataset back to ``k`` frames (best effort: the disk may be full)."""
        for d in self.datasets.values():
            try:
                if d.shape[0] > k:
                    d.resize(k, axis=0)
            except (OSError, RuntimeError):
                pass
        try:
            self.h5.flush()
        except (OSError, RuntimeError):
            pass

    def close(self) -> None:
        """Finish the step: commit its frames; the next step's times continue after its own."""
        self.results.time_offset = self.series_time
        try:
            self.results.commit(force=True)
        finally:
            if self.results.progress is not None:
                self.results.progress.end()
