"""Output files that never lose or corrupt a result, and never touch a file they must not.

* :func:`results_path` checks ``-o``: a results file ends in ``.h5`` (added when there is no
  suffix), and neither it nor the XDMF files written beside it may be an input of the run.
* :func:`create_replacing` makes a new file under a temporary name beside the target, refuses
  the target while another program has it open (ParaView, h5py, another fem run), and only then
  moves the new file into place. A refused run leaves the existing file exactly as it was; a
  reader that had the old file open keeps reading the old data.
* :class:`SharedLock` is how a running fem says "in use": it holds a shared ``flock`` on its
  results file. HDF5 readers (h5py, h5dump, ParaView) take shared locks too, so they can open the
  file while it is written, but a second writer, which needs an exclusive lock, is refused.
* :func:`write_text` writes a text file (the XDMF) under a temporary name and renames it, so the
  file on disk is always a complete document.
* :func:`ensure_room` is checked before every frame: a full disk (or a file-size limit) stops
  the run cleanly *before* a write fails, because the HDF5 library cannot be trusted after a
  failed write (its metadata cache is left half-flushed, and it may even crash at exit).
* :func:`writes` says whether this process writes files at all: under ``mpiexec`` every rank
  runs the deck (:mod:`fem.mpi`) but only rank 0 writes; the others keep their results file in
  memory and write no XDMF, MATLAB, PNG or superelement file. Every writer asks it, nothing else
  decides. :func:`scratch` lets a process write files of its own (``fem validate``'s).
* :func:`reason` turns an ``OSError`` (also the ``OSError``/``RuntimeError`` that h5py raises
  for HDF5) into plain words, and says "the disk is full" for the errors that mean it.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import resource
import tempfile

from fem import mpi
from fem.errors import FemError, OutputError

SUFFIX = ".h5"
FULL = {errno.ENOSPC, errno.EFBIG, errno.EDQUOT}


class ResultsFileError(FemError):
    """The results file cannot be created where asked (exit code 2, like any bad input)."""

    exit_code = 2


_scratch = [False]          # scratch() in effect: this process writes files of its own


def writes() -> bool:
    """Whether this process writes the run's files (module docstring).

    Rank 0 of a replicated run (every process without a launcher), or any process writing
    files of its own (:func:`scratch`).
    """
    return _scratch[0] or mpi.rank() == 0


@contextlib.contextmanager
def scratch():
    """Let this process write (inside the ``with``) files that are its own, not the run's."""
    was, _scratch[0] = _scratch[0], True
    try:
        yield
    finally:
        _scratch[0] = was


def reason(err: BaseException) -> str:
    """Plain words for an I/O error, e.g. ``"the disk is full (No space left on device)"``."""
    text = str(err)
    code = getattr(err, "errno", None)
    if code is None:                      # h5py: "... errno = 28, error message = '...' ..."
        m = re.search(r"errno = (\d+)", text)
        code = int(m.group(1)) if m else None
    m = re.search(r"error message = '([^']*)'", text)
    detail = m.group(1) if m else (getattr(err, "strerror", None) or text)
    if code in FULL:
        return f"the disk is full or a file-size limit is reached ({detail})"
    return detail


def is_io_error(err: BaseException) -> bool:
    """Whether ``err`` is a failed read or write (h5py raises RuntimeError for some)."""
    return isinstance(err, OSError) or (isinstance(err, RuntimeError) and "errno" in str(err))


def room(path: str) -> float:
    """Bytes the file ``path`` may still grow by: free disk space and the file-size limit."""
    try:
        st = os.statvfs(os.path.dirname(path) or ".")
        free = float(st.f_bavail) * st.f_frsize
    except OSError:
        free = float("inf")
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    if limit != resource.RLIM_INFINITY:
        try:
            free = min(free, limit - os.path.getsize(path))
        except OSError:
            pass
    return free


def ensure_room(path: str, need: float, what: str) -> None:
    """Raise :class:`~fem.errors.OutputError` unless ``need`` bytes can still be written."""
    left = room(path)
    if left < need:
        raise OutputError(f"cannot write {what} to {path}: the disk is full or a file-size "
                          f"limit is reached ({max(left, 0) / 1e6:.2f} MB left, about "
                          f"{need / 1e6:.2f} MB needed); the frames before it are in the file")


def xdmf_path(h5: str) -> str:
    """The time-series XDMF file beside results file ``h5``."""
    return os.path.splitext(h5)[0] + ".xdmf"


