"""Independent reference solution of the Bricard case (numpy and scipy only, no ``fem``).

Bricard's mechanism of the IFToMM benchmark A04 in joint coordinates: the open chain ground -
rod 1 - ... - rod 5 with joint angles theta_1 .. theta_5, closed by joint 6 (rod 5 to the ground,
theta_6 the ground's angle relative to rod 5). Rod k turns as ``R_k = R_(k-1) Rot(a_k, theta_k)``
(the axes ``a_k`` in the reference frame, where every rod's orientation is the identity), and its
centre of mass is at ``p_k + R_k (C_k - P_k)`` with ``p_k`` the current position of joint k.

* **Closure.** The loop closes when the chain's end transform is the identity: 6 equations in the
  6 angles, of rank 5 along the motion (the overconstraint), so theta_1 = phi is taken as the
  coordinate and the other five are found by Gauss-Newton on the 6 equations (least squares,
  residual below 1e-14). The joint rates follow from the loop's twists: ``sum_i theta_i' xi_i = 0``
  with ``xi_i = (w_i, q_i x w_i)`` the spatial twist of joint i (``w_i`` its current axis, ``q_i``
  its current point): the null vector of the 6 x 6 matrix ``[xi_1 .. xi_6]`` scaled to
  ``theta_1' = 1``.
* **Dynamics.** One degree of freedom: ``T = M(phi) phi'^2 / 2`` with ``M = sum_k m v_k^2 +
  w_k . J_k w_k`` at ``phi' = 1`` (``J_k = R_k J_k0 R_k^T``), ``V = sum_k m g y_k``, so Lagrange's
  equation is ``M phi'' + M'(phi) phi'^2 / 2 + V'(phi) = 0`` (``M'`` and ``V'`` by central
  differences, h = 1e-5, relative error about 1e-10). Integrated from rest at phi = 0 with
  scipy's DOP853, rtol = atol = 1e-12.
* **Energy bound.** Released at rest, the largest kinetic energy is ``V(0) - min V`` along the
  closure curve (bounded minimization over phi, no integration).

It prints the joint angles and rod-centre displacements at t = 1 .. 10 s and the energy bound,
the values of ``reference.toml``. Units: m, kg, s. Run: ``python cases/bricard/hand_solution.py``
(about half a minute).
"""

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import minimize_scalar

L, m, a, g = 1.0, 1.0, 0.1, 9.81
P = np.array([[0, 0, 0], [L, 0, 0], [L, -L, 0], [L, -L, L], [0, -L, L], [0, 0, L]], float)
AXES = np.eye(3)[[1, 2, 0, 1, 2, 0]]                          # y, z, x, y, z, x at P1 .. P6
C = 0.5 * (P + np.roll(P, -1, axis=0))[:5]                    # rod k from P_k to P_k+1
J_AX, J_TR = m * 2 * a**2 / 12, m * (L**2 + a**2) / 12        # about the rod's axis, across it
J0 = [np.diag(np.where(np.abs(P[k + 1] - P[k]) > 0, J_AX, J_TR)) for k in range(5)]


def rot(axis, angle):
    """Rotation by ``angle`` about the unit vector ``axis`` (Rodrigues)."""
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def chain(theta):
    """Rotations R_1..R_6, joint points q_1..q_7 and joint axes w_1..w_6, current (global)."""
    R, q, w = [np.eye(3)], [P[0]], []
    for k in range(6):
        w.append(R[-1] @ AXES[k])
        R.append(R[-1] @ rot(AXES[k], theta[k]))
        nxt = P[(k + 1) % 6] - P[k] if k < 5 else P[0] - P[5]
        q.append(q[-1] + R[-1] @ nxt)
    return R[1:], q, w


def closure(theta):
    """(6,) the chain's end rotation minus identity (3 entries) and the end point gap."""
    R, q, _ = chain(theta)
    E = R[5]
    return np.concatenate([[E[2, 1] - E[1, 2], E[0, 2] - E[2, 0], E[1, 0] - E[0, 1]],
                           q[6] - P[0]])


def twists(theta):
    """(6, 6) the joints' spatial twists as columns: (w_i, q_i x w_i)."""
    _, q, w = chain(theta)
    return np.array([np.concatenate([w[i], np.cross(q[i], w[i])]) for i in range(6)]).T


_guess = np.zeros(5)


