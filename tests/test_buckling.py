"""Linear buckling: Euler columns, Meijaard's spatial problems (Tables 1 and 2), load kinds.

Reference values: Timoshenko & Gere (Theory of Elastic Stability, sections 2.1-2.3); Meijaard 1993,
Tables 1-2 (notes/meijaard.md sections 2.1-2.2, with the digest's recomputed [X] rows for n = 8);
Ziegler (Principles of Structural Stability, 1968) and Greenhill (1883) for torque-loaded shafts.
Printed table values are compared to half a unit of their last printed digit.
"""

import math

import pytest
from helpers import line_beam, solve

K_CLAMPED_PINNED = 20.19072855642663     # (kL)^2 with tan(kL) = kL


def factors(deck):
    return solve(deck)[3][-1].factors


def euler(dim, bc, n):
    d = line_beam(dim, n, Iy=2.0, Iz=1.0, orientation=[0, 1, 0] if dim == 3 else None)
    tr = ["ux", "uy"] if dim == 2 else ["ux", "uy", "uz"]
    d["supports"] = {"cantilever": [{"nodes": 1, "fixed": ["all"]}],
                     "pinned": [{"nodes": 1, "fixed": tr + (["rx"] if dim == 3 else [])},
                                {"nodes": 2, "fixed": tr[1:]}],
                     "clamped-pinned": [{"nodes": 1, "fixed": ["all"]},
                                        {"nodes": 2, "fixed": tr[1:]}]}[bc]
    d["loads"] = [{"name": "P", "nodes": 2, "force": [-1.0] + [0.0] * (dim - 1)}]
    d["steps"] = [{"name": "b", "type": "buckling", "modes": 1}]
    return d


EULER = {"cantilever": math.pi**2 / 4, "pinned": math.pi**2, "clamped-pinned": K_CLAMPED_PINNED}


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("bc", list(EULER))
def test_euler_columns_converge_at_order_four(dim, bc):
    """Cubic elements with consistent geometric stiffness: upper bounds, error ~ h^4."""
    err = {n: factors(euler(dim, bc, n))[0] / EULER[bc] - 1 for n in (4, 8, 16)}
    assert all(e > 0 for e in err.values())
    for n in (4, 8):
        assert 3.8 < math.log2(err[n] / err[2 * n]) < 4.2
    if bc != "clamped-pinned":
        assert err[4] < 1e-3                       # issue 3: within 0.1 % with 4 elements
    else:
        assert factors(euler(dim, bc, 5))[0] / EULER[bc] - 1 < 1e-3   # needs 5 (4 give 0.21 %)


def shaft(n, kind="semitangential", supports="cantilever"):
    d = line_beam(3, n, E=1.0, G=0.4, Iy=1.0, Iz=1.0, J=2.0)
    d["supports"] = ([{"nodes": 1, "fixed": ["all"]}] if supports == "cantilever" else
                     [{"nodes": 1, "fixed": ["ux", "uy", "uz", "rx"]},
                      {"nodes": 2, "fixed": ["uy", "uz"]}])
    d["loads"] = [{"name": "T", "nodes": 2, "moment": [1.0, 0, 0], "kind": kind}]
    d["steps"] = [{"name": "b", "type": "buckling", "modes": 2}]
    return d


# Meijaard Table 2, "with second-order terms"; n = 8 from the digest's recomputation [X].
TABLE_2 = {1: (1.1027, 5e-5), 2: (1.0075, 5e-5), 4: (1.0005, 5e-5), 8: (1.0000327, 5e-8)}


@pytest.mark.parametrize("n", list(TABLE_2))
def test_shaft_under_semitangential_torque_matches_meijaard_table_2(n):
    ratio = factors(shaft(n))[0] / math.pi             # M_th = pi EI / l
    ref, half_unit = TABLE_2[n]
    assert abs(ratio - ref) <= half_unit
    if n == 2:
        assert ratio <= 1.0075                          # issue 3, as printed
    if n == 4:
        assert round(ratio, 4) <= 1.0005                # issue 3, at the printed precision


