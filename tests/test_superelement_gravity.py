"""Gravity on superelements and their rigid-body properties (issue 33, item 3 and its plate point).

A ``cms_reduce`` step stores ``T^T M e_k`` (the reduced loads of unit accelerations) in the
superelement file; ``[gravity]`` loads a linear superelement with ``T^T M a``. References:

* a cantilever of 3D beams (L = 2, EI = 80, rho A = 1, consistent mass: ``M`` times a rigid
  translation is the consistent load of the uniform weight, whose nodal deflections the Hermite
  beam gets exactly) as one Craig-Bampton superelement, interface its root and tip, against
  ``w(x) = q x^2 (6 L^2 - 4 L x + x^2) / (24 EI)``. At the tip (a boundary node) exactly, for
  any number of modes: the constraint modes are the static responses to interface forces, so
  by reciprocity the Ritz solution's boundary displacements are exact under any load the
  reduced load vector represents (Craig & Kurdila 2006, section 19.3); this checks the
  boundary part of ``T^T M a``. At mid-span (recovered, ``T q``) within the truncation error:
  the interior's static response to its weight is the sum over the fixed-interface modes of
  ``phi phi^T f / omega^2``, whose terms fall as ``k^-5`` on a beam (``omega_k^2 ~ k^4``,
  ``phi_k^T f ~ 1/k``); measured 2.3e-2 with 2 modes (the first clamped-clamped bending mode
  in each plane: y and z bend alike) and 7.7e-4 with 6, held to twice that; this checks the
  modal part;
* a cantilever plate of linear flat shells (1 x 0.5, clamped at x = 0, E = 1e4, nu = 0.3,
  rho = 1, h = 0.02, lumped mass) as one Craig-Bampton superelement, interface its clamped edge
  and the mid node of its free edge: the static deflection under gravity and the first six
  frequencies against the full shell model (dense references) within the reduction's error,
  smaller with more modes. The mid node of the free edge (interface) sags exactly, by the
  reciprocity above; the free corner (recovered) is off by 1.4e-3 with 4 fixed-interface modes
  and 3.4e-5 with 12, the worst of the six frequencies by 9.0 % and 2.4 % (its fifth and sixth
  modes lean on the tip's constraint modes until more fixed-interface modes are kept), the
  first by 8.9e-5 and 3.7e-6, all held to twice the measured; frequencies never below the full
  model's (a Rayleigh-Ritz model);
* rigid-body properties (mass, centre of mass, inertia about it) from the reduced mass and
  the rigid motions in the reduced basis, against the full component's ``R^T M R``: equal to
  round-off (1e-10) for Craig-Bampton and the free interface of an unsupported component,
  whose bases hold the rigid motions; against ``rho A L`` and the beam's centre too.
"""

import copy

import h5py
import numpy as np
import pytest
import scipy.linalg as sla
from helpers import solve, square_plate_mesh

from fem.analysis.cms import rigid_motions
from fem.errors import DeckError
from fem.io.deck import from_dict
from fem.system import System

E_B, I_B, L_B, N_B = 1000.0, 0.08, 2.0, 12        # beam: E, Iy = Iz, length, elements
G_Z = np.array([0.0, 0.0, -9.81])
DROP_ERROR = 5.5e-3         # of the amplitude: twice the measured 2.7e-3
BEAM_TRUNCATION = {2: 4.5e-2, 6: 1.6e-3}  # modes -> bound on mid-span's relative error


def beam_deck(ids, **tables):
    """3D beams from node 1 (x = 0) to node 2 (x = L) in N_B divisions."""
    return {"model": {"dim": 3},
            "materials": [{"name": "m", "E": E_B, "G": 400.0}],
            "sections": [{"name": "s", "A": 1.0, "Iy": I_B, "Iz": I_B, "J": 0.1,
                          "mass_per_length": 1.0,
                          "rotary_inertia_per_length": [0.08, 0.08, 0.16]}],
            "nodes": {"ids": list(ids), "coordinates": [[L_B * (i - 1), 0.0, 0.0] for i in ids]},
            **tables}