def close(phi):
    """The six angles on the closure curve at theta_1 = phi (Gauss-Newton from the last one)."""
    global _guess
    rest = _guess.copy()
    for _ in range(50):
        th = np.concatenate([[phi], rest])
        r = closure(th)
        if np.abs(r).max() < 1e-14:
            break
        # the closure's derivative in the five unknown angles: the twists, in the ground frame
        Xi = twists(th)[:, 1:]
        # closure(theta) is (rotation vector of the end rotation, end point); its derivative is
        # the twist's angular part and the translational part at the origin plus the point's
        # drift: d(q_7) = sum dtheta_i w_i x (q_7 - q_i) = sum dtheta_i (v_i + w_i x q_7)
        q7 = chain(th)[1][6]
        D = np.vstack([2 * Xi[:3], Xi[3:] + np.cross(Xi[:3].T, q7).T])
        rest = rest - np.linalg.lstsq(D, r, rcond=None)[0]
    else:
        raise RuntimeError(f"closure did not converge at phi = {phi}")
    _guess = rest
    return np.concatenate([[phi], rest])


def rates(theta):
    """(6,) d theta / d phi on the closure curve: the null vector of the twists."""
    _, s, Vt = np.linalg.svd(twists(theta))
    n = Vt[-1]
    assert s[-1] < 1e-10 * s[0] < s[-2], s       # exactly one degree of freedom
    return n / n[0]


def centres(theta):
    """(5, 3) the rods' centres of mass."""
    R, q, _ = chain(theta)
    return np.array([q[k] + R[k] @ (C[k] - P[k]) for k in range(5)])


def mass_and_potential(phi):
    """M(phi) (kinetic energy at phi' = 1, times 2) and V(phi)."""
    th = close(phi)
    R, q, w = chain(th)
    dth = rates(th)
    M = 0.0
    for k in range(5):
        omega = sum(dth[i] * w[i] for i in range(k + 1))
        # velocity of the centre: sum over joints i <= k of dtheta_i w_i x (c_k - q_i)
        c = q[k] + R[k] @ (C[k] - P[k])
        v = sum(dth[i] * np.cross(w[i], c - q[i]) for i in range(k + 1))
        M += m * v @ v + omega @ (R[k] @ J0[k] @ R[k].T) @ omega
    V = m * g * centres(th)[:, 1].sum()
    return M, V


def rhs(t, y, h=1e-5):
    """Lagrange's equation as a first-order system in (phi, phi')."""
    phi, dphi = y
    M, _ = mass_and_potential(phi)
    Mp, Vp = mass_and_potential(phi + h)
    Mm, Vm = mass_and_potential(phi - h)
    close(phi)                                   # leave the guess at phi
    dM, dV = (Mp - Mm) / (2 * h), (Vp - Vm) / (2 * h)
    return [dphi, -(0.5 * dM * dphi**2 + dV) / M]


def main():
    """Print the energy bound and the reference values at t = 1 .. 10 s."""
    V0 = mass_and_potential(0.0)[1]
    for phi in np.linspace(0.0, 1.6, 17):        # follow the closure curve from the release
        close(phi)
    res = minimize_scalar(lambda p: mass_and_potential(p)[1], bounds=(1.0, 2.2),
                          method="bounded", options={"xatol": 1e-10})
    print(f"V(0) = {V0:.12f} J; min V = {res.fun:.12f} J at theta_1 = {res.x:.10f}")
    print(f"largest kinetic energy V(0) - min V = {V0 - res.fun:.12f} J")
    close(0.0)
    times = np.arange(1.0, 10.5, 1.0)
    sol = solve_ivp(rhs, (0.0, 10.0), [0.0, 0.0], method="DOP853", rtol=1e-12, atol=1e-12,
                    t_eval=times, dense_output=False)
    _guess[:] = 0.0
    print("t     theta_1 .. theta_6 (rad)                                    "
          "rod 1 centre u (x, z), rod 3 centre u (x, y, z) (m)")
    for t, phi, dphi in zip(sol.t, sol.y[0], sol.y[1], strict=True):
        th = close(phi)
        u = centres(th) - C
        M, V = mass_and_potential(phi)
        print(f"{t:4.1f}  " + " ".join(f"{x:+.10f}" for x in th)
              + f"   {u[0, 0]:+.10f} {u[0, 2]:+.10f}   "
              + " ".join(f"{x:+.10f}" for x in u[2])
              + f"   T = {0.5 * M * dphi**2:.10f}, T + V - V0 = {0.5 * M * dphi**2 + V - V0:.1e}")


if __name__ == "__main__":
    main()
