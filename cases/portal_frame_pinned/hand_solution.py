"""Independent hand solution of the pinned portal frame (numpy only, no ``fem``).

The portal frame of ``cases/portal_frame`` with its beam pinned to the columns: the beam's end
moments are released, so with no load along its span it carries only an axial force and acts as a
bar between the column tops. The direct stiffness method on the 4 frame nodes: the columns are
textbook 2D frame elements (Euler-Bernoulli bending plus axial deformation; Kassimali, *Matrix
Analysis of Structures*, ch. 6), the beam a bar ``EA/L`` along its axis. Exact for nodal loads.

The deck models the pins as ties: the beam has its own end nodes 5 and 6 at the column tops 2 and
3, tied to them. A tie's force is the force its first node (the column top) receives from its
second (the beam end): minus the force the beam's end exerts on its own end node. The beam's end
nodes turn with the beam's chord (a straight, unloaded, pin-ended member).

Units: N, mm. Run: ``python cases/portal_frame_pinned/hand_solution.py``.
"""

import numpy as np

E = 210000.0                 # N/mm^2
h, b = 4000.0, 6000.0        # column height, beam span (mm)
A_c, I_c = 7808.0, 56.96e6   # columns, HEB 200 (strong axis)
A_b = 5381.0                 # beam, IPE 300 (its bending stiffness does not enter)
H = 20000.0                  # wind load at the left column top, node 2, +x (N)

X = np.array([[0.0, 0.0], [0.0, h], [b, h], [b, 0.0]])          # nodes 1..4
COLUMNS = {"left column": (0, 1), "right column": (3, 2)}        # (node p, node q)


def frame_stiffness(A, I, L):
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


def beam_bar():
    """The pin-ended beam as a bar between nodes 2 and 3: its 4x4 global stiffness (u, v)."""
    d = X[2] - X[1]
    L = float(np.hypot(*d))
    e = d / L
    k = E * A_b / L * np.outer(e, e)
    return np.block([[k, -k], [-k, k]]), L


def solve():
    """Nodal displacements (4, 3), reactions (4, 3), member end forces, beam force."""
    K = np.zeros((12, 12))
    for p, q in COLUMNS.values():
        T, L = rotation(p, q)
        dofs = [3 * p, 3 * p + 1, 3 * p + 2, 3 * q, 3 * q + 1, 3 * q + 2]
        K[np.ix_(dofs, dofs)] += T.T @ frame_stiffness(A_c, I_c, L) @ T
    kb, Lb = beam_bar()
    bdofs = [3, 4, 6, 7]                               # ux, uy of nodes 2 and 3
    K[np.ix_(bdofs, bdofs)] += kb
    F = np.zeros(12)
    F[3] = H                                           # node 2, ux
    free = [3, 4, 5, 6, 7, 8]
    u = np.zeros(12)
    u[free] = np.linalg.solve(K[np.ix_(free, free)], F[free])
    R = (K @ u - F).reshape(4, 3)
    ends = {}
    for name, (p, q) in COLUMNS.items():
        T, L = rotation(p, q)
        ug = np.concatenate([u[3 * p:3 * p + 3], u[3 * q:3 * q + 3]])
        ends[name] = frame_stiffness(A_c, I_c, L) @ T @ ug    # local end forces on the member
    f_beam = kb @ u[bdofs]                             # forces the beam's ends exert... on it
    e = (X[2] - X[1]) / Lb
    N = float(f_beam[2:] @ e)                          # tension positive
    return u.reshape(4, 3), R, ends, f_beam, N, Lb


if __name__ == "__main__":
    u, R, ends, f_beam, N, Lb = solve()
    chord = (u[2, 1] - u[1, 1]) / Lb                   # the beam's rotation (small)
    print("ux2 =", repr(u[1, 0]), " ux3 =", repr(u[2, 0]))
    print("uy2 =", repr(u[1, 1]), " uy3 =", repr(u[2, 1]))
    print("rz2 =", repr(u[1, 2]), " rz3 =", repr(u[2, 2]), " beam chord rotation =", repr(chord))
    print("R1 =", [repr(x) for x in R[0]], " R4 =", [repr(x) for x in R[3]])
    print("beam axial force N =", repr(N))
    print("tie 2-5 force on node 2 =", [repr(x) for x in -f_beam[:2]])
    print("tie 3-6 force on node 3 =", [repr(x) for x in -f_beam[2:]])
    for name, f in ends.items():
        # section moments EI v'': M1 = -f[2] at the first node, M2 = f[5] at the second
        print(name, ": N =", repr(f[3]), " M1 =", repr(-f[2]), " M2 =", repr(f[5]),
              " shear at the top =", repr(f[4]))
