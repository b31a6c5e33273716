"""Exact modal sensitivities beside a sensitivity study's central differences.

The eigenvalue derivative of Hutton & Smith's eq. (8) (``notes/cms_constraints.md`` A.3; Fox &
Kapoor's formula, which :mod:`fem.cms.modification` applies to component scalings): for a
mass-normalized mode ``phi_i`` of ``K phi = lambda M phi`` (distinct ``lambda_i``),

    d lambda_i / d p = phi_i^T (dK/dp - lambda_i dM/dp) phi_i,

no re-analysis: only the matrices' derivatives. Here ``dK/dp`` and ``dM/dp`` are the central
differences of the assembled free-DOF matrices of the decks at ``p (1 +- h)`` (no eigen-solve):
exact to round-off where the matrices are linear in ``p`` (a modulus, a density: K and M are
proportional to them), O(h^2) where they are not (a thickness: K_bending ~ h^3). The frequency
follows, ``d omega / d p = (d lambda / d p) / (2 omega)``, in Hz divided by 2 pi.

Offered for outputs that read ``modes/<step>/frequencies``, ``hertz`` or ``eigenvalues`` of a
``modal`` step that is the deck's first (the reference configuration, no shift), of a model
without joints or ties (their multipliers are not in K and M), of at most
:data:`DENSE_LIMIT` free DOFs (the nominal modes by dense LAPACK); :func:`exact` says why not
otherwise.
"""

from __future__ import annotations

import numpy as np

from fem.errors import FemError
from fem.io import deck as deck_io
from fem.study.spec import Study

DENSE_LIMIT = 3000
DATASETS = {"eigenvalues": "eigenvalues", "frequencies": "frequencies", "hertz": "hertz"}


def _matrices(study: Study, data: dict, lumped: bool):
    from fem.system import System

    deck = deck_io.from_dict(data, study.base_dir, study.text, study.path)
    sysm = System(deck.model)
    ref = sysm.reference_state()
    K = sysm.assembler.to_scipy(sysm.tangent(ref)).toarray()
    M = sysm.assembler.to_scipy(sysm.mass(ref, lumped=lumped)).toarray()
    return deck, K, M


def exact(study: Study) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """``({output: (P,) exact d out / d p}, {output: why not})`` for a sensitivity study."""
    found, why = {}, {}
    steps = study.base.get("steps") or [{}]
    first = steps[0] if isinstance(steps[0], dict) else {}
    wanted = {}
    for o in study.outputs:
        parts = o.path.split("/")
        if len(parts) != 3 or parts[0] != "modes" or parts[2] not in DATASETS:
            continue                                    # not a modal quantity: no exact one
        if parts[1] != first.get("name") or first.get("type") != "modal":
            why[o.name] = ("exact sensitivities only for a modal step that is the deck's first "
                           "(the reference configuration)")
        elif first.get("shift") not in (None, 0, 0.0):
            why[o.name] = "exact sensitivities only for the lowest modes (no shift)"
        elif len(o.index) != 1 or o.index[0] == ":" or o.index[0] < 0 \
                or o.reduce not in (None, "final"):
            why[o.name] = "exact sensitivities for one mode (index = i >= 0, no reduction)"
        else:
            wanted[o.name] = (parts[2], int(o.index[0]))
    if not wanted:
        return found, why
    lumped = first.get("mass", "lumped") == "lumped"      # the modal step's default mass
    h = study.relative_step
    try:
        deck, K, M = _matrices(study, study.data(0), lumped)
    except FemError as err:
        return found, {**why, **{n: f"the nominal model: {err}" for n in wanted}}
    if deck.model.constraints or K.shape[0] > DENSE_LIMIT:
        reason = ("the model has joints or ties (multipliers not in K, M)" if
                  deck.model.constraints else f"more than {DENSE_LIMIT} free DOFs (dense "
                  "eigen-solve of the nominal model not cheap)")
        return found, {**why, **{n: reason for n in wanted}}
    import scipy.sparse as sparse

    from fem.solvers.eigen import symmetric

    pairs = symmetric(sparse.csr_matrix(K), sparse.csr_matrix(M), K.shape[0], method="dense",
                      what="the nominal model's modes (exact sensitivities)")
    lam, phi = pairs.values, pairs.vectors             # mass-normalized, ascending
    dlam = np.zeros((len(lam), len(study.parameters)))
    for j, p in enumerate(study.parameters):
        p0 = float(study.variants[0][j])
        _, Kp, Mp = _matrices(study, study.data(1 + 2 * j), lumped)
        _, Km, Mm = _matrices(study, study.data(2 + 2 * j), lumped)
        if Kp.shape != K.shape:
            for n in wanted:
                why[n] = f"{p.key} changes the model's DOFs"
            return {}, why
        dK, dM = (Kp - Km) / (2 * h * p0), (Mp - Mm) / (2 * h * p0)
        dlam[:, j] = np.einsum("ki,kl,li->i", phi, dK, phi) - lam * np.einsum(
            "ki,kl,li->i", phi, dM, phi)
    for name, (what, i) in wanted.items():
        if i >= len(lam):
            why[name] = f"mode index {i}: the model has {len(lam)} modes"
            continue
        d = dlam[i]
        if what != "eigenvalues":
            d = d / (2 * np.sqrt(lam[i]))
            if what == "hertz":
                d = d / (2 * np.pi)
        found[name] = d
    return found, why