BEAM = {"name": "b", "type": "beam", "material": "m", "section": "s",
        "connectivity": [[1, 2]], "divisions": N_B, "orientation": [0.0, 1.0, 0.0]}


def reduce(base, name, d, **step):
    d = copy.deepcopy(d)
    d["steps"] = [{"name": "reduce", "type": "cms_reduce", "file": f"{name}.h5", **step}]
    return solve(d, base / f"{name}_reduce.h5", base_dir=str(base))[3][0]


def superelement_deck(base, name, d, steps, **tables):
    """``d``'s nodes and tables with the superelement of ``name.h5`` as its only element."""
    d = copy.deepcopy(d)
    d["elements"] = [{"name": "se", "type": "superelement", "file": f"{name}.h5"}]
    d.update(tables, steps=steps)
    return d


@pytest.fixture(scope="module")
def beams(tmp_path_factory):
    """The beam component reduced with 2 and 6 fixed-interface modes and by the free interface
    (consistent mass)."""
    base = tmp_path_factory.mktemp("gravity_beams")
    d = beam_deck([1, 2], elements=[BEAM])
    for m in BEAM_TRUNCATION:
        reduce(base, f"cb{m}", d, interface=[1, 2], modes=m, mass="consistent")
    reduce(base, "fi", d, interface=[1, 2], modes=12, method="free_interface",
           mass="consistent")
    reduce(base, "cb6_lumped", d, interface=[1, 2], modes=6)
    return base, d


def beam_sag(base, d, name):
    """Tip and mid-span displacements of the superelement cantilever under gravity."""
    sd = superelement_deck(base, name, d, [{"name": "sag", "type": "static"}],
                           supports=[{"nodes": [1], "fixed": ["all"]}],
                           gravity={"acceleration": G_Z.tolist()})
    dk, sysm, state, _ = solve(sd, base_dir=str(base))
    g = dk.model.groups[0]
    ids, u = g.recover(state)
    X = g.data.component_coordinates
    mid = int(np.flatnonzero(np.isclose(X[:, 0], L_B / 2))[0])
    return state.dof_values()[1].copy(), u[mid]


def deflection(x):
    """The cantilever's deflection under its weight (Euler-Bernoulli)."""
    q = 1.0 * 9.81
    return q * x**2 * (6 * L_B**2 - 4 * L_B * x + x**2) / (24 * E_B * I_B)


def test_beam_superelement_sags_as_q_l4_over_8_ei(beams):
    """The tip at ``q L^4 / (8 EI)`` to round-off for any number of modes, mid-span within the
    truncation error, smaller with more modes (module docstring); no other deflection."""
    base, d = beams
    w, w_mid = deflection(L_B), deflection(L_B / 2)
    assert w == pytest.approx(9.81 * L_B**4 / (8 * E_B * I_B), rel=1e-14)
    errors = {}
    for m, bound in BEAM_TRUNCATION.items():
        tip, mid = beam_sag(base, d, f"cb{m}")
        assert tip[2] == pytest.approx(-w, rel=1e-10)
        assert np.abs(tip[[0, 1, 3, 5]]).max() < 1e-10 * w
        errors[m] = abs(mid[2] + w_mid) / w_mid
        assert errors[m] < bound
    assert errors[6] < 0.05 * errors[2]


def full_rigid(system, M):
    """The full component's rigid-body mass matrix ``R^T M R`` (6 x 6)."""
    R = rigid_motions(system)
    return R.T @ (M @ R)


def rigid_of(props):
    """``R^T M R`` rebuilt from mass, centre and inertia about the centre."""
    m, c, J = float(props["mass"]), props["center_of_mass"], props["inertia"]
    H = np.array([[0.0, -c[2], c[1]], [c[2], 0.0, -c[0]], [-c[1], c[0], 0.0]])
    return np.block([[m * np.eye(3), m * H.T], [m * H, J + m * H.T @ H]])


