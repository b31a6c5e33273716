"""The five tutorial decks of the docs (examples/tutorial/, docs/tutorials/) run and give the
answers their pages state.

Each deck runs once, in process through ``fem run`` (``fem.cli.main``), on a copy in a temporary
folder; each test compares what the page tells the reader to look at with a closed form, a
published table or an invariant:

* frame: the reactions balance the applied loads at every load factor (exact), and the nonlinear
  sway is the linear hand solution of cases/portal_frame amplified by the roof load (P-delta);
* mechanism: total energy constant (energy-conserving scheme) and the joints closed at every frame;
* shell: tip deflection P L^3 / 3EI, top stress M c / I at mid-length and first frequency
  3.5160 sqrt(EI / rho A) / L^2 of the strip as a beam (nu = 0; Blevins 1979, Table 8-1);
* rotor: frequencies at rest and under spin from the 4-DOF closed form of cases/jeffcott_rotor,
  critical speeds equal to that case's reference values;
* superelement: the reduced cantilever's frequencies against Blevins's lambda^2 = 3.5160,
  22.0345, 61.6972.

The pictures each page asks for come from the page's own ``fem plot`` command; a modal step's
frequencies plotted (``--modes``) equal the results' ``/modes/<step>/frequencies`` in the CSV.
"""

import re
import shlex
import shutil
import tomllib
from pathlib import Path

import h5py
import numpy as np
import pytest

from fem.cli import main
from fem.io.results import Results