def test_shaft_converges_at_order_four():
    """Meijaard B2h: the second-order strains raise the order from 2 to 4."""
    e = {n: factors(shaft(n))[0] / math.pi - 1 for n in (2, 4, 8)}
    assert 3.7 < math.log2(e[2] / e[4]) < 4.3 and 3.7 < math.log2(e[4] / e[8]) < 4.3


def test_buckling_torque_depends_on_the_kind_of_moment():
    """Argyris's moment kinds on a clamped-free shaft (Ziegler 1968, ch. 4):

    * semitangential (conservative): M_cr = pi EI / l;
    * axial (dead) and follower: non-conservative, no adjacent equilibrium (no divergence), so the
      eigenproblem has no real positive buckling factor.
    """
    assert factors(shaft(8))[0] == pytest.approx(math.pi, rel=1e-4)
    assert len(factors(shaft(8, "dead"))) == 0
    assert len(factors(shaft(8, "follower"))) == 0


def test_greenhill_shaft_under_axial_torque():
    """Greenhill (1883): a shaft on spherical hinges under axial torques buckles at 2 pi EI / l.

    The support reaction torque and the dead tip torque are both axial (fixed direction).
    """
    f4, f8 = (factors(shaft(n, "dead", "pinned"))[0] / (2 * math.pi) - 1 for n in (4, 8))
    assert 0 < f8 < f4 < 0.01
    assert abs(f8) < 6e-4


def lateral(n, EIs=100.0, EIw=1.0, GJ=0.7):
    d = line_beam(3, n, E=1.0, G=0.35, Iy=EIw, Iz=EIs, J=GJ / 0.35, orientation=[0, 1, 0])
    d["supports"] = [{"nodes": 1, "fixed": ["all"]}]
    d["loads"] = [{"name": "F", "nodes": 2, "force": [0, -1.0, 0]}]
    d["steps"] = [{"name": "b", "type": "buckling", "modes": 1}]
    return d


# Meijaard Table 1, "with second-order terms", relative to F_th = 4.013 sqrt(EI S_t)/l^2 as printed;
# n = 8 from the digest's recomputation [X] relative to 4.012599: 1.00386.
TABLE_1 = {1: (1.4951, 5e-5), 2: (1.0690, 5e-5), 4: (1.0153, 5e-5)}


@pytest.mark.parametrize("n", list(TABLE_1))
def test_lateral_buckling_matches_meijaard_table_1(n):
    ratio = factors(lateral(n))[0] / (4.013 * math.sqrt(0.7))
    ref, half_unit = TABLE_1[n]
    assert abs(ratio - ref) <= half_unit


def test_lateral_buckling_converges_at_order_two_to_the_exact_load():
    """Meijaard B1g-h: order 2 (twist is linear in each element) towards 2 j sqrt(EI S_t)/l^2."""
    exact = 4.012599 * math.sqrt(0.7)          # 2 j, j = 2.006300 the first zero of J_-1/4
    e = {n: factors(lateral(n))[0] / exact - 1 for n in (4, 8, 16)}
    assert abs(e[8] - 0.00386) < 2e-4          # digest [X], n = 8
    assert 1.8 < math.log2(e[4] / e[8]) < 2.2 and 1.8 < math.log2(e[8] / e[16]) < 2.2


def test_lateral_buckling_invariances():
    """The factor ignores the strong-axis stiffness and scales with sqrt(EI_weak S_t)."""
    base = factors(lateral(4))[0]
    assert factors(lateral(4, EIs=50.0))[0] == pytest.approx(base, rel=1e-10)
    assert factors(lateral(4, EIw=3.0, GJ=0.7 * 3))[0] == pytest.approx(3 * base, rel=1e-10)


def test_buckling_about_a_preloaded_state():
    """K_0 includes the stresses of earlier steps: a column preloaded by 0.4 P_cr buckles at 0.6."""
    d = euler(2, "cantilever", 8)
    d["loads"].append({"name": "pre", "nodes": 2, "force": [-0.4 * math.pi**2 / 4, 0.0]})
    d["steps"] = [{"name": "pre", "type": "static", "loads": ["pre"]},
                  {"name": "b", "type": "buckling", "loads": ["P"], "modes": 1}]
    only = factors(euler(2, "cantilever", 8))[0]
    assert factors(d)[0] == pytest.approx(only - 0.4 * math.pi**2 / 4, rel=1e-3)