@pytest.mark.parametrize("name", ["cb2", "fi"])
def test_beam_rigid_properties_from_the_reduced_model(beams, name, tmp_path):
    """Mass, centre and inertia of the superelement equal the full beam's ``R^T M R`` to 1e-10
    (both bases hold the rigid motions), and rho A L at L / 2; written to the results."""
    base, d = beams
    comp = System(from_dict(copy.deepcopy({**d, "steps": [{"name": "m", "type": "modal"}]}
                                          )).model)
    ref = comp.reference_state()
    M = comp.assembler.to_scipy(comp.mass(ref, lumped=False))
    A = full_rigid(comp, M)
    sd = superelement_deck(base, name, d, [{"name": "s", "type": "static"}],
                           supports=[{"nodes": [1], "fixed": ["all"]}],
                           loads=[{"name": "P", "nodes": [2], "force": [0.0, 0.0, -1.0]}])
    h5 = tmp_path / "out.h5"
    dk = solve(sd, h5, base_dir=str(base))[0]
    props = dk.model.groups[0].rigid_properties()
    assert float(props["mass"]) == pytest.approx(L_B * 1.0, rel=1e-12)
    assert np.allclose(props["center_of_mass"], [L_B / 2, 0, 0], rtol=0, atol=1e-12 * L_B)
    assert np.abs(rigid_of(props) - A).max() < 1e-10 * np.abs(A).max()
    # the beam's own inertia about its centre: rho A L^3 / 12 about y and z (+ rotary)
    assert props["inertia"][1, 1] == pytest.approx(L_B**3 / 12 + 0.08 * L_B, rel=1e-10)
    with h5py.File(h5, "r") as f:
        g = f["model/groups/se"]
        assert np.allclose(g["mass"][()], [props["mass"]], rtol=1e-14)
        assert np.allclose(g["inertia"][0], props["inertia"], rtol=1e-14)


def test_a_supported_component_has_no_rigid_properties(tmp_path):
    """A component clamped inside: its basis cannot move rigidly, so no properties are made up."""
    d = beam_deck([1, 2], elements=[BEAM], supports=[{"nodes": [1], "fixed": ["all"]}])
    reduce(tmp_path, "clamped", d, interface=[2], modes=4)
    sd = superelement_deck(tmp_path, "clamped", d, [{"name": "s", "type": "static"}],
                           loads=[{"name": "P", "nodes": [2], "force": [0.0, 0.0, -1.0]}])
    del sd["supports"]
    dk = from_dict(sd, base_dir=str(tmp_path))
    assert dk.model.groups[0].rigid_properties() is None
    assert "mass" not in dk.model.groups[0].properties()


# --- the plate ----------------------------------------------------------------------------------
PLATE_E, PLATE_NU, PLATE_RHO, PLATE_H = 1.0e4, 0.3, 1.0, 0.02
G_PLATE = np.array([0.0, 0.0, -9.81e-3])        # small: the linear plate's sag stays small
#: fixed-interface modes -> bounds on the corner's sag, the worst and the first frequency
PLATE_ERRORS = {4: (2.9e-3, 0.18, 1.8e-4), 12: (6.8e-5, 0.048, 7.4e-6)}
NX = 8                          # 0.125 x 0.125 squares (of two triangles): a 1 x 0.5 plate


def plate_deck():
    c, tri, _ = square_plate_mesh(NX, 1.0)
    keep_nodes = c[:, 1] <= 0.5 + 1e-9
    keep = np.all(keep_nodes[tri - 1], axis=1)
    tri = tri[keep]
    used = np.unique(tri)
    return {"model": {"dim": 3},
            "materials": [{"name": "m", "E": PLATE_E, "nu": PLATE_NU, "density": PLATE_RHO}],
            "nodes": {"ids": used.tolist(), "coordinates": c[used - 1].tolist()},
            "elements": [{"name": "plate", "type": "shell", "material": "m",
                          "thickness": PLATE_H, "formulation": "linear",
                          "connectivity": tri.tolist()}]}, c, used