ROOT = Path(__file__).resolve().parents[1]
TUTORIAL = ROOT / "examples" / "tutorial"
DECKS = ("frame", "mechanism", "shell", "rotor", "component", "cantilever")


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Run every tutorial deck (component before cantilever, which reads its superelement)."""
    base = tmp_path_factory.mktemp("tutorial")
    for deck in TUTORIAL.glob("*.toml"):
        shutil.copy(deck, base / deck.name)
    out = {}
    for name in DECKS:
        h5 = base / f"{name}.h5"
        assert main(["run", str(base / f"{name}.toml"), "-o", str(h5)]) == 0, name
        out[name] = h5
    return out


def test_every_tutorial_deck_is_run_and_has_a_page():
    decks = sorted(p.stem for p in TUTORIAL.glob("*.toml"))
    assert decks == sorted(DECKS)
    pages = " ".join(p.read_text() for p in (ROOT / "docs" / "tutorials").glob("*.md"))
    for name in DECKS:
        assert f"examples/tutorial/{name}.toml" in pages, name


def test_frame_reactions_balance_the_loads_and_sway_shows_p_delta(results):
    with h5py.File(results["frame"]) as f:
        s = f["steps/load"]
        lam = s["time"][()]
        reactions = s["reaction"][()].sum(axis=1)             # (T, slots): ux, uy, rz
        ids = f["model/node_ids"][()]
        sway = s["displacement"][-1, int(np.flatnonzero(ids == 2)[0]), 0]
    assert lam[-1] == pytest.approx(1.0) and len(lam) >= 5
    np.testing.assert_allclose(reactions[:, 0], -20000.0 * lam, rtol=1e-8, atol=1e-6)
    np.testing.assert_allclose(reactions[:, 1], 200000.0 * lam, rtol=1e-8, atol=1e-6)
    ref = tomllib.loads((ROOT / "cases" / "portal_frame" / "reference.toml").read_text())
    linear = next(q["value"] for q in ref["quantities"]
                  if q.get("node") == 2 and q.get("dof") == "ux")
    # 100 kN on each column against an elastic critical load of a few MN: 1-5 % amplification
    assert 1.01 < sway / linear < 1.05, sway / linear


def test_mechanism_conserves_energy_and_keeps_its_joints_closed(results):
    with h5py.File(results["mechanism"]) as f:
        s = f["steps/swing"]
        ids = f["model/node_ids"][()]
        x0 = f["model/nodes"][()]
        k1, k2 = (int(np.flatnonzero(ids == i)[0]) for i in (1, 2))
        x = x0[None] + s["displacement"][()]
        theta = s["rotation_vector"][:, :, 2]
        total, kinetic = s["energy/total"][()], s["energy/kinetic"][()]
    assert len(total) > 20 and kinetic.max() > 10.0
    assert np.abs(total).max() < 1e-8 * kinetic.max()
    np.testing.assert_allclose(np.linalg.norm(x[:, k1, :2], axis=1), 0.5, atol=1e-8)
    e1 = np.stack([np.cos(theta[:, k1]), np.sin(theta[:, k1])], axis=1)
    e2 = np.stack([np.cos(theta[:, k2]), np.sin(theta[:, k2])], axis=1)
    np.testing.assert_allclose(x[:, k1, :2] + 0.5 * e1, x[:, k2, :2] - 0.5 * e2, atol=1e-8)
    assert np.abs(theta[-1, k1]) > 0.5                       # it did swing


def test_shell_strip_bends_and_vibrates_as_a_beam(results):
    E, b, t, L, rho, P = 2.1e11, 0.2, 0.01, 1.0, 7850.0, 10.0
    EI = E * b * t**3 / 12
    with h5py.File(results["shell"]) as f:
        ids = f["model/node_ids"][()]
        tip = f["steps/bend/displacement"][-1, np.isin(ids, [31, 32, 33]), 2]
        omega = f["modes/modes/frequencies"][()]
        middle = f["steps/bend/nodal/s_top_xx"][-1, np.isin(ids, [16, 17, 18])]   # x = L / 2
    np.testing.assert_allclose(tip, -P * L**3 / (3 * EI), rtol=2e-3)
    np.testing.assert_allclose(middle, P * (L / 2) * (t / 2) / (b * t**3 / 12), rtol=1e-2)
    assert omega[0] == pytest.approx(3.5160 * np.sqrt(EI / (rho * b * t)) / L**2, rel=1e-2)


def whirl_roots(spin):
    """Signed whirl frequencies (w > 0 forward) of the 4-DOF tip model of cases/jeffcott_rotor."""
    EI, L, m, Id, Ip = 1600.0, 0.3, 5.0, 0.030, 0.056
    k11, k12, k22 = 12 * EI / L**3, -6 * EI / L**2, 4 * EI / L
    poly = np.polysub(np.polymul([-m, 0.0, k11], [-Id, Ip * spin, k22]), [k12**2])
    return np.sort(np.roots(poly).real)


def test_rotor_frequencies_and_critical_speeds_match_the_closed_form(results):
    torsion = np.sqrt(1280.0 / (0.3 * 0.056))
    with h5py.File(results["rotor"]) as f:
        at_rest = f["modes/at_rest/frequencies"][()]
        spinning = np.sort(f["linear/spinning/frequencies"][()])
    w0 = whirl_roots(0.0)
    np.testing.assert_allclose(at_rest, np.sort([w0[2], w0[2], torsion, w0[3]]), rtol=1e-8)
    # in the frame turning at 300 rad/s a whirl w is seen at |w - 300|
    turning = np.sort(np.r_[np.abs(whirl_roots(300.0) - 300.0), torsion])
    np.testing.assert_allclose(spinning, turning, rtol=1e-8)
    ref = tomllib.loads((ROOT / "cases" / "jeffcott_rotor" / "reference.toml").read_text())
    with Results(str(results["rotor"])) as r:
        for q in ref["quantities"]:
            if q["kind"] == "critical_speed":
                assert r.quantity(q) == pytest.approx(q["value"], rel=1e-6), q["name"]


def test_superelement_cantilever_matches_blevins(results):
    EI, rhoA, L = 2.1e11 * 0.01**4 / 12, 7850.0 * 0.01**2, 1.0
    with h5py.File(results["cantilever"]) as f:
        omega = f["modes/modes/frequencies"][()]
    with h5py.File(results["component"]) as f:
        assert f["cms/reduce"].attrs["n_modal"] == 8
    blevins = np.array([3.5160, 22.0345, 61.6972]) * np.sqrt(EI / rhoA) / L**2
    np.testing.assert_allclose(omega, blevins, rtol=1e-3)


# --- the pictures each page asks for: `fem plot` (issue 34 item 2) ---------------------------

def page_plots() -> list[tuple[str, list[str]]]:
    """Every ``fem plot <deck>.h5 ...`` command of the tutorial pages: (deck, arguments)."""
    calls = []
    for page in sorted((ROOT / "docs" / "tutorials").glob("*.md")):
        for name, rest in re.findall(r"^fem plot (\w+)\.h5 (.*)$", page.read_text(), re.M):
            calls.append((name, shlex.split(rest)))
    return calls


PLOTS = page_plots()


def test_every_tutorial_page_ends_with_a_plot():
    assert sorted({name for name, _ in PLOTS}) == sorted(set(DECKS) - {"component"})


@pytest.mark.parametrize("name, args", PLOTS, ids=[name for name, _ in PLOTS])
def test_fem_plot_draws_each_tutorials_picture(results, name, args, tmp_path):
    """The page's command as it stands, its output file moved into a temporary folder."""
    args = list(args)
    out = tmp_path / Path(args[args.index("-o") + 1]).name
    args[args.index("-o") + 1] = str(out)
    table = tmp_path / "plotted.csv"
    assert main(["plot", str(results[name]), *args, "--csv", str(table)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 1000
    if "--modes" in args:
        import csv

        step = args[args.index("--modes") + 1]
        with open(table, newline="") as fh:
            rows = list(csv.DictReader(fh))
        with h5py.File(results[name], "r") as f:
            omega = f[f"modes/{step}/frequencies"][()]
        np.testing.assert_array_equal([float(r["frequency (rad/s)"]) for r in rows], omega)
