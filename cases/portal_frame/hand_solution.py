"""Independent hand solution of the portal frame case (numpy only, no ``fem``).

The direct stiffness method written out for the four nodes and three members of the frame, with
the textbook 2D frame element (Euler-Bernoulli bending plus axial deformation; e.g. Kassimali,
*Matrix Analysis of Structures*, ch. 6, plane frames). The element is exact for nodal loads, so this
is the exact linear solution, axial deformation included. It prints the reference values of
``reference.toml`` (17 significant digits) and, for comparison, the slope-deflection solution of
the inextensible frame.

Units: N, mm. Run: ``python cases/portal_frame/hand_solution.py``.
"""

import numpy as np

E = 210000.0                 # N/mm^2
h, b = 4000.0, 6000.0        # column height, beam span (mm)
A_c, I_c = 7808.0, 56.96e6   # columns, HEB 200 (strong axis)
A_b, I_b = 5381.0, 83.56e6   # beam, IPE 300 (strong axis)
H = 20000.0                  # wind load at the beam level, node 2, +x (N)

X = np.array([[0.0, 0.0], [0.0, h], [b, h], [b, 0.0]])          # nodes 1..4
MEMBERS = {"left column": (0, 1, A_c, I_c), "beam": (1, 2, A_b, I_b),
           "right column": (3, 2, A_c, I_c)}                      # (node p, node q, A, I)


def local_stiffness(A, I, L):
    """6x6 frame element stiffness in local axes, DOFs (u1, v1, th1, u2, v2, th2)."""
    a, c1, c2, c3, c4 = E * A / L, 12 * E * I / L**3, 6 * E * I / L**2, 4 * E * I / L, 2 * E * I / L
    return np.array([[a, 0, 0, -a, 0, 0],
                     [0, c1, c2, 0, -c1, c2],
                     [0, c2, c3, 0, -c2, c4],
                     [-a, 0, 0, a, 0, 0],
                     [0, -c1, -c2, 0, c1, -c2],
                     [0, c2, c4, 0, -c2, c3]])


def rotation(p, q):
    """Global-to-local transformation T (6x6) and the length of member p-q."""
    d = X[q] - X[p]
    L = float(np.hypot(*d))
    c, s = d / L
    r = np.array([[c, s, 0], [-s, c, 0], [0, 0, 1.0]])
    T = np.zeros((6, 6))
    T[:3, :3] = T[3:, 3:] = r
    return T, L


def solve():
    """Nodal displacements (4, 3), reactions (4, 3) and local member end forces."""
    K = np.zeros((12, 12))
    for p, q, A, I in MEMBERS.values():
        T, L = rotation(p, q)
        dofs = [3 * p, 3 * p + 1, 3 * p + 2, 3 * q, 3 * q + 1, 3 * q + 2]
        K[np.ix_(dofs, dofs)] += T.T @ local_stiffness(A, I, L) @ T
    F = np.zeros(12)
    F[3 * 1 + 0] = H                                  # node 2, ux
    free = [3, 4, 5, 6, 7, 8]                         # nodes 2 and 3; nodes 1 and 4 clamped
    u = np.zeros(12)
    u[free] = np.linalg.solve(K[np.ix_(free, free)], F[free])
    R = K @ u - F                                     # support forces on the frame
    ends = {}
    for name, (p, q, A, I) in MEMBERS.items():
        T, L = rotation(p, q)
        dofs = [3 * p, 3 * p + 1, 3 * p + 2, 3 * q, 3 * q + 1, 3 * q + 2]
        ends[name] = local_stiffness(A, I, L) @ T @ u[dofs]   # forces on the member, local axes
    return u.reshape(4, 3), R.reshape(4, 3), ends


def slope_deflection():
    """Inextensible frame (EA -> inf), antisymmetric: sway, joint rotation, base and top moments.

    rho = (I_b/b)/(I_c/h). Joint equilibrium and the storey shear give
    sway = H h^3 (2 + 3 rho)/(12 E I_c (1 + 6 rho)), joint rotation = -H h^2/(4 E I_c (1 + 6 rho)),
    base moments H h (1 + 3 rho)/(2 (1 + 6 rho)), column-top moments 3 rho H h/(2 (1 + 6 rho)).
    """
    rho = (I_b / b) / (I_c / h)
    return {"rho": rho,
            "sway": H * h**3 * (2 + 3 * rho) / (12 * E * I_c * (1 + 6 * rho)),
            "joint rotation": -H * h**2 / (4 * E * I_c * (1 + 6 * rho)),
            "base moment": H * h * (1 + 3 * rho) / (2 * (1 + 6 * rho)),
            "column-top moment": 3 * rho * H * h / (2 * (1 + 6 * rho)),
            "base shear": -H / 2}


def main():
    """Print the reference values and the inextensible comparison."""
    u, R, ends = solve()
    out = {
        "sway ux node 2": u[1, 0], "sway ux node 3": u[2, 0],
        "uy node 2": u[1, 1], "uy node 3": u[2, 1],
        "rz node 2": u[1, 2], "rz node 3": u[2, 2],
        "reaction ux node 1": R[0, 0], "reaction ux node 4": R[3, 0],
        "reaction uy node 1": R[0, 1], "reaction uy node 4": R[3, 1],
        "reaction rz node 1": R[0, 2], "reaction rz node 4": R[3, 2],
        # fem's section forces: N = axial force (tension +), M1 = M(0), M2 = M(l), internal
        # moments EI v'' in the member's local x-y plane; in terms of the end forces on the member
        # (local axes, counter-clockwise moments): N = f[3], M1 = -f[2], M2 = f[5].
        "left column N": ends["left column"][3], "left column M1 (base)": -ends["left column"][2],
        "left column M2 (top)": ends["left column"][5],
        "right column N": ends["right column"][3],
        "right column M1 (base)": -ends["right column"][2],
        "right column M2 (top)": ends["right column"][5],
        "beam N": ends["beam"][3], "beam M1 (node 2)": -ends["beam"][2],
        "beam M2 (node 3)": ends["beam"][5],
    }
    for k, v in out.items():
        print(f"{k:28s} {v!r}")
    print(f"{'sum of base shears + H':28s} {R[0, 0] + R[3, 0] + H!r}")
    print("\ninextensible limit (slope-deflection):")
    for k, v in slope_deflection().items():
        print(f"{k:28s} {v!r}")


if __name__ == "__main__":
    main()