def _beside(h5: str, step: str, what: str, ext: str) -> str:
    """``<h5 stem>_<step>_<what><ext>``, with ``what`` said once.

    A step named ``modes`` (or ``first_modes``) gives ``out_modes.xdmf``, never
    ``out_modes_modes.xdmf``.

    >>> _beside("out.h5", "modes", "modes", ".xdmf"), _beside("out.h5", "m", "modes", ".xdmf")
    ('out_modes.xdmf', 'out_m_modes.xdmf')
    >>> _beside("out.h5", "rotor campbell", "campbell", ".png")
    'out_rotor campbell.png'
    """
    base = os.path.splitext(h5)[0]
    if step == what or any(step.endswith(sep + what) for sep in "_- "):
        return f"{base}_{step}{ext}"
    return f"{base}_{step}_{what}{ext}"


def modes_xdmf_path(h5: str, step: str) -> str:
    """The mode-shape XDMF file of step ``step`` beside results file ``h5``."""
    return _beside(h5, step, "modes", ".xdmf")


def vibration_xdmf_path(h5: str, step: str) -> str:
    """The XDMF file of the modes of modal step ``step`` vibrating, beside results file ``h5``."""
    return _beside(h5, step, "vibration", ".xdmf")


def matlab_path(h5: str, step: str) -> str:
    """The MATLAB file of the state-space model of linearize step ``step`` beside ``h5``."""
    return os.path.splitext(h5)[0] + f"_{step}.mat"


def sweep_png_path(h5: str, step: str, plot: str) -> str:
    """The PNG ``plot`` (``campbell``, ``stability``) of sweep step ``step`` beside ``h5``."""
    return _beside(h5, step, plot, ".png")


