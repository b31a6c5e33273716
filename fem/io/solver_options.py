"""Check the deck's ``[solver] petsc_options`` before any step uses them.

A deck is data. Someone else's deck must not be able to run code or write files on the machine
that runs it, and a mistake in it must be reported where it is: PETSc silently ignores option
names it never reads (``ksp_tpye``), and a bad value surfaces later as an internal error or as "the
model is a mechanism". So :func:`check` raises a :class:`~fem.errors.DeckError` (exit code 2) that
names ``solver.petsc_options.<name>`` and its line in the deck, for:

1. **Anything but a solver setting** (:func:`refusal`; pure Python, also run by
   :mod:`fem.io.deck` while the deck is read, before PETSc starts). This is an allowlist: names
   must belong to an option family of the linear solver and its factorization (``ksp_*``,
   ``pc_*``, ``mat_mumps_*``, ``mat_superlu_*``, ... :data:`SOLVER_FAMILIES`) or of SLEPc's
   eigen-solver (``eps_*``, ``st_*``, ``bv_*``, ``ds_*``, ``rg_*``:
   :data:`fem.linalg.EIGEN_FAMILIES`). Within those families, options that print, write or plot
   (viewers, monitors, logs, ``*_reason``, MUMPS's output streams ``mat_mumps_icntl_1`` to ``4``,
   its out-of-core directory, ...) or that load code (``python``, ``shell`` in a name or a value)
   are refused. Values are numbers, booleans or plain words, never a viewer or file specification (a
   colon, a slash or a backslash). The command line stays the user's own and may do all of this
   (``fem run deck.toml -o out.h5 -<step>_ksp_view``).
2. **Names PETSc does not use**, as ``-options_left`` would report them: misspellings, or options
   of another solver (``ksp_rtol`` with the default ``preonly``).
3. **Values PETSc refuses**: an unknown KSP/PC/EPS type or factor package, a word where a number
   is needed, a combination PETSc rejects. The error is attributed to the option that caused it.

Checks 2 and 3 ask PETSc itself, by a dry run (:mod:`fem.io.petsc_dry_run`): the deck's options are
pushed under a throw-away prefix onto a 2x2 AIJ matrix on ``COMM_SELF`` with a KSP made as the
steps make theirs (:func:`fem.linalg.direct_solver`), then ``setUp`` and one ``solve`` (MUMPS and
SuperLU read their options at the factorization); when the deck has eigen-solver options, an EPS is
set up as buckling steps set theirs up, on a matrix just large enough for SLEPc to be used. PETSc
then says which options were read (``PetscOptionsUsed``, called through ctypes since petsc4py 3.18
does not expose it). Options given on the command line for a step (``-<step>_ksp_type gmres``) take
part in the dry run of that step, so a deck option that only that solver reads is not reported.
When an option is not used, a second dry run with ``-help`` lists the names PETSc reads, for the
"did you mean". Everything pushed is removed afterwards and every object destroyed.

How deck options reach the solvers: each step pushes them under its prefix ``<step>_``
(:func:`fem.linalg.push_options`; the command line wins). Linear-solver options keep their names:
``ksp_type`` is ``-<step>_ksp_type``, and they set the step's own solver. SLEPc options are written
with SLEPc's names and reach the eigen-solver of buckling steps, whose prefix is ``<step>_eps_``
(:func:`fem.linalg.petsc_name`): ``eps_tol`` is ``-<step>_eps_eps_tol`` and
``st_pc_factor_mat_solver_type`` is ``-<step>_eps_st_pc_factor_mat_solver_type`` (the eigen-solver's
own linear solver is set by ``st_*`` options only). Buckling steps with at most
``fem.solvers.eigen.DENSE_LIMIT`` unknowns solve with LAPACK and do not read SLEPc options.
"""

from __future__ import annotations

import contextlib
import logging
import re

from fem.errors import DeckError, did_you_mean
from fem.io.petsc_dry_run import deck_spelling, dry_run, is_eigen
from fem.linalg import EIGEN_FAMILIES, petsc_name

log = logging.getLogger(__name__)

SOLVER_FAMILIES = ("ksp_", "pc_", "mat_mumps_", "mat_superlu_", "mat_umfpack_", "mat_klu_",
                   "mat_cholmod_", "mat_pastix_", "mat_strumpack_", "mat_mkl_pardiso_",
                   "mat_mkl_cpardiso_")

# what prints, writes or plots (viewers, monitors, logs, statistics, output streams, file names)
_OUTPUT = re.compile(r"view|monitor|plot|print|verbose|reason|file|tmpdir|converged_rate"
                     r"|final_residual|compute_(eigen|singular)values"
                     r"|error_(absolute|relative|backward)|mat_mumps_icntl_[1-4]$"
                     r"|(^|_)(log|lg|draw|dump|socket|saws|matlab|binary|ascii|hdf5|vtk)(_|$)")
