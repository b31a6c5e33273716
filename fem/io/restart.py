"""Restart: continue a run from a checkpoint of its results file (``fem run --restart``).

A results file holds checkpoints (``/steps/<s>/checkpoints/<k>``, :mod:`fem.io.hdf5`): the
State and the step's progress after frame ``k`` of a nonlinear static or a dynamic step (every
``[output] checkpoint_interval``-th frame and the last), and the state after a step that runs in
one piece (``complete``). ``fem run deck.toml --restart out.h5[:STEP[:FRAME]]`` continues from the
last one (or the named one) into the same file:

1. :func:`prepare` checks the deck against the file, before anything is written. The model part
   of the deck (every table but ``steps``, ``output`` and ``solver``; and the bytes of the files
   it reads: a mesh, superelements) must be the stored deck's: :func:`model_hash`, stored in the
   root attribute ``model_hash``; a difference is a :class:`~fem.errors.DeckError` naming the
   keys (or files) that changed. The steps before the checkpoint's must be the stored ones
   (name, type, settings), and the checkpoint's step may only extend its end (a dynamic step's
   ``duration``, a static step's ``load_factor``, ``target`` or ``max_steps``); the steps after
   it may change, go or come. A missing or foreign file, a file another program holds open, a
   file without checkpoints, and a STEP or FRAME without one are one-line errors too.
2. :func:`truncate` cuts the file back to the checkpoint: the step's frames after ``k``, its
   later checkpoints and its end state, and every later step (its ``/steps``, ``/modes``,
   ``/linear``, ... groups and ``/xdmf`` views, its mode XDMF files). The cut is made on a copy
   under a temporary name beside the file, moved into place when whole (as a new results file
   is, :func:`fem.io.files.replace`): an interrupted restart leaves the file as it was, with its
   checkpoints, and a restart can be started again.
3. :meth:`fem.io.hdf5.ResultsFile.reopen` continues writing the file (the XDMF series rewritten
   from the frames that stay), and :func:`fem.run.run` resumes the step from the checkpoint's
   state and progress (:class:`fem.analysis.base.Resume`; from the state the step started from,
   its predecessor's end state, it rebuilds what it built at its start), or, for a step that
   does not resume mid-way, runs it again from that start, then runs the steps after it.

A run restarted from any checkpoint writes, with the same thread count, the same bits in every
dataset as the run that was not interrupted (``tests/test_restart.py``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass

import h5py

from fem.errors import DeckError
from fem.io import files
from fem.io.deck_text import parse
from fem.io.files import ResultsFileError
from fem.io.results import progress_from_group, state_from_group
from fem.state import State

#: the deck's tables that are not the model (a restart may change them)
NOT_MODEL = ("steps", "output", "solver")
#: the keys of the checkpoint's step that a restart may raise (its end), by step type
ENDS = {"dynamic": ("duration",), "static": ("load_factor", "target", "max_steps")}


@dataclass
class Target:
    """``out.h5[:STEP[:FRAME]]``: the results file, and optionally a step and a frame."""

    path: str
    step: str | None = None
    frame: int | None = None


@dataclass
class Checkpoint:
    """A checkpoint read from a results file (:func:`prepare`).

    Attributes
    ----------
    step : its step's name
    position : the step's place in the deck
    frame : the frame it follows (-1: a step without frames)
    complete : ``state`` is the state after the step (which is not run again)
    state : the state of the checkpoint
    progress : the step's progress (a dataclass), or None
    start : the state the step started from (its predecessor's end state), None for the first
    steps : the names of the stored deck's steps
    """

    step: str
    position: int
    frame: int
    complete: bool
    state: State
    progress: object
    start: State | None
    steps: list[str]


def parse_target(text: str) -> Target:
    """``out.h5``, ``out.h5:STEP`` or ``out.h5:STEP:FRAME`` (a file name may hold ``:``)."""
    if os.path.exists(text) or ":" not in text:
        return Target(text)
    head, _, last = text.rpartition(":")
    if ":" in head and not os.path.exists(head):
        path, _, step = head.rpartition(":")
        try:
            frame = int(last)
        except ValueError:
            raise ResultsFileError(f"--restart {text}: FRAME must be a frame number, got "
                                   f"{last!r}") from None
        return Target(path, step, frame)
    return Target(head, last)


# --- the model's identity ----------------------------------------------------------------------
def model_tables(data: dict) -> dict:
    """The parsed deck's tables that make the model (all but :data:`NOT_MODEL`)."""
    return {k: v for k, v in data.items() if k not in NOT_MODEL}


def deck_data(deck) -> dict:
    """The parsed tables of ``deck`` (its text; a deck made from a dict: that dict)."""
    return parse(deck.text, deck.path or "<deck>") if deck.text else deck.extra.get("data", {})


def deck_hash(deck) -> str:
    """:func:`model_hash` of ``deck``: what the results file stores (``model_hash``)."""
    return model_hash(deck_data(deck), list(deck.extra.get("inputs", ())))


def model_hash(data: dict, inputs: list[str]) -> str:
    """SHA-256 of the model tables of parsed deck ``data`` and the bytes of its ``inputs``."""
    h = hashlib.sha256(json.dumps(model_tables(data), sort_keys=True, default=str).encode())
    for path in inputs:
        h.update(b"\0")
        try:
            with open(path, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    h.update(block)
        except OSError:
            h.update(b"?")
    return h.hexdigest()


def _differences(a, b, key: str = "") -> list[str]:
    """The dotted deck keys whose values differ between ``a`` and ``b``."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in list(a) + [k for k in b if k not in a]:
            sub = f"{key}.{k}" if key else str(k)
            if k not in a or k not in b:
                out.append(sub)
            else:
                out.extend(_differences(a[k], b[k], sub))
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b) \
            and all(isinstance(x, dict) for x in a + b):
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True))
                for d in _differences(x, y, f"{key}[{i}]")]
    return [] if a == b else [key]


def _changed(keys: list[str]) -> str:
    return ", ".join(keys[:6]) + (f" and {len(keys) - 6} more" if len(keys) > 6 else "")


# --- finding the checkpoint ---------------------------------------------------------------------
def _open(path: str) -> h5py.File:
    """The results file ``path`` for reading; a one-line error when it cannot be one."""
    if not os.path.exists(path):
        raise ResultsFileError(f"--restart: no results file {path}")
    if files.in_use(path):
        raise ResultsFileError(f"--restart: the results file {path} is open in another program "
                               "(ParaView, h5py, or a fem run that is writing it); close it there "
                               "first")
    try:
        h5 = h5py.File(path, "r", locking=False)
    except (OSError, ValueError) as err:
        raise ResultsFileError(f"--restart: {path} is not a results file fem can read "
                               f"({files.reason(err)})") from None
    if "deck" not in h5.attrs or "steps" not in h5:
        h5.close()
        raise ResultsFileError(f"--restart: {path} is not the results file of a fem run (it "
                               "has no deck or no steps)")
    return h5


def _checkpoints(h5) -> list[tuple[int, int, str, h5py.Group]]:
    """Every whole checkpoint of the file: ``(position, frame, step, group)``, in run order."""
    out = []
    for name in list(h5["steps"]):
        try:
            step = h5["steps"][name]
            for key in list(step.get("checkpoints", ())):
                c = step["checkpoints"][key]
                a = c.attrs
                if not {"frame", "position", "complete"} <= set(a) or "state" not in c \
                        or "order" not in c["state"].attrs:
                    continue                    # not written whole
                frame = int(a["frame"])
                if not a["complete"] and len(step.get("time", ())) < frame + 1:
                    continue                    # its frames were not committed
                out.append((int(a["position"]), frame, name, c))
        except (OSError, RuntimeError, KeyError, AttributeError, ValueError):
            continue          # a run killed while it committed: what it left half written
    return sorted(out, key=lambda x: x[:2])


def prepare(path: str, deck, target: Target) -> Checkpoint:
    """Check ``deck`` against the results file ``path`` and read the checkpoint ``target`` names.

    See the module docstring for what is checked; every failure is a one-line
    :class:`~fem.errors.FemError` and nothing is written.
    """
    with _open(path) as h5:
        stored_text = str(h5.attrs["deck"])
        stored = parse(stored_text, path) if stored_text else {}
        given = deck_data(deck)
        # first: a file of a fem without checkpoints has no model_hash either, and would be
        # told that its model changed
        found = _checkpoints(h5)
        if not found:
            raise ResultsFileError(f"--restart: {path} has no checkpoint to continue from (it "
                                   "was written before the first step's first checkpoint, or by "
                                   "a fem without checkpoints): run the deck without --restart")
        _check_model(h5, stored, given, deck, path)
        chosen = _choose(found, target, path)
        position, frame, name, g = chosen
        steps = [s.get("name") for s in stored.get("steps", [])]
        _check_steps(stored.get("steps", []), given.get("steps", []), position,
                     bool(g.attrs["complete"]))
        try:
            start = None
            if position > 0:
                prev = h5.get(f"steps/{steps[position - 1]}/state")
                if prev is None:
                    raise ResultsFileError(f"--restart: {path} lacks the state after step "
                                           f"'{steps[position - 1]}', where step '{name}' "
                                           "started")
                start = state_from_group(prev)
            return Checkpoint(name, position, frame, bool(g.attrs["complete"]),
                              state_from_group(g["state"]),
                              progress_from_group(g.get("progress")), start, steps)
        except (OSError, RuntimeError, KeyError, AttributeError, ValueError) as err:
            raise ResultsFileError(f"--restart: the checkpoint after frame {frame} of step "
                                   f"'{name}' in {path} cannot be read ({err}); name an earlier "
                                   "one (--restart FILE:STEP:FRAME)") from None


def _choose(found, target: Target, path: str):
    """The checkpoint ``target`` names among ``found`` (the last by default)."""
    if target.step is None:
        return found[-1]
    mine = [c for c in found if c[2] == target.step]
    if not mine:
        names = sorted({c[2] for c in found})
        raise ResultsFileError(f"--restart {path}:{target.step}: no checkpoint of a step "
                               f"'{target.step}' in the file; steps with checkpoints: "
                               f"{', '.join(names)}")
    if target.frame is None:
        return mine[-1]
    exact = [c for c in mine if c[1] == target.frame]
    if not exact:
        frames = ", ".join(str(c[1]) for c in mine)
        raise ResultsFileError(f"--restart {path}:{target.step}:{target.frame}: step "
                               f"'{target.step}' has no checkpoint after frame {target.frame}; "
                               f"it has checkpoints after frames {frames}")
    return exact[0]


def _check_model(h5, stored: dict, given: dict, deck, path: str) -> None:
    """The model of ``deck`` must be the one the file was written from (its hash)."""
    want = str(h5.attrs.get("model_hash", ""))
    have = deck_hash(deck)
    if want == have:
        return
    keys = _differences(model_tables(stored), model_tables(given))
    if keys:
        raise DeckError(keys[0], f"the model differs from the one {path} was computed with "
                        f"(changed: {_changed(keys)}); a restart continues the same model: "
                        "change only the steps, or run the deck without --restart")
    read = [os.path.basename(p) for p in deck.extra.get("inputs", ())
            if not p.endswith(".toml")]
    raise DeckError("nodes.mesh" if read else "model", "the model differs from the one "
                    f"{path} was computed with: the files it reads ({', '.join(read) or 'none'}) "
                    "changed; a restart continues the same model")


def _check_steps(stored: list, given: list, position: int, complete: bool) -> None:
    """Steps before ``position`` unchanged; the one at it may extend its end (see module doc)."""
    for i in range(min(position + 1, len(stored))):
        if i >= len(given):
            raise DeckError("steps", f"the deck has {len(given)} steps; the checkpoint is in "
                            f"step {i + 1} ('{stored[i].get('name')}') of the results file: keep "
                            "the steps it ran")
        old, new = stored[i], given[i]
        keys = _differences(old, new)
        if i == position and not complete and new.get("type") == old.get("type"):
            keys = [k for k in keys if k not in ENDS.get(old.get("type"), ())
                    or not _extends(k, old.get(k), new.get(k))]
        if keys:
            what = ("the checkpoint's step may only extend its end (" + ", ".join(
                ENDS.get(old.get("type"), ())) + ")") if i == position and not complete \
                else "the steps up to the checkpoint's must stay as they ran"
            raise DeckError(f"steps[{i}].{keys[0]}" if keys[0] else f"steps[{i}]",
                            f"step '{old.get('name')}' differs from the one in the results "
                            f"file (changed: {_changed(keys)}); {what}")


def _extends(key: str, old, new) -> bool:
    """Whether ``new`` moves a step's end ``key`` beyond ``old`` (same sign)."""
    if old is None or new is None or isinstance(old, bool) or isinstance(new, bool):
        return False
    try:
        return float(new) * float(old) > 0 and abs(float(new)) >= abs(float(old))
    except (TypeError, ValueError):
        return False


# --- cutting the file back ---------------------------------------------------------------------
def truncate(path: str, ck: Checkpoint, beside=()) -> None:
    """Cut the results file ``path`` back to checkpoint ``ck`` (see the module docstring).

    ``beside``: files written beside the results for the steps that are cut (their mode XDMF
    files), removed when they name data of ``path``.
    """
    keep = ck.steps[:ck.position + 1]
    tmp = files.temporary_beside(path, ".h5")
    repaired = None
    try:
        try:
            _rebuild(path, tmp, ck, keep)
        except (OSError, RuntimeError, KeyError, ValueError):
            # killed inside a commit: metadata written past the end the superblock records
            repaired = files.temporary_beside(path, ".h5")
            shutil.copyfile(path, repaired)
            if not _extend_to_eof(repaired):
                raise
            _rebuild(repaired, tmp, ck, keep)
        files.replace(tmp, path)
        tmp = None
    except (OSError, RuntimeError, KeyError, ValueError) as err:
        raise ResultsFileError(f"--restart: cannot cut {path} back to its checkpoint: "
                               f"{files.reason(err)}; the file is as it was") from None
    finally:
        for t in (tmp, repaired):
            if t is not None:
                try:
                    os.unlink(t)
                except OSError:
                    pass
    for p in beside:
        _remove_xdmf(p, path)


def _rebuild(source: str, target: str, ck: Checkpoint, keep: list[str]) -> None:
    """Write ``target`` afresh: ``source``'s objects copied, then cut back to ``ck``.

    A fresh file, not a byte copy cut in place: a run killed between commits leaves HDF5's
    free-space records behind its data (space allocated past the recorded end), and deleting
    objects in such a file fails ("len not positive after adjustment for EOA"); reading them,
    and editing a sound copy, does not.
    """
    with h5py.File(source, "r", locking=False) as src, \
            h5py.File(target, "w", locking=False) as h5:
        for key, value in src.attrs.items():
            h5.attrs[key] = value
        for name in src:
            src.copy(src[name], h5, name=name)
        _cut(h5, ck, keep)


#: where a version-0 superblock keeps the end-of-allocation address (HDF5 file format
#: specification, "Version 0 superblock": after the signature, eight version and size bytes,
#: the group K values, the consistency flags, the base and free-space addresses)
EOA_V0 = 40


def _extend_to_eof(path: str) -> bool:
    """Set the end of allocation of the file ``path`` to its size, as ``h5clear -i`` does.

    A run killed inside a commit leaves objects the flush wrote past the end of allocation its
    superblock still records (the superblock is written last): HDF5 then refuses to read them
    ("addr overflow"). Their bytes are in the file; recording its size as the end makes them
    readable. Only for a version-0 superblock (no checksum; what fem writes); False otherwise.
    """
    with open(path, "r+b") as fh:
        head = fh.read(EOA_V0 + 8)
        if len(head) < EOA_V0 + 8 or head[8] != 0 or head[13] != 8:
            return False                # another superblock version, or 4-byte addresses
        size = os.fstat(fh.fileno()).st_size
        if int.from_bytes(head[EOA_V0:EOA_V0 + 8], "little") >= size:
            return False                # nothing past the recorded end: another damage
        fh.seek(EOA_V0)
        fh.write(size.to_bytes(8, "little"))
    return True


def _cut(h5: h5py.File, ck: Checkpoint, keep: list[str]) -> None:
    """Delete what follows checkpoint ``ck`` in the open copy ``h5``."""
    for top in list(h5):
        if top in ("model", "xdmf") or not isinstance(h5[top], h5py.Group):
            continue
        for name in list(h5[top]):
            if name not in keep:
                del h5[top][name]
    for part in ("steps", "modes"):
        g = h5.get(f"xdmf/{part}")
        for name in list(g or ()):
            if name not in keep:
                del g[name]
    if ck.complete:
        return
    step, k = h5[f"steps/{ck.step}"], ck.frame
    if "state" in step:
        del step["state"]
    for key in list(step["checkpoints"]):
        if int(key) > k:
            del step["checkpoints"][key]

    def shorten(name, obj):
        if isinstance(obj, h5py.Dataset) and obj.maxshape and obj.maxshape[0] is None \
                and obj.shape[0] > k + 1:
            obj.resize(k + 1, axis=0)
    for name in list(step):
        if name not in ("state", "checkpoints"):
            obj = step[name]
            shorten(name, obj) if isinstance(obj, h5py.Dataset) else obj.visititems(shorten)
    views = h5.get(f"xdmf/steps/{ck.step}")
    if views is None:
        return

    def cut_views(g):
        for name in list(g):
            obj = g[name]
            if isinstance(obj, h5py.Group):
                if len(obj) and all(n.isdigit() for n in obj):      # a view per frame
                    for j in list(obj):
                        if int(j) > k:
                            del obj[j]
                else:
                    cut_views(obj)
            else:
                shorten(name, obj)
    cut_views(views)


def _remove_xdmf(path: str, h5: str) -> None:
    """Remove the XDMF file ``path`` if it names data of results file ``h5``."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read(65536)
    except OSError:
        return
    if "<Xdmf" in text and f">{os.path.basename(h5)}:/" in text:
        try:
            os.unlink(path)
        except OSError:
            pass
