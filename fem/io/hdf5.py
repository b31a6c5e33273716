"""The results file (HDF5), written as the analysis goes.

Layout (DESIGN.md, "Results file")::

    /                       attrs: fem_version, versions, created, title, units, deck, deck_path,
                            paraview (false, only when written without the XDMF views)
    /model/                 attrs: dim, dof_names
    /model/nodes            (n, 3) reference coordinates        node_ids (n,)
    /model/cells            the cells of every group, as the XDMF topology names them
                            (:func:`fem.io.drawing.element_topology`): (E_total, nen) node
                            indices when all groups have one cell type, else XDMF's flat Mixed
                            array; attrs topology (XDMF type: Polyline, Triangle, ..., Mixed),
                            cell_type
    /model/sets/<name>      node ids of each node set
    /model/groups/<g>/      connectivity (E, nen) node indices, per-element properties
                            (``properties()``); attrs type, cell_type (vertex, line, triangle,
                            quad), first_cell (the position of its first cell in /model/cells and
                            in the drawn grid's cells), the group's ``options()``; co-rotational
                            superelements: first_point, drawn_count (their recovered nodes in
                            the drawn grid)
    /model/constraints/<c>/ connectivity (E, 2) node indices of each item (ties: the pairs);
                            attrs type, first_point, first_cell, drawn_count (the joint points
                            of its items' first nodes, and their cells, in the drawn grid)
    /steps/<s>/             attrs: type, index, time_offset, dof_names, clock
        time                (T,)     time, or load factor in static steps
        displacement        (T, n, 3)
        rotation            (T, n, 4) unit quaternions (w, x, y, z), from the reference
        rotation_vector     (T, n, 3)
        reaction            (T, n, nslots) at supported DOFs (zero elsewhere)
        velocity, acceleration (T, n, nslots)       dynamic steps
        elements/<g>/<q>    (T, E)   section forces (the step's outputs, handed to the writer);
                                     ties: fx, fy(, fz); joints also (T, E, 3) force, moment
        nodal/<q>           (T, n) or (T, n, 3) nodal fields (shells: stresses averaged to the
                                     nodes), NaN at nodes a field does not cover
        energy/<kind>       (T,)     dynamic steps: kinetic, strain, external_work,
                                     constraint_work, total, dissipated; (T, 3) momenta
        increments/<name>   (T,)     Newton statistics per output frame
        state/              the state at the step's end: every State field (read back by
                            fem.io.results.read_state), and
            progress/       the step's resumable progress (fem.solvers.controls.StaticProgress,
                            DynamicProgress): scalars as attrs, arrays as datasets
                            (attr ``order``: the State's arrays in the order it lists them)
        checkpoints/<k>/    what ``fem run --restart`` continues from (:mod:`fem.io.restart`),
                            after frame k: ``state/`` and ``progress/`` as above, attrs frame,
                            time, position (the step's place in the deck), complete (the state
                            after the step, for steps that run in one piece; else the state
                            with frame k, the step to be resumed). Written after every
                            ``[output] checkpoint_interval``-th frame of static and dynamic
                            steps and with the last frame of every step, committed with it
    /modes/<s>/             eigenvalues (m,), shapes (m, n, nslots), attrs (interior_modes)
    /xdmf/...               what the XDMF files name (:mod:`fem.io.paraview`): the drawn grid
                            (points, cells, part, kind), steps/<s>/<name>/<k> each frame's
                            attributes (virtual datasets onto /steps, and the nodal frames),
                            steps/<s>/drawn/<q> (T, m, 3) the drawn points' motion, modes/<s>/
                            (not with ``paraview = False``: then only the drawn grid)

Safety (DESIGN.md, "Results file"; :mod:`fem.io.files`):

* the file is created under a temporary name beside the target, and moved into place only if no
  other program has the old one open: a refused run leaves an existing file untouched;
* the writer holds no HDF5 lock, only a shared ``flock``, so h5py, h5dump and ParaView can open
  the file while a run writes it, and a second writer is refused;
* readers see the file as the last *commit* left it: frames are written into HDF5's caches and
  committed together (their ParaView views created, the file flushed, then the XDMF naming them
  rewritten) at most every ``COMMIT_INTERVAL`` seconds, at the end of every step, and on every
  error or signal. Between commits the file on disk does not change, so a reader (which HDF5
  does not protect from a concurrent writer without SWMR, which ParaView cannot read) meets a
  consistent file unless it reads during the few milliseconds of a commit; then it gets an
  error and reads again. A run killed outright (SIGKILL, power loss) loses at most the frames of
  the last ``COMMIT_INTERVAL``;
* a frame is a transaction: every dataset of a step grows by the same frame, or, when writing
  fails (a full disk) or a signal arrives, none does; a quantity missing from a frame is ``NaN``;
* datasets are chunked by about one frame (at least 4 KiB, at most 1 MiB), so the file grows
  with the data instead of by a thousand frames at a time.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import logging
import os
import time as _time

import h5py
import numpy as np
from numpy.typing import NDArray

from fem import __version__ as fem_version
from fem import _petsc, interrupt
from fem.errors import OutputError
from fem.io import (
    drawing,
    files,
    paraview,
    paraview_modes,
    paraview_views,
    plots,
    superelement_file,
)
from fem.io.files import ResultsFileError  # noqa: F401 - re-exported for callers and tests
from fem.io.step_writer import FRAME_OVERHEAD, StepWriter, clock_at

log = logging.getLogger(__name__)

COMMIT_INTERVAL = 0.5       # seconds between commits of written frames (see the docstring)


def _not_inherited(h5: h5py.File) -> None:
    """Keep the file descriptor of ``h5`` out of the processes this one starts.

    PETSc may start during the run (the first step that needs it, :mod:`fem._petsc`), and Open
    MPI's singleton start-up then forks a helper that would inherit the descriptor (HDF5 opens it
    without ``O_CLOEXEC``) and keep the file open after the run closes it. Where the descriptor
    cannot be had (another HDF5 driver), MPI starts now, before anything else is written, as
    it always did.
    """
    try:
        os.set_inheritable(h5.id.get_vfd_handle(), False)
    except (AttributeError, TypeError, ValueError, OSError):
        _petsc.init()


def _open_unlocked(path: str) -> h5py.File:
    """``h5py.File(path, "w")`` holding no HDF5 file lock (readers may open it meanwhile)."""
    try:
        return h5py.File(path, "w", locking=False)
    except (TypeError, ValueError):     # an HDF5 without the option: readers wait for the end
        log.info("this HDF5 cannot write without file locks; the results file can be read "
                 "only after the run")
        return h5py.File(path, "w")


def _state_room(path: str, state, progress, what: str) -> tuple[dict, dict]:
    """The arrays of ``state`` and the fields of ``progress``, room for them checked."""
    arrays = state.arrays()
    fields = {} if progress is None else {name: getattr(progress, name)
                                          for name in progress.__dataclass_fields__}
    extra = [np.asarray(v) for v in fields.values() if isinstance(v, np.ndarray)]
    files.ensure_room(path, 2 * sum(np.asarray(v).nbytes for v in (*arrays.values(), *extra))
                      + FRAME_OVERHEAD, what)
    return arrays, fields


def empty_tables(state) -> list[str]:
    """``<field>/<key>`` of the State's per-group tables that hold no array.

    :meth:`fem.state.State.arrays` lists arrays only, so such a table (a group whose
    algorithmic history is empty) would not come back from them; the results file lists them
    (attribute ``empty``) and :func:`fem.io.results.state_from_group` puts them back.
    """
    out = []
    for f in dataclasses.fields(state):
        value = getattr(state, f.name)
        if isinstance(value, dict):
            out += [f"{f.name}/{k}" for k, v in value.items() if isinstance(v, dict) and not v]
    return out


def _write_state(parent, name: str, state, arrays: dict, fields: dict, progress,
                 sub: str | None = None):
    """Group ``name`` of ``parent``: the State ``arrays`` (in ``sub``) and ``progress``.

    The State's arrays keep their order in the attribute ``order`` (the load history's order is
    the order its loads are summed in), its empty tables are listed in ``empty``
    (:func:`empty_tables`). Returns the group.
    """
    top = parent.create_group(name)
    g = top.create_group(sub) if sub else top
    for key, value in arrays.items():
        g.create_dataset(key, data=value)
    g.attrs["order"] = list(arrays)
    g.attrs["empty"] = empty_tables(state)
    if progress is not None:
        pg = g.create_group("progress") if not sub else top.create_group("progress")
        pg.attrs["type"] = type(progress).__name__
        pg.attrs["none"] = [k for k, v in fields.items() if v is None]
        for key, value in fields.items():
            if isinstance(value, np.ndarray):
                pg.create_dataset(key, data=value)
            elif value is not None:
                pg.attrs[key] = value
    return top


class ResultsFile:
    """An open results file; :meth:`begin_step` returns a writer for one step's frames.

    Parameters
    ----------
    path : the results file (``.h5``); see :func:`fem.io.files.results_path`
    model : the model, written to ``/model``
    progress : optional :class:`fem.progress.Progress` told about steps and frames
    paraview : False: no XDMF files and none of the views they name (the frames' and modes'
        ``/xdmf/steps``, ``/xdmf/modes``), every other dataset as with True; a study's variants
        (:mod:`fem.study.runner`), where the views took 2/3 of a small modal variant's time
    """

    def __init__(self, path: str, model, *, deck_text: str = "", deck_path: str = "",
                 versions: dict | None = None, progress=None, model_hash: str = "",
                 paraview: bool = True):
        self.path = os.path.abspath(path)
        self.xdmf_path = files.xdmf_path(self.path)
        self.paraview = paraview
        self.model = model
        self.progress = progress
        self.h5 = None
        self._lock = None
        self.sealed = False
        self.topology, _ = drawing.element_topology(model)
        self.drawing = drawing.drawing(model)
        if not files.writes():      # a replicated run's other ranks: the same file, in memory
            self.h5 = h5py.File(f"{self.path}.rank{os.getpid()}", "w", driver="core",
                                backing_store=False)
            self._write_header(deck_text, deck_path, versions or {}, model_hash)
            self._write_model()
            self._begin()
            return
        tmp = files.temporary_beside(self.path, ".h5")
        try:
            self.h5 = _open_unlocked(tmp)
            _not_inherited(self.h5)
            self._write_header(deck_text, deck_path, versions or {}, model_hash)
            self._write_model()
            self.h5.flush()
            self._lock = files.SharedLock(tmp)
            files.replace(tmp, self.path)
        except BaseException as err:
            self._abandon(tmp)
            if files.is_io_error(err):
                raise ResultsFileError(f"cannot create the results file {self.path}: "
                                       f"{files.reason(err)}") from None
            raise
        files.remove_stale_xdmf(self.path)
        self._begin()

    def _begin(self) -> None:
        """The writing state of a file without frames."""
        self.time_offset = 0.0
        self.step_index = 0
        self.step_position = 0          # the running step's place in the deck (checkpoints)
        self.checkpoint_interval = 0    # frames between checkpoints (0: at step ends only)
        self.sensors: tuple = ()        # what every frame writes under sensors/ (fem.io.sensors)
        self.frames: list[paraview_views.Frame] = []          # committed frames
        self.pending: list[tuple[StepWriter, paraview_views.Frame]] = []
        self._groups: dict = {}                         # group ids by path, for the views
        self._committed_at = -np.inf
        self.series = paraview.SeriesFile(self.xdmf_path, os.path.basename(self.path),
                                          self.drawing)

    @classmethod
    def reopen(cls, path: str, model, progress=None) -> ResultsFile:
        """The results file ``path`` of an earlier run of ``model``, to write on (a restart).

        :func:`fem.io.restart.truncate` has cut it back to a checkpoint; its frames stay, and
        the XDMF series is rewritten from them (:func:`fem.io.paraview_views.stored_view`).
        The next step's index and time offset follow its last frame. A file written without
        views (root attribute ``paraview`` false) is continued without them.
        """
        self = cls.__new__(cls)
        self.path = os.path.abspath(path)
        self.xdmf_path = files.xdmf_path(self.path)
        self.paraview = True
        self.model, self.progress = model, progress
        self.h5, self._lock, self.sealed = None, None, False
        self.topology, _ = drawing.element_topology(model)
        self.drawing = drawing.drawing(model)
        try:
            try:
                self.h5 = h5py.File(self.path, "r+", locking=False)
            except (TypeError, ValueError):
                self.h5 = h5py.File(self.path, "r+")
            _not_inherited(self.h5)
            self._lock = files.SharedLock(self.path)
            self.paraview = bool(self.h5.attrs.get("paraview", True))
        except BaseException as err:
            if self.h5 is not None:
                self.h5.close()
            if files.is_io_error(err):
                raise ResultsFileError(f"cannot open the results file {self.path} to continue "
                                       f"it: {files.reason(err)}") from None
            raise
        self._begin()
        self._replay()
        return self

    def _replay(self) -> None:
        """The frames in the file, as their writers left them: the series, the next step."""
        found = [(int(g.attrs["index"]), name, g) for name, g in self.h5["steps"].items()
                 if "index" in g.attrs and "time" in g]
        for index, name, g in sorted(found, key=lambda x: x[0]):
            attrs = {"type": str(g.attrs["type"]), "index": index}
            offset, clock = float(g.attrs["time_offset"]), str(g.attrs["clock"])
            for j, t in enumerate(g["time"][()]):
                at = offset + clock_at(clock, t, j)
                if self.paraview:
                    view = paraview_views.stored_view(self.h5, name, j, attrs)
                    self.series.add(f"{name} {j}", at, view)
                self.frames.append(paraview_views.Frame(name, j, float(at)))
                self.time_offset = float(at)
            self.step_index = index + 1
        if self.series.views:
            self.series.write(force=True)
        else:
            try:
                os.unlink(self.xdmf_path)
            except OSError:
                pass

    def commit(self, force: bool = False, checkpoint: bool = False) -> None:
        """Make the frames written so far visible to readers (see the module docstring).

        ``checkpoint``: now, with the checkpoint written after them, whatever the time since the
        last commit; the XDMF follows when it is cheap (a restart rewrites it).
        """
        if self.sealed:
            return
        if not self.pending:
            if force and self.paraview:     # frames a checkpoint committed before the XDMF
                self.series.write(force=True)
            return
        if not (force or checkpoint) \
                and _time.monotonic() - self._committed_at < COMMIT_INTERVAL:
            return
        with interrupt.critical():
            try:
                views = [(w, f, paraview_views.frame_views(self.h5, self.drawing, self.model, f,
                                                     w.datasets, w.attrs, self._groups)
                          if self.paraview else None) for w, f in self.pending]
                self.h5.flush()
            except BaseException as err:
                if files.is_io_error(err):
                    self.seal()
                    raise OutputError(f"cannot write {self.path}: {files.reason(err)}") from None
                raise
            for w, f, view in views:
                self.frames.append(f)
                if view is not None:
                    self.series.add(f"{w.name} {f.index}", f.time, view)
            self.pending.clear()
            self._committed_at = _time.monotonic()
            if self.paraview:
                self.series.write(force=force)

    def _abandon(self, tmp: str) -> None:
        """Undo a creation that failed or was refused: the target was never touched."""
        if self.h5 is not None:
            try:
                self.h5.close()
            except Exception:  # noqa: BLE001 - the first error is the one to report
                pass
            self.h5 = None
        if self._lock is not None:
            self._lock.release()
            self._lock = None
        try:
            os.unlink(tmp)
        except OSError:
            pass

    def _write_header(self, deck_text: str, deck_path: str, versions: dict,
                      model_hash: str = "") -> None:
        from fem import __version__

        attrs = self.h5.attrs
        attrs["fem_version"] = __version__
        attrs["created"] = datetime.datetime.now().isoformat(timespec="seconds")
        attrs["title"] = self.model.title
        attrs["units"] = self.model.units
        attrs["deck"] = deck_text
        attrs["deck_path"] = deck_path
        if model_hash:
            attrs["model_hash"] = model_hash        # what a restart checks (fem.io.restart)
        if not self.paraview:
            attrs["paraview"] = False               # no views: a restart writes none either
        for k, v in versions.items():
            attrs[f"version_{k}"] = str(v)

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
        topo = self.topology
        for grp in m.groups:
            gg = groups.create_group(grp.name)
            gg.attrs["type"] = grp.type_name
            gg.attrs["cell_type"] = grp.cell_type
            for key, value in grp.options().items():
                gg.attrs[key] = value
            gg.create_dataset("connectivity", data=grp.cells)
            for key, val in grp.properties().items():
                gg.create_dataset(key, data=val)
        cells = g.create_dataset("cells", data=topo.cells)
        cells.attrs["topology"] = topo.kind
        types = {grp.cell_type for grp in drawing.drawn_groups(m)}
        cells.attrs["cell_type"] = types.pop() if len(types) == 1 else (
            "mixed" if types else "line")
        constraints = g.create_group("constraints")
        for c in m.constraints:
            cg = constraints.create_group(c.name)
            cg.attrs["type"] = c.type_name
            cg.create_dataset("connectivity", data=c.conn)
        paraview_views.write_drawing(self.h5, self.drawing)

    def begin_step(self, name: str, step_type: str, system, *, clock: str = "time",
                   span: float | None = None, resume: bool = False) -> StepWriter:
        """A writer for the frames of step ``name``; see :class:`StepWriter` for ``clock``.

        ``resume``: the step's frames continue those in the file (a restart).
        """
        w = StepWriter(self, name, step_type, system, self.step_index, self.time_offset,
                       clock=clock, span=span, resume=resume)
        if not resume:
            self.step_index += 1
        return w

    def write_modes(self, name: str, step_type: str, eigenvalues: NDArray, shapes: NDArray,
                    attrs: dict | None = None, extra: dict | None = None,
                    labels: list[str] | None = None, times: NDArray | None = None,
                    vibration: bool = False) -> str | None:
        """Eigenvalues ``(m,)`` and nodal shapes ``(m, n, nslots)``; returns the XDMF path.

        ``labels`` name the modes in the XDMF (default ``mode i``) and ``times`` are the values
        ParaView's time slider shows for them (default ``1, 2, ...``: mode numbers; a modal
        step gives its frequencies in Hz, which increase with the mode). ``vibration`` adds
        ``<out>_<step>_vibration.xdmf``, every mode vibrating through one period
        (:func:`fem.io.paraview_modes.write_vibration`).
        """
        frames = paraview_modes.VIBRATION_FRAMES if vibration else 0
        files.ensure_room(self.path, 2 * (eigenvalues.nbytes + shapes.nbytes)
                          + 12 * frames * shapes.shape[0] * self.model.n_nodes + FRAME_OVERHEAD,
                          f"the modes of step '{name}'")
        with interrupt.critical():
            with self._writing(f"the modes of step '{name}'"):
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
            if len(eigenvalues) == 0 or not self.paraview:
                return None
            path = files.modes_xdmf_path(self.path, name)
            paraview_modes.write_modes(path, self, name, step_type, len(eigenvalues), times=times,
                                 labels=labels)
            if vibration:
                paraview_modes.write_vibration(files.vibration_xdmf_path(self.path, name), self,
                                               name, step_type, len(eigenvalues), labels=labels)
        return path

    def write_linear(self, name: str, data: dict, matrices: dict, attrs: dict,
                     matlab: bool = False, group: str = "linear") -> str | None:
        """``/<group>/<name>/``: arrays ``data``, scipy sparse ``matrices`` as CSR groups.

        With ``matlab``, also ``<out>_<name>.mat`` (``scipy.io.savemat``): the state-space
        ``A``, ``B``, ``C``, ``D`` of ``data``, ``Mass``, ``Damping``, ``Stiffness``, and the
        channel names ``InputName``, ``OutputName`` (cell arrays); its path is returned.
        """
        size = sum(np.asarray(v).nbytes for v in data.values() if np.asarray(v).dtype != object)
        size += sum(m.data.nbytes + m.indices.nbytes + m.indptr.nbytes for m in matrices.values())
        files.ensure_room(self.path, 2 * size + FRAME_OVERHEAD, f"the model of step '{name}'")
        with interrupt.critical():
            with self._writing(f"the model of step '{name}'"):
                g = self.h5.require_group(group).create_group(name)
                for k, v in attrs.items():
                    g.attrs[k] = v
                for k, v in data.items():
                    v = np.asarray(v)
                    g.create_dataset(k, data=v.astype("S") if v.dtype.kind in "OU" else v)
                for k, m in matrices.items():
                    m = m.tocsr()
                    c = g.create_group(k)
                    c.attrs["shape"] = m.shape
                    for part in ("data", "indices", "indptr"):
                        c.create_dataset(part, data=getattr(m, part))
                self.h5.flush()
        if not matlab:
            return None
        path = files.matlab_path(self.path, name)
        if not files.writes():
            return path
        import scipy.io

        names = {"mass": "Mass", "damping": "Damping", "stiffness": "Stiffness"}
        content = {k: data[k] for k in ("A", "B", "C", "D") if k in data}
        content.update({names[k]: m.tocsc() for k, m in matrices.items()})
        for key, cell in (("input_names", "InputName"), ("output_names", "OutputName")):
            if key in data:             # a column cell array of char, as MATLAB's ss takes
                content[cell] = np.array(list(data[key]), dtype=object).reshape(-1, 1)
        content[files.MAT_MARK] = f"fem {fem_version}"      # a later run may replace it
        try:
            scipy.io.savemat(path, content)
        except OSError as err:
            raise OutputError(f"cannot write {path}: {files.reason(err)}") from None
        return path

    def write_superelement(self, path: str, data, source: str = "") -> str:
        """The superelement file ``path`` of a ``cms_reduce`` step's reduced ``data``.

        Written whole or not at all (:func:`fem.io.superelement_file.write`); ``source`` is the
        deck the reduction ran from. Returns ``path``.
        """
        if files.writes():
            superelement_file.write(path, data, source=source)
        return path

    def write_plots(self, step: str, campbell: dict, stability: dict) -> list[str]:
        """A stability sweep's Campbell diagram and stability plot beside the results file.

        ``campbell`` and ``stability`` are the arguments of :func:`fem.io.plots.campbell` and
        :func:`fem.io.plots.stability` but the path, which is the sweep's
        (:func:`fem.io.files.sweep_png_path`); returns the two paths.
        """
        out = []
        for name, draw, args in (("campbell", plots.campbell, campbell),
                                 ("stability", plots.stability, stability)):
            path = files.sweep_png_path(self.path, step, name)
            if files.writes():
                draw(path, **args)
            out.append(path)
        return out

    @contextlib.contextmanager
    def _writing(self, what: str, seal: bool = False):
        """Turn a failed write of ``what`` in the ``with`` body into an :class:`OutputError`.

        ``seal``: seal the file first (:meth:`seal`). Errors that are not I/O errors propagate.
        """
        try:
            yield
        except (OSError, RuntimeError) as err:
            if not files.is_io_error(err):
                raise
            if seal:
                self.seal()
            raise OutputError(f"cannot write {what} to {self.path}: {files.reason(err)}") from None

    def seal(self) -> None:
        """After a failed write, keep the file as it was at the last flush (every frame whole).

        The HDF5 library's state is not to be trusted after a write failed: flushing or closing
        would write half-updated metadata (frames of unequal length, ``NaN``) or crash. So its
        file descriptor is pointed at ``/dev/null`` first: whatever HDF5 writes from now on goes
        nowhere, and the file on disk stays as the last flush left it.
        """
        if self.h5 is None or self.sealed:
            return
        self.sealed = True
        try:
            fd = self.h5.id.get_vfd_handle()
            null = os.open(os.devnull, os.O_RDWR)
            os.dup2(null, fd)
            os.close(null)
        except (OSError, RuntimeError, ValueError) as err:
            log.warning("could not detach %s after a failed write: %s", self.path, err)

    def write_state(self, step: str, state, progress=None) -> None:
        """The state at the end of step ``step``, in ``/steps/<step>/state``.

        Everything an analysis carries from step to step (displacements, rotations, rates,
        internal unknowns, multipliers, the load history, algorithmic variables), so that a run
        can be continued from it. ``progress`` is the step's resumable progress, a dataclass
        (:class:`fem.solvers.controls.StaticProgress`, ...), written to the subgroup
        ``progress``: its scalar fields as attributes (None ones listed in the attribute
        ``none``), its arrays as datasets, its class name in the attribute ``type``.
        """
        what = f"the state after step '{step}'"
        arrays, fields = _state_room(self.path, state, progress, what)
        with interrupt.critical():
            with self._writing(what, seal=True):
                g = self.h5.require_group(f"steps/{step}")
                _write_state(g, "state", state, arrays, fields, progress)
                self.h5.flush()

    def write_checkpoint(self, step: str, frame: int, state, progress=None,
                         complete: bool = False) -> None:
        """``/steps/<step>/checkpoints/<frame>``: ``state`` and ``progress`` after ``frame``.

        ``complete``: ``state`` is the state after the step (a step that runs in one piece);
        else the state written with frame ``frame`` of a step that :mod:`fem.io.restart` can
        resume from there. The caller commits it (with its frame) or flushes it.
        """
        what = f"the checkpoint after frame {frame} of step '{step}'"
        arrays, fields = _state_room(self.path, state, progress, what)
        with interrupt.critical():
            with self._writing(what, seal=True):
                g = self.h5.require_group(f"steps/{step}").require_group("checkpoints")
                name = str(frame)
                if name in g:                   # a step resumed at its last frame
                    del g[name]
                c = _write_state(g, name, state, arrays, fields, progress, sub="state")
                c.attrs["frame"] = frame
                c.attrs["time"] = float(state.t)
                c.attrs["position"] = self.step_position
                c.attrs["complete"] = complete

    def end_checkpoint(self, step: str, state, progress=None) -> None:
        """The checkpoint of a step that ran in one piece: ``state`` after it, flushed."""
        frames = self.h5.get(f"steps/{step}/time")
        self.write_checkpoint(step, -1 if frames is None else len(frames) - 1, state, progress,
                              complete=True)
        with self._writing(f"the checkpoint of step '{step}'", seal=True):
            self.h5.flush()

    def close(self) -> None:
        """Commit the last frames, close the file, release the lock."""
        if self.h5 is None:
            return
        try:
            self.commit(force=True)
        finally:
            try:
                self._petsc_version()
                self.h5.flush()
                self.h5.close()
            except (OSError, RuntimeError) as err:   # e.g. the disk is full: say, don't mask
                log.warning("closing %s: %s", self.path, files.reason(err))
            self.h5 = None
            if self._lock is not None:
                self._lock.release()
                self._lock = None

    def _petsc_version(self) -> None:
        """The PETSc version, once a step has started PETSc (:func:`fem.info.versions`)."""
        attrs = self.h5.attrs
        if _petsc.started() and attrs.get("version_petsc") == _petsc.NOT_STARTED \
                and self.h5.mode != "r":
            attrs["version_petsc"] = ".".join(str(x) for x in _petsc.PETSc().Sys.getVersion())

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