_CODE = re.compile(r"python|shell")
_WORD = re.compile(r"[\w.+-]+(,[\w.+-]+)*")
_SPEC = re.compile(r"[:/\\]")

# names suggested when a name is outside the families (PETSc knows more; these are common)
_COMMON = ("ksp_type", "pc_type", "pc_factor_mat_solver_type", "ksp_rtol", "ksp_atol",
           "ksp_max_it", "ksp_gmres_restart", "ksp_initial_guess_nonzero",
           "ksp_reuse_preconditioner", "mat_mumps_icntl_14", "mat_mumps_icntl_24",
           "eps_type", "eps_tol", "eps_max_it", "eps_ncv", "st_type", "st_ksp_type",
           "st_pc_type", "st_pc_factor_mat_solver_type")


def _as_petsc(value) -> str:
    """A deck value as :func:`fem.linalg.push_options` gives it to PETSc."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def _command_line_hint(key: str, value) -> str:
    shown = "" if value is True else f" {_as_petsc(value)}"
    return (f"; the command line may do it: fem run deck.toml -o out.h5 "
            f"-<step>_{petsc_name(key)}{shown}")


def refusal(key: str, value) -> str | None:
    """Why a deck may not give option ``key = value`` (what was expected and received), or None.

    Needs no PETSc: only names of the solver families pass, and none that prints, writes or
    loads code; values must be numbers, booleans or plain words.

    >>> refusal("ksp_type", "gmres") is None and refusal("mat_mumps_icntl_14", 50) is None
    True
    >>> "may not write files" in refusal("ksp_view", "ascii:victim.txt")
    True
    >>> "may not run code" in refusal("pc_type", "python")
    True
    """
    name = key.lstrip("-").lower()
    if not name.startswith(SOLVER_FAMILIES + EIGEN_FAMILIES):
        families = ", ".join(f"{f}*" for f in SOLVER_FAMILIES[:4] + EIGEN_FAMILIES[:2])
        return (f"expected a linear-solver or eigen-solver option ({families}, ...), got "
                f"'{key}'{did_you_mean(name, _COMMON)}; a deck may set solver options only; "
                f"the command line may give any PETSc option: fem run deck.toml -o out.h5 "
                f"-{key.lstrip('-')}")
    text = _as_petsc(value)
    shown = f"{key} = {text!r}" if isinstance(value, str) else f"{key} = {text}"
    if _CODE.search(name) or (isinstance(value, str) and _CODE.search(text.lower())):
        return (f"a deck may set solver options only, not Python or shell objects (it may not run "
                f"code), got {shown}" + _command_line_hint(key, value))
    if _OUTPUT.search(name):
        return ("a deck may set solver options only, not viewers, monitors or logs (it may not "
                f"write files), got {shown}" + _command_line_hint(key, value))
    if isinstance(value, str) and not _WORD.fullmatch(text):
        if _SPEC.search(text):
            return ("expected a number, true/false or a plain word, got a viewer or file "
                    f"specification {text!r} (a deck may not write files)"
                    + _command_line_hint(key, value))
        return ("expected a number, true/false or a plain word (letters, digits, _ . + -), got "
                f"{text!r}")
    return None


def check_allowed(options: dict | None, deck_text: str = "") -> None:
    """Raise a DeckError for the first option :func:`refusal` refuses, or given twice.

    Parameters
    ----------
    options : the deck's ``[solver] petsc_options`` (names without the step prefix)
    deck_text : the deck's text, to give the line of the option (the error has no line without)
    """
    seen: dict[str, str] = {}
    for key, value in (options or {}).items():
        why = refusal(key, value)
        if why is not None:
            raise _deck_error(key, why, deck_text)
        name = petsc_name(key).lower()
        if name in seen:
            raise _deck_error(key, f"expected each option once, got '{key}' and "
                              f"'{seen[name]}', which PETSc reads as the same option", deck_text)
        seen[name] = key


def check(options: dict | None, deck_text: str = "", step_names=()) -> None:
    """Check the deck's PETSc options: only solver settings, used by PETSc, with valid values.

    See the module docstring. Does nothing (and does not start PETSc) when there are no options.

    Parameters
    ----------
    options : the deck's ``[solver] petsc_options``
    deck_text : the deck's text, for the line of an option in the error
    step_names : names of the deck's steps: command-line options of a step
        (``-<step>_ksp_type gmres``) take part in the dry run of that step

    Raises
    ------
    DeckError
        Key ``solver.petsc_options.<name>``, exit code 2.
    """
    check_allowed(options, deck_text)
    options = dict(options or {})
    if not options:
        return
    eigen = any(is_eigen(k) for k in options)
    runs = []
    for overlay in _configurations(step_names):
        run = dry_run(options, overlay, eigen)
        if run.error is not None:
            found = _attribute(options, overlay, eigen)
            if found is not None:
                key, err, partners, prefix = found
                raise _deck_error(key, _value_message(key, options, err, partners, prefix),
                                  deck_text)
            continue        # the command line's own options fail: the step will say so
        runs.append((run, overlay))
    if not runs:
        return
    if any(run.used is None for run, _ in runs):
        log.warning("cannot ask PETSc which options it used (PetscOptionsUsed not found): deck "
                    "options PETSc does not use are not reported")
        return
    used = set().union(*(run.used for run, _ in runs))
    unused = [k for k in options if k not in used]
    if unused:
        key = unused[0]
        raise _deck_error(key, _unused_message(key, options, runs[0]), deck_text)


# --- the steps' command-line options --------------------------------------------------------

def _configurations(step_names) -> list[dict]:
    """The distinct sets of command-line solver options of the steps (``[{}]`` if none)."""
    from fem import _petsc
    from fem.analysis.base import options_prefix

    if not step_names:
        return [{}]
    everything = _petsc.PETSc().Options().getAll()
    out: list[dict] = []
    for step in step_names:
        prefix = options_prefix(step).lower()
        overlay = {}
        for name, value in everything.items():
            if not name.lower().startswith(prefix):
                continue
            rest = name[len(prefix):]
            key = deck_spelling(rest)
            value = "" if value is None else value
            if petsc_name(key) == rest and refusal(key, value or True) is None:
                overlay[key] = value
        if overlay not in out:
            out.append(overlay)
    return out


# --- messages ---------------------------------------------------------------------------------

def _attribute(options: dict, overlay: dict, eigen: bool):
    """``(key, error, partners, prefix)`` of the deck option a PETSc error comes from, or None.

    Options are added in deck order until the dry run fails; the option added last is the
    culprit if it fails alone, otherwise the one (with the earlier options it needs) whose value
    PETSc's message quotes. None when the error comes without any deck option (command line).
    """
    def attempt(keys):
        return dry_run({k: options[k] for k in keys}, overlay, eigen)

    if attempt([]).error is not None:
        return None
    keys = list(options)
    for j in range(1, len(keys) + 1):
        run = attempt(keys[:j])
        if run.error is not None:
            break
    else:
        return None
    trigger = keys[j - 1]
    alone = attempt([trigger])
    if alone.error is not None:
        return trigger, alone.error, [], alone.prefix
    partners = [k for k in keys[:j - 1]
                if attempt([x for x in keys[:j] if x != k]).error is None]
    message = _petsc_message(run.error, run.prefix)
    quoted = [k for k in [trigger] + partners if _quotes(message, _as_petsc(options[k]))]
    culprit = quoted[0] if len(quoted) == 1 else trigger
    return culprit, run.error, [k for k in [trigger] + partners if k != culprit], run.prefix


def _quotes(message: str, value: str) -> bool:
    return bool(value) and re.search(r"(?<![\w.+-])" + re.escape(value) + r"(?![\w.+-])",
                                     message) is not None


def _petsc_message(err, prefix: str) -> str:
    """PETSc's own message of an error (its last one), on one line, without the dry-run prefix."""
    blocks: list[str] = []
    for line in str(err).splitlines():
        m = re.match(r"\[\d+\]\s?(.*)", line)
        if m:
            if not re.search(r"\(\) at \S+:\d+\s*$", m.group(1)):
                blocks.append(m.group(1))
        elif blocks and line.startswith(" "):
            blocks[-1] += " " + line.strip()
    text = blocks[-1] if blocks else f"PETSc error {getattr(err, 'ierr', '?')}"
    text = text.replace("-" + prefix + "eps_", "-").replace("-" + prefix, "-")
    return " ".join(text.replace(prefix, "").split())