def _same(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def results_path(output: str, inputs: list[str] = (), steps: list[str] = (),
                 restart: bool = False) -> str:
    """The absolute results path for ``-o output``; refuses a clash with an input of the run.

    ``inputs`` are the files the run reads (the deck, its mesh); ``steps`` the names of the steps
    that write mode-shape XDMF files. ``restart``: the results file is the one a restart
    continues (:mod:`fem.io.restart` checks it), not one to replace.
    """
    base, ext = os.path.splitext(output)
    if ext == "":
        output = output + SUFFIX
    elif ext.lower() not in (".h5", ".hdf5"):
        raise ResultsFileError(
            f"-o {output}: expected a results file ending in .h5 (the ParaView file "
            f"{os.path.basename(base)}.xdmf is written beside it), got a '{ext}' file")
    path = os.path.abspath(output)
    if os.path.isdir(path):
        raise ResultsFileError(f"-o {output}: {path} is a folder; give a file name ending "
                               "in .h5")
    written = [path, xdmf_path(path)] + [modes_xdmf_path(path, s) for s in steps] \
        + [vibration_xdmf_path(path, s) for s in steps] + [matlab_path(path, s) for s in steps] \
        + [sweep_png_path(path, s, p) for s in steps for p in ("campbell", "stability")]
    for out in written:
        for src in inputs:
            if src and os.path.exists(out) and _same(out, src):
                raise ResultsFileError(
                    f"-o {output}: the run would overwrite its own input {src}; choose "
                    "another results file")
    for out in written[1:]:
        if os.path.lexists(out) and not os.path.isfile(out):
            raise ResultsFileError(f"-o {output}: cannot write {out}: it exists and is not a "
                                   "regular file")
    for out in written[1:] if restart else written:
        # a file another program holds open is refused where it would be replaced (replace)
        if os.path.isfile(out) and not in_use(out) \
                and not written_by_fem(out, os.path.basename(path)):
            why = ("is not an HDF5 file fem can read (a run killed while writing it leaves "
                   "one; fem run --restart may continue it)"
                   if out == path and not _hdf5_readable(out) else "was not written by fem")
            raise ResultsFileError(f"-o {output}: {out} exists and {why}; a run never replaces "
                                   "a file it did not write: remove it or choose another "
                                   "results file")
    return path


#: the ``Software`` text of the PNG plots fem writes (:mod:`fem.io.plots`)
PNG_SOFTWARE = "fem"
#: the variable that marks a MATLAB file fem wrote (:meth:`fem.io.hdf5.ResultsFile.write_linear`)
MAT_MARK = "written_by"
_MAT_LEGACY = {"A", "B", "C", "D", "Mass", "Damping", "Stiffness"}


def written_by_fem(path: str, h5_name: str) -> bool:
    """Whether the existing file ``path`` is one a fem run writes (and may replace).

    By its kind: an HDF5 file with the root attribute ``fem_version`` (a results or superelement
    file); an XDMF document that reads from ``h5_name`` (the results file it is written beside);
    a MATLAB file with the variable :data:`MAT_MARK` (or, from earlier versions, only the
    state-space and matrix variables fem writes); a PNG whose ``Software`` text starts with
    :data:`PNG_SOFTWARE`. Anything else, or a file that cannot be read, is the user's.
    """
    ext = os.path.splitext(path)[1].lower()
    try:
        if ext in (".h5", ".hdf5"):
            import h5py

            with h5py.File(path, "r", locking=False) as h5:
                return "fem_version" in h5.attrs
        if ext == ".xdmf":
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read(1 << 16)
            return "<Xdmf" in text and f"{h5_name}:/" in text
        if ext == ".mat":
            import scipy.io

            names = {name for name, _, _ in scipy.io.whosmat(path)}
            return MAT_MARK in names or (bool(names) and names <= _MAT_LEGACY)
        if ext == ".png":
            return png_text(path).get("Software", "").startswith(PNG_SOFTWARE)
    except (OSError, ValueError, TypeError, KeyError, RuntimeError):
        return False
    return False


def _hdf5_readable(path: str) -> bool:
    """Whether h5py opens ``path`` (a torn file, or another kind of file, it does not)."""
    import h5py

    try:
        with h5py.File(path, "r", locking=False):
            return True
    except (OSError, ValueError, RuntimeError):
        return False


def png_text(path: str) -> dict[str, str]:
    """The ``tEXt`` chunks of a PNG file (keyword -> text); ValueError if not a PNG."""
    out = {}
    with open(path, "rb") as f:
        if f.read(8) != b"\x89PNG\r\n\x1a\n":
            raise ValueError("not a PNG file")
        while True:
            head = f.read(8)
            if len(head) < 8:
                return out
            size, kind = int.from_bytes(head[:4], "big"), head[4:]
            if kind == b"IDAT" or kind == b"IEND":      # text comes before the image data here
                return out
            data = f.read(size)
            f.seek(4, os.SEEK_CUR)                      # the CRC
            if kind == b"tEXt" and b"\0" in data:
                key, _, text = data.partition(b"\0")
                out[key.decode("latin-1")] = text.decode("latin-1")


def in_use(path: str) -> bool:
    """Whether another program holds ``path`` open with a lock (an HDF5 reader or writer)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)              # closing the descriptor drops the test lock
    return False


class SharedLock:
    """A shared ``flock`` on a file, held until :meth:`release` (see the module docstring)."""

    def __init__(self, path: str):
        self.fd = os.open(path, os.O_RDONLY)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            os.close(self.fd)
            self.fd = None
            raise

    def release(self) -> None:
        """Drop the lock."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _umask_mode() -> int:
    """``0o666`` less the process's umask: the mode ``open()`` would give a new file."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def temporary_beside(path: str, suffix: str) -> str:
    """A new, empty file in the folder of ``path`` (created, so no other run can take it)."""
    folder = os.path.dirname(path)
    try:
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=suffix,
                                   dir=folder)
    except OSError as err:
        raise ResultsFileError(f"cannot create the results file {path}: {reason(err)}") from None
    os.fchmod(fd, _umask_mode())          # mkstemp makes 0600; results are ordinary files
    os.close(fd)
    return tmp


def replace(tmp: str, path: str) -> None:
    """Move ``tmp`` over ``path``, unless another program has ``path`` open (then refuse)."""
    if os.path.lexists(path) and not os.path.isfile(path):
        raise ResultsFileError(f"cannot write the results file {path}: it exists and is not a "
                               "regular file")
    if in_use(path):
        raise ResultsFileError(
            f"the results file {path} is open in another program (ParaView, h5py, or another "
            "fem run that is writing it); it was not touched. Close it there, or write to "
            "another file with -o")
    try:
        os.replace(tmp, path)
    except OSError as err:
        raise ResultsFileError(f"cannot write the results file {path}: {reason(err)}") from None


@contextlib.contextmanager
def moved_into_place(tmp: str, path: str):
    """Move the temporary file ``tmp`` over ``path`` when the block succeeds.

    When it fails ``tmp`` is removed: ``path`` is written whole or not at all.
    """
    try:
        yield tmp
        os.replace(tmp, path)
        tmp = None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def write_text(path: str, text: str) -> None:
    """Write ``path`` whole or not at all (temporary file, then rename); only if :func:`writes`."""
    if not writes():
        return
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp",
                                   dir=os.path.dirname(path))
        os.fchmod(fd, _umask_mode())
        with moved_into_place(tmp, path), os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as err:
        raise OutputError(f"cannot write the ParaView file {path}: {reason(err)}") from None


def remove_stale_xdmf(h5: str) -> None:
    """Remove XDMF files beside ``h5`` that describe the results file it replaces."""
    folder, name = os.path.split(h5)
    stem = os.path.splitext(name)[0]
    candidates = [xdmf_path(h5)]
    try:
        candidates += [os.path.join(folder, f) for f in os.listdir(folder)
                       if f.startswith(stem + "_") and f.endswith("_modes.xdmf")]
    except OSError:
        return
    for path in candidates:
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read(65536)
        except OSError:
            continue
        if "<Xdmf" in text and f">{name}:/" in text:       # it names data inside ``h5``
            try:
                os.unlink(path)
            except OSError:
                pass