@pytest.fixture(scope="module")
def plate(tmp_path_factory):
    """The plate's full model (gravity sag, dense frequencies) and its reductions."""
    base = tmp_path_factory.mktemp("gravity_plate")
    d, c, used = plate_deck()
    clamped = used[np.isclose(c[used - 1, 0], 0.0)]
    tip = int(used[np.isclose(c[used - 1, 0], 1.0) & np.isclose(c[used - 1, 1], 0.25)][0])
    corner = int(used[np.isclose(c[used - 1, 0], 1.0) & np.isclose(c[used - 1, 1], 0.0)][0])
    interface = clamped.tolist() + [tip]
    supports = [{"nodes": clamped.tolist(), "fixed": ["all"]}]
    full = copy.deepcopy(d)
    full.update(supports=supports, gravity={"acceleration": G_PLATE.tolist()},
                steps=[{"name": "sag", "type": "static"}])
    dk, sysm, state, _ = solve(full, base_dir=str(base))
    k = int(np.flatnonzero(dk.model.node_ids == tip)[0])
    kc = int(np.flatnonzero(dk.model.node_ids == corner)[0])
    ref = sysm.reference_state()
    K = sysm.assembler.to_scipy(sysm.tangent(ref)).toarray()
    M = sysm.assembler.to_scipy(sysm.mass(ref, lumped=True)).toarray()
    n = sysm.n_free
    w2 = sla.eigh(K[:n, :n], M[:n, :n], eigvals_only=True, subset_by_index=[0, 9])
    for m in (4, 12):
        reduce(base, f"plate{m}", d, interface=interface, modes=m)
    return {"base": base, "deck": d, "supports": supports, "tip": tip, "corner": corner,
            "sag": state.dof_values()[k].copy(), "corner_sag": state.dof_values()[kc].copy(),
            "omega": np.sqrt(w2)}


def plate_superelement(p, m):
    """The superelement plate under gravity: the tip, the recovered corner, 6 frequencies."""
    sd = superelement_deck(p["base"], f"plate{m}", p["deck"],
                           [{"name": "sag", "type": "static"},
                            {"name": "modes", "type": "modal", "modes": 6}],
                           supports=p["supports"], gravity={"acceleration": G_PLATE.tolist()})
    dk, _, state, steps = solve(sd, base_dir=str(p["base"]))
    k = int(np.flatnonzero(dk.model.node_ids == p["tip"])[0])
    ids, u = dk.model.groups[0].recover(state)
    corner = u[int(np.flatnonzero(ids == p["corner"])[0])]
    return state.dof_values()[k].copy(), corner, steps[1].frequencies()


def test_plate_superelement_hangs_and_vibrates_as_the_full_shell_model(plate):
    """Gravity sag and 6 frequencies within the reduction's error of the full shell model: the
    tip (an interface node) exact by reciprocity, the recovered free corner and the frequencies
    closer with 12 fixed-interface modes than with 4; frequencies never below the full
    model's (Rayleigh-Ritz)."""
    w, w_corner = plate["sag"][2], plate["corner_sag"][2]
    assert w < 0 and w_corner < 0
    sag_err, freq_err = {}, {}
    for m, (sag_bound, freq_bound, first_bound) in PLATE_ERRORS.items():
        tip, corner, omega = plate_superelement(plate, m)
        assert np.abs(tip - plate["sag"]).max() < 1e-9 * abs(w)
        sag_err[m] = abs(corner[2] - w_corner) / abs(w_corner)
        rel = omega / plate["omega"][:6] - 1
        assert rel.min() > -1e-9
        freq_err[m] = rel.max()
        assert rel[0] < first_bound
        assert sag_err[m] < sag_bound and freq_err[m] < freq_bound
    assert sag_err[12] < 0.5 * sag_err[4]
    assert freq_err[12] < 0.5 * freq_err[4]