def _type_choices(name: str):
    """``("KSP", names)`` for an option choosing a PETSc/SLEPc type, else ``(None, ())``."""
    from fem import _petsc

    PETSc = _petsc.PETSc()
    kinds = {"ksp_type": ("KSP", PETSc.KSP), "pc_type": ("PC", PETSc.PC)}
    with contextlib.suppress(ImportError):
        SLEPc = _petsc.SLEPc()
        kinds.update({"eps_type": ("EPS", SLEPc.EPS), "st_type": ("ST", SLEPc.ST),
                      "bv_type": ("BV", SLEPc.BV), "ds_type": ("DS", SLEPc.DS),
                      "rg_type": ("RG", SLEPc.RG)})
    for suffix, (kind, cls) in kinds.items():
        if name == suffix or name.endswith("_" + suffix):
            names = [v for k, v in vars(cls.Type).items()
                     if not k.startswith("_") and isinstance(v, str) and not _CODE.search(v)]
            return kind, names
    return None, ()


def _value_message(key: str, options: dict, err, partners: list, prefix: str) -> str:
    """What was expected and received, for a PETSc error caused by ``key``."""
    from fem import linalg

    name = key.lstrip("-").lower()
    value = _as_petsc(options[key])
    text = _petsc_message(err, prefix)
    with_ = ""
    if partners:
        with_ = " (with " + ", ".join(f"{k} = {_as_petsc(options[k])}" for k in partners) + ")"
    kind, choices = _type_choices(name)
    if kind and getattr(err, "ierr", None) == 86:
        return f"PETSc has no {kind} type '{value}'{did_you_mean(value, choices)}{with_}"
    if name.endswith("mat_solver_type"):
        packages = [p for p in linalg.external_packages() if p != "hypre"] + ["petsc"]
        if value not in packages:
            return (f"PETSc has no solver package '{value}'{did_you_mean(value, packages)}; "
                    f"this PETSc has {', '.join(packages)}")
    if "has no integer value" in text:
        return f"expected an integer, got {value}{with_}"
    if "has no numeric value" in text:
        return f"expected a number, got '{value}'{with_}"
    if "Unknown logical value" in text:
        return f"expected true or false, got '{value}'{with_}"
    m = re.search(r"Available options: (.*)", text)
    if m:
        words = m.group(1).split()
        return (f"expected one of {', '.join(words)}, got '{value}'"
                f"{did_you_mean(value, words)}{with_}")
    return f"PETSc refused {key} = {value}{with_}: {text}"


