"""Hand solution of the space truss case in exact rational arithmetic (no ``fem``, no numpy).

Method of joints at the apex for the bar forces, then the unit-load method (virtual work) for the
apex displacement: ``delta_j = sum_i N_i n_ij L_i / (E A_i)`` with ``n_ij`` the bar forces under a
unit load along global axis ``j``. Bar forces are tensions; ``u_i`` is the unit vector from the apex
towards foot ``i``, so bar ``i`` pulls the apex with ``N_i u_i``. Units: N, mm.
Run: ``python cases/space_truss/hand_solution.py``.
"""

from fractions import Fraction as F

E = F(200000)
L = F(5000)                                        # every bar: 3-4-5 geometry
A = [F(1500), F(1000), F(1000)]                    # bars 1-4, 2-4, 3-4
U = [(F(3, 5), F(0), F(-4, 5)),                    # u1 = (3000, 0, -4000)/5000
     (F(-9, 25), F(12, 25), F(-4, 5)),             # u2 = (-1800, 2400, -4000)/5000
     (F(0), F(-3, 5), F(-4, 5))]                   # u3 = (0, -3000, -4000)/5000
P = (F(12000), F(-8000), F(-40000))                # apex load


def bar_forces(p):
    """Method of joints at the apex: sum_i N_i u_i + p = 0, eliminated by hand.

    x: 3/5 N1 - 9/25 N2 = -px;  y: 12/25 N2 - 3/5 N3 = -py;  z: -4/5 (N1 + N2 + N3) = -pz.
    Substituting N1 and N3 from x and y into z: N2 = (5/4 pz + 5/3 (px - py)) / (12/5).
    """
    px, py, pz = p
    n2 = (F(5, 4) * pz + F(5, 3) * (px - py)) / F(12, 5)
    n1 = (-px + F(9, 25) * n2) / F(3, 5)
    n3 = (py + F(12, 25) * n2) / F(3, 5)
    return [n1, n2, n3]


def apex_displacement():
    """Unit-load method: delta_j = sum_i N_i n_ij L / (E A_i)."""
    N = bar_forces(P)
    out = []
    for j in range(3):
        unit = tuple(F(int(k == j)) for k in range(3))
        n = bar_forces(unit)
        out.append(sum(N[i] * n[i] * L / (E * A[i]) for i in range(3)))
    return out


def main():
    """Print bar forces, reactions (N_i u_i at foot i) and the apex displacement."""
    N = bar_forces(P)
    for i in range(3):
        assert sum(N[k] * U[k][i] for k in range(3)) + P[i] == 0      # apex equilibrium
        print(f"N{i + 1} = {N[i]} = {float(N[i])!r}")
    for i in range(3):
        R = [N[i] * c for c in U[i]]
        print(f"reaction at foot {i + 1} = " + ", ".join(f"{float(r)!r}" for r in R))
    d = apex_displacement()
    print("apex displacement = " + ", ".join(f"{x} = {float(x)!r}" for x in d))
    # compatibility check: the elongation of bar i is -u_i . d (the apex moves, the foot does not)
    for i in range(3):
        assert -sum(U[i][k] * d[k] for k in range(3)) == N[i] * L / (E * A[i])


if __name__ == "__main__":
    main()