def test_plate_rigid_properties_from_the_reduced_model(plate):
    """The shell plate superelement: mass rho h A at the plate's centre, and the full plate's
    ``R^T M R`` (lumped mass, nodal rotary inertia included) to 1e-10."""
    d = copy.deepcopy(plate["deck"])
    d["steps"] = [{"name": "m", "type": "modal"}]
    comp = System(from_dict(d).model)
    M = comp.assembler.to_scipy(comp.mass(comp.reference_state(), lumped=True))
    A = full_rigid(comp, M)
    sd = superelement_deck(plate["base"], "plate4", plate["deck"],
                           [{"name": "modes", "type": "modal", "modes": 2}],
                           supports=plate["supports"])
    props = from_dict(sd, base_dir=str(plate["base"])).model.groups[0].rigid_properties()
    assert float(props["mass"]) == pytest.approx(PLATE_RHO * PLATE_H * 0.5, rel=1e-12)
    assert np.allclose(props["center_of_mass"], [0.5, 0.25, 0.0], rtol=0, atol=1e-12)
    assert np.abs(rigid_of(props) - A).max() < 1e-10 * np.abs(A).max()


PERIOD_B = 2 * np.pi / (1.8751**2 * np.sqrt(E_B * I_B / (1.0 * L_B**4)))   # first mode


@pytest.mark.parametrize("integrator", ["energy_conserving", "midpoint", "trapezoidal"])
def test_gravity_dropped_on_a_beam_superelement_balances_energy_and_follows_the_full_beams(
        beams, integrator):
    """Gravity switched on at rest in a dynamic step (two first-mode periods, 100 steps): the
    energy balance ``kinetic + strain - external_work`` stays zero to 1e-9 of the work (the
    loads' work on the modal coordinates is booked: without it the balance is off by the
    share of the weight the modes carry), and the tip follows the full beam model integrated
    alike within the reduction's error (6 modes, lumped mass): 2.7e-3 of the amplitude
    (measured, all three schemes; the tip is an interface node, whose static response is exact,
    so the difference is the reduced modes' frequency errors), held to twice that."""
    base, d = beams
    steps = [{"name": "drop", "type": "dynamic", "time_step": PERIOD_B / 50,
              "duration": 2 * PERIOD_B, "integrator": integrator}]
    g = {"acceleration": G_Z.tolist()}
    clamp = [{"nodes": [1], "fixed": ["all"]}]
    history, full_history = [], []

    def hook(store):
        return lambda dk: lambda s: store.append(s.dof_values()[1].copy())

    sd = superelement_deck(base, "cb6_lumped", d, steps, supports=clamp, gravity=g)
    _, _, _, done = solve(sd, base_dir=str(base), hook=hook(history))
    rows = done[0].history
    work = max(abs(r["external_work"]) for r in rows)
    assert work > 0
    assert max(abs(r["total"]) for r in rows) < 1e-9 * work
    full = copy.deepcopy(d)
    full.update(supports=clamp, gravity=g, steps=steps)
    solve(full, hook=hook(full_history))
    history, full_history = np.array(history), np.array(full_history)
    amplitude = np.abs(full_history[:, 2]).max()
    assert amplitude > 1.5 * 9.81 * L_B**4 / (8 * E_B * I_B)      # a sudden load overshoots
    assert np.abs(history[:, 2] - full_history[:, 2]).max() < DROP_ERROR * amplitude


def test_gravity_on_a_file_without_load_vectors_is_a_deck_error(beams, tmp_path):
    """A file written before issue 33 (no reduced/gravity): gravity names the file and says to
    reduce again; dynamic steps refuse gravity on superelements for now."""
    import shutil

    base, d = beams
    shutil.copy(base / "cb2.h5", tmp_path / "old.h5")
    with h5py.File(tmp_path / "old.h5", "a") as f:
        del f["reduced/gravity"]
    sd = superelement_deck(tmp_path, "old", d, [{"name": "sag", "type": "static"}],
                           supports=[{"nodes": [1], "fixed": ["all"]}],
                           gravity={"acceleration": G_Z.tolist()})
    with pytest.raises(DeckError) as err:
        from_dict(copy.deepcopy(sd), base_dir=str(tmp_path))
    assert err.value.key == "steps[0].loads"
    assert "old.h5" in err.value.message and "reduce the component again" in err.value.message
    sd["steps"][0]["loads"] = []                        # not applied: the file is fine
    from_dict(copy.deepcopy(sd), base_dir=str(tmp_path))