def _unused_message(key: str, options: dict, first) -> str:
    """What was expected and received, for an option PETSc never read."""
    run, overlay = first
    if is_eigen(key) and run.no_slepc:
        return (f"expected an option PETSc uses, got '{key}', an eigen-solver (SLEPc) option, "
                "but slepc4py does not import here")
    names = _vocabulary(options, overlay, any(is_eigen(k) for k in options))
    solver = run.eigen_solver if is_eigen(key) else run.solver
    spelled = key.lstrip("-").lower()
    if names.get(spelled):
        return (f"expected an option of the solver the deck sets up ({solver}), got '{key}', "
                f"which PETSc reads with other settings, e.g. {names[spelled]} (-options_left "
                "would list it unused): set those too, or remove it")
    return (f"expected an option PETSc uses with the solver the deck sets up ({solver}), got "
            f"'{key}', which PETSc never read (-options_left would list it unused)"
            + did_you_mean(spelled, names))


def _vocabulary(options: dict, overlay: dict, eigen: bool) -> dict[str, str]:
    """Option names PETSc reads (deck spelling), each with a setting that makes it read them.

    From ``-help`` of dry runs: the deck's own solver (setting ``""``), a Krylov method, and each
    factorization package this PETSc has.
    """
    from fem import linalg

    others = [{"ksp_type": "gmres"}] + [{"pc_factor_mat_solver_type": p}
                                        for p in linalg.external_packages() if p != "hypre"]
    names: dict[str, str] = {}
    for settings, extra in [(options, overlay)] + [(s, {}) for s in others]:
        with contextlib.suppress(Exception):
            said = "" if settings is options else ", ".join(f"{k} = {v}"
                                                            for k, v in settings.items())
            for n in dry_run(settings, extra, eigen, help_names=True).names:
                if refusal(n, 1) is None:
                    names.setdefault(n.lower(), said)
    return names


def _deck_error(key: str, message: str, deck_text: str) -> DeckError:
    return DeckError(f"solver.petsc_options.{key}", message, _line(deck_text, key))


def _line(deck_text: str, key: str) -> int | None:
    """Line of option ``key`` in the deck (inline table or ``[solver.petsc_options]``)."""
    if not deck_text:
        return None
    from fem.io.deck import locate

    line = locate(deck_text, f"solver.petsc_options.{key}")
    lines = deck_text.splitlines()
    if line is not None and re.match(r"\s*\[\s*solver\s*\.\s*petsc_options\s*\]", lines[line - 1]):
        pattern = re.compile(r"""^\s*(%s|"%s"|'%s')\s*=""" % ((re.escape(key),) * 3))
        for i in range(line, len(lines)):
            if lines[i].lstrip().startswith("["):
                break
            if pattern.match(lines[i]):
                return i + 1
    return line
