"""The rows of a joint (:mod:`fem.constraints.joint`): values, Jacobians, discrete gradients.

For each row kind of a :class:`~fem.constraints.joint.Joint` (``point``, ``perp``, ``slide``,
``angle``, and the driven ``turn``), with the columns ``u_a, w_a, u_b, w_b`` of a pair:

* :func:`static_rows`: the constraint ``g``, its Jacobian ``G`` and ``d(G^T mu)/dq`` (the
  formulas of the joint module's docstring, ``G = [-I, hat(a_a), I, -hat(a_b)]`` and so on);
* :func:`discrete_rows`: the discrete gradient ``G_d`` of a step, ``G_d [du; theta] = g(q_1) -
  g(q_0)`` exactly, and its derivative along Newton's corrections (the docstring's *Ideal joints
  do no work over a time step* and *The Cayley form*);
* :func:`bias_rows`: ``gamma`` with ``d2g/dt2 = G a + gamma`` (the velocity terms).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem import rotations as so3

UA, WA, UB, WB = slice(0, 3), slice(3, 6), slice(6, 9), slice(9, 12)


def dot(a: NDArray, b: NDArray) -> NDArray:
    """``a . b`` over the last axis."""
    return np.einsum("...i,...i->...", a, b)


def rotz(angle: NDArray) -> NDArray:
    """(..., 3, 3) rotations by ``angle`` about z."""
    c, s = np.cos(angle), np.sin(angle)
    R = np.zeros(np.shape(angle) + (3, 3))
    R[..., 0, 0], R[..., 0, 1], R[..., 1, 0], R[..., 1, 1] = c, -s, s, c
    R[..., 2, 2] = 1.0
    return R


def _jl_derivative_z(t: NDArray, v: NDArray) -> NDArray:
    """(E, 3, 3) ``d(jl(t e_z) v)/dt`` in column z, for in-plane ``v`` (2D joints).

    ``jl(t e_z) v = (sin t / t) v + ((1 - cos t) / t) e_z x v``; a spin about z moves ``t`` by
    itself (``jl_inv(t e_z) e_z = e_z``). Series below 1e-3 (relative error below 1e-18).
    """
    small = np.abs(t) < 1e-3
    ts = np.where(small, 1.0, t)
    t2 = t * t
    ds = np.where(small, -t / 3 + t * t2 / 30, (ts * np.cos(ts) - np.sin(ts)) / ts**2)
    dc = np.where(small, 0.5 - t2 / 8 + t2 * t2 / 144,
                  (ts * np.sin(ts) - (1 - np.cos(ts))) / ts**2)
    out = np.zeros(t.shape + (3, 3))
    out[..., 0, 2] = ds * v[..., 0] - dc * v[..., 1]
    out[..., 1, 2] = ds * v[..., 1] + dc * v[..., 0]
    return out


def cayley_ratio(t: NDArray) -> tuple[NDArray, NDArray]:
    """``c = tan(t/2) / (t/2)`` and ``dc/dt`` for rotation angles ``0 <= t < pi`` (any shape).

    ``c theta`` is the Cayley parameter ``psi`` of the rotation ``exp(theta)``, ``|theta| = t``
    (``exp(theta) = cay(c theta)``). Series of ``tan u / u`` below ``u = t/2 = 0.1`` (next term
    below 4e-15).
    """
    u = 0.5 * np.asarray(t, dtype=float)
    u2 = u * u
    small = u < 0.1
    us = np.where(small, 1.0, u)
    c = np.where(small, 1 + u2 * (1 / 3 + u2 * (2 / 15 + u2 * (17 / 315 + u2 * (
        62 / 2835 + u2 * 1382 / 155925)))), np.tan(us) / us)
    dc = np.where(small, 0.5 * u * (2 / 3 + u2 * (8 / 15 + u2 * (102 / 315 + u2 * (
        496 / 2835 + u2 * 13820 / 155925)))), 0.5 * (us / np.cos(us) ** 2 - np.tan(us)) / us**2)
    return c, dc


def turned(F: NDArray, f: NDArray, derivative: int = 0) -> NDArray:
    """(E, 3) ``F (-sin f, cos f, 0)`` (or its ``derivative``-th derivative by ``f (E,)``).

    The driven revolute row is ``(R_a F v(f)) . (R_b F e1) = sin(phi - f)`` with ``phi`` the
    angle of ``b`` about the axis ``e3`` relative to ``a``: zero when ``phi = f``.
    """
    c, s, z = np.cos(f), np.sin(f), np.zeros_like(f)
    v = [(-s, c, z), (-c, -s, z), (s, -c, z)][derivative]
    return np.einsum("eij,je->ei", F, np.array(v))


def static_rows(joint, state, mu: NDArray | None, f: float | None = None
            ) -> tuple[NDArray, NDArray, NDArray | None]:
    """``g (E, r)``, ``G (E, r, 12)`` and ``d(G^T mu)/dq (E, 12, 12)`` (3D columns).

    ``f``: the drive's value (default: at the state's time).
    """
    f = joint._drive_at(state.t) if f is None else f
    geo = joint._geometry(state)
    arms, s, Fa, Fb = geo["arms"], geo["s"], geo["Fa"], geo["Fb"]
    E = len(joint)
    gs, Gs = [], []
    K = None if mu is None else np.zeros((E, 12, 12))
    hat = so3.hat
    k = 0
    for row in joint.rows:
        if row[0] == "point":
            G = np.zeros((E, 3, 12))
            G[:, :, UA], G[:, :, WA] = -np.eye(3), hat(arms[:, 0])
            G[:, :, UB], G[:, :, WB] = np.eye(3), -hat(arms[:, 1])
            n = joint.dim
            gs.append(s[:, :n])
            Gs.append(G[:, :n])
            if K is not None:
                m = np.zeros((E, 3))
                m[:, :n] = mu[:, k:k + n]
                K[:, WA, WA] -= hat(m) @ hat(arms[:, 0])
                K[:, WB, WB] += hat(m) @ hat(arms[:, 1])
            k += n
            continue
        G = np.zeros((E, 1, 12))
        if row[0] == "angle":
            gs.append(joint._angles(state)[:, None])
            G[:, 0, 5], G[:, 0, 11] = -1.0, 1.0
            Gs.append(G)
            k += 1
            continue
        m = None if mu is None else mu[:, k, None, None]
        if row[0] in ("perp", "turn"):
            if row[0] == "turn":
                d, c = turned(Fa, f), Fb[:, :, 0]
                gs.append(dot(d, c)[:, None])
            else:
                d, c = Fa[:, :, row[1]], Fb[:, :, row[2]]
                gs.append((dot(d, c) - dot(joint.frames[:, :, row[1]],
                                             joint.frames[:, :, row[2]]))[:, None])
            dc = so3.cross(d, c)
            G[:, 0, WA], G[:, 0, WB] = dc, -dc
            if K is not None:
                cd, ddc = hat(c) @ hat(d), hat(d) @ hat(c)
                K[:, WA, WA] += m * cd
                K[:, WA, WB] -= m * ddc
                K[:, WB, WA] -= m * cd
                K[:, WB, WB] += m * ddc
        else:                                                  # slide
            d = Fa[:, :, row[1]]
            e = s + arms[:, 0]
            gs.append(dot(d, s)[:, None])
            G[:, 0, UA], G[:, 0, UB] = -d, d
            G[:, 0, WA] = so3.cross(d, e)
            G[:, 0, WB] = so3.cross(arms[:, 1], d)
            if K is not None:
                hd, hb = hat(d), hat(arms[:, 1])
                K[:, UA, WA] += m * hd
                K[:, UB, WA] -= m * hd
                K[:, WA, UA] -= m * hd
                K[:, WA, WA] += m * (hat(e) @ hd)
                K[:, WA, UB] += m * hd
                K[:, WA, WB] -= m * (hd @ hb)
                K[:, WB, WB] += m * (hd @ hb)
                K[:, WB, WA] -= m * (hb @ hd)
        Gs.append(G)
        k += 1
    g = np.concatenate(gs, axis=1)
    if joint.drive is not None and joint.rows[-1][0] != "turn":
        g[:, -1] -= f                         # the driven angle or slide
    return g, np.concatenate(Gs, axis=1), K


class _StepTurn:
    """How the step ``s0 -> s1`` changes a node's vectors: ``v1 - v0 = theta x j``.

    ``j = jl(theta) v0`` in 2D, ``j = c(|theta|) (v0 + v1)/2`` in 3D (the Cayley form, see the
    joint module's docstring: ``c theta`` is the step's Cayley parameter); :meth:`dj` is its
    derivative along a spin of ``s1`` (zero when no ``tangent`` is wanted).
    """

    def __init__(self, dim: int, theta: NDArray, tangent: bool):
        self.dim, self.theta, self.tangent = dim, theta, tangent
        if dim == 2:
            self.J = so3.jl(theta)
        else:
            t = np.sqrt(np.einsum("eai,eai->ea", theta, theta))
            self.c, self.dc = cayley_ratio(t)
            self.axis = theta / np.where(t > 0, t, 1.0)[..., None]
        if not tangent:               # the rows alone: K is dropped, skip jl's derivative
            self.zero = np.zeros((len(theta), 3, 3))

    def j(self, node: int, v0: NDArray, v1: NDArray) -> NDArray:
        """``j`` with ``v1 - v0 = theta x j`` for the vectors ``v0``, ``v1 (E, 3)`` of ``node``."""
        if self.dim == 2:
            return np.einsum("eij,ej->ei", self.J[:, node], v0)
        return self.c[:, node, None] * 0.5 * (v0 + v1)

    def dj(self, node: int, v0: NDArray, v1: NDArray) -> NDArray:
        """``d(j)/d(spin of s1)``: ``dv1 = dw x v1``, ``d|theta| = axis . dw``."""
        if not self.tangent:
            return self.zero
        if self.dim == 2:
            return _jl_derivative_z(self.theta[:, node, 2], v0)
        return (0.5 * (self.dc[:, node, None, None]
                       * np.einsum("ei,ej->eij", v0 + v1, self.axis[:, node])
                       - self.c[:, node, None, None] * so3.hat(v1)))


def discrete_rows(joint, s0, s1, mu: NDArray, tangent: bool = True
                  ) -> tuple[NDArray, NDArray | None]:
    """``G_d (E, r, 12)`` and (``tangent``) ``d(G_d^T mu)/dq_1 (E, 12, 12)`` of the step.

    A vector ``v`` of a node that the step turns by ``theta`` changes by ``theta x j``
    (:class:`_StepTurn`).
    """
    g0, g1 = joint._geometry(s0), joint._geometry(s1)
    f_mid = joint._drive_at(0.5 * (s0.t + s1.t))
    turn = _StepTurn(joint.dim, joint._step_rotations(s0, s1), tangent)
    E = len(joint)
    K = np.zeros((E, 12, 12))
    arms0, arms1 = g0["arms"], g1["arms"]
    ja = np.stack([turn.j(0, arms0[:, 0], arms1[:, 0]), turn.j(1, arms0[:, 1], arms1[:, 1])],
                  axis=1)
    Gs = []
    k = 0
    for row in joint.rows:
        if row[0] == "point":
            n = joint.dim
            Gs.append(_discrete_point(turn, g0, g1, ja, mu[:, k:k + n], n, K))
            k += n
            continue
        G = np.zeros((E, 1, 12))
        if row[0] == "angle":
            G[:, 0, 5], G[:, 0, 11] = -1.0, 1.0
            Gs.append(G)
            k += 1
            continue
        m = mu[:, k, None, None]
        if row[0] == "turn":          # the drive at mid-step, frozen over the step
            d0, d1 = turned(g0["Fa"], f_mid), turned(g1["Fa"], f_mid)
        else:
            d0, d1 = g0["Fa"][:, :, row[1]], g1["Fa"][:, :, row[1]]
        if row[0] in ("perp", "turn"):
            _discrete_perp(turn, g0, g1, 0 if row[0] == "turn" else row[2], d0, d1, m, G, K)
        else:
            _discrete_slide(turn, g0, g1, ja, d0, d1, m, G, K)
        Gs.append(G)
        k += 1
    return np.concatenate(Gs, axis=1), K if tangent else None


def _discrete_point(turn: _StepTurn, g0: dict, g1: dict, ja: NDArray, mu: NDArray, n: int,
                    K: NDArray) -> NDArray:
    """The ``n`` point rows of ``G_d`` (their multipliers ``mu (E, n)``); adds to ``K``."""
    hat = so3.hat
    arms0, arms1 = g0["arms"], g1["arms"]
    E = len(ja)
    G = np.zeros((E, 3, 12))
    G[:, :, UA], G[:, :, WA] = -np.eye(3), hat(ja[:, 0])
    G[:, :, UB], G[:, :, WB] = np.eye(3), -hat(ja[:, 1])
    m = np.zeros((E, 3))
    m[:, :n] = mu
    K[:, WA, WA] += hat(m) @ turn.dj(0, arms0[:, 0], arms1[:, 0])
    K[:, WB, WB] -= hat(m) @ turn.dj(1, arms0[:, 1], arms1[:, 1])
    return G[:, :n]


def _discrete_perp(turn: _StepTurn, g0: dict, g1: dict, j: int, d0: NDArray, d1: NDArray,
                   m: NDArray, G: NDArray, K: NDArray) -> None:
    """A perp (or driven turn) row of ``G_d`` into ``G``; adds to ``K``.

    ``d0``, ``d1``: the vector of node ``a``'s frame; ``j``: the column of ``b``'s.
    """
    hat = so3.hat
    jd = turn.j(0, d0, d1)
    dm = 0.5 * (d0 + d1)
    c0, c1 = g0["Fb"][:, :, j], g1["Fb"][:, :, j]
    jc = turn.j(1, c0, c1)
    cm = 0.5 * (c0 + c1)
    G[:, 0, WA], G[:, 0, WB] = so3.cross(jd, cm), so3.cross(jc, dm)
    K[:, WA, WA] -= m * (hat(cm) @ turn.dj(0, d0, d1))
    K[:, WA, WB] -= 0.5 * m * (hat(jd) @ hat(c1))
    K[:, WB, WB] -= m * (hat(dm) @ turn.dj(1, c0, c1))
    K[:, WB, WA] -= 0.5 * m * (hat(jc) @ hat(d1))


def _discrete_slide(turn: _StepTurn, g0: dict, g1: dict, ja: NDArray, d0: NDArray,
                    d1: NDArray, m: NDArray, G: NDArray, K: NDArray) -> None:
    """A slide row of ``G_d`` along node ``a``'s ``d0``/``d1`` into ``G``; adds to ``K``."""
    hat = so3.hat
    arms0, arms1 = g0["arms"], g1["arms"]
    jd = turn.j(0, d0, d1)
    dm = 0.5 * (d0 + d1)
    sm = 0.5 * (g0["s"] + g1["s"])
    G[:, 0, UA], G[:, 0, UB] = -dm, dm
    G[:, 0, WA] = so3.cross(jd, sm) + so3.cross(dm, ja[:, 0])
    G[:, 0, WB] = so3.cross(ja[:, 1], dm)
    h1 = 0.5 * hat(d1)
    K[:, UA, WA] += m * h1
    K[:, UB, WA] -= m * h1
    # d(sm) = G_point(s1) dq / 2
    Gp = np.zeros((len(ja), 3, 12))
    Gp[:, :, UA], Gp[:, :, WA] = -np.eye(3), hat(g1["arms"][:, 0])
    Gp[:, :, UB], Gp[:, :, WB] = np.eye(3), -hat(g1["arms"][:, 1])
    K[:, WA, :] += 0.5 * m * (hat(jd) @ Gp)
    K[:, WA, WA] += m * (-hat(sm) @ turn.dj(0, d0, d1) + hat(ja[:, 0]) @ h1
                         + hat(dm) @ turn.dj(0, arms0[:, 0], arms1[:, 0]))
    K[:, WB, WB] -= m * (hat(dm) @ turn.dj(1, arms0[:, 1], arms1[:, 1]))
    K[:, WB, WA] -= m * (hat(ja[:, 1]) @ h1)


def bias_rows(joint, state) -> NDArray:
    """(E, r) ``gamma``: ``d2g/dt2 = G a + gamma`` (velocities of ``state``; spatial spins)."""
    geo = joint._geometry(state)
    arms, s, Fa, Fb = geo["arms"], geo["s"], geo["Fa"], geo["Fb"]
    v = state.v[joint.conn]
    w = np.zeros((len(joint), 2, 3))
    vel = np.zeros((len(joint), 2, 3))
    if joint.dim == 2:
        w[..., 2] = v[..., 2]
        vel[..., :2] = v[..., :2]
    else:
        w, vel = v[..., 3:6], v[..., :3]
    cross = so3.cross
    wa, wb = w[:, 0], w[:, 1]
    point = cross(wb, cross(wb, arms[:, 1])) - cross(wa, cross(wa, arms[:, 0]))
    out = []
    for row in joint.rows:
        if row[0] == "point":
            out.append(point[:, :joint.dim])
            continue
        if row[0] == "angle":
            out.append(np.zeros((len(joint), 1)))
            continue
        if row[0] == "turn":
            out.append(_turn_bias(joint, state.t, Fa, Fb, wa, wb)[:, None])
            continue
        d = Fa[:, :, row[1]]
        dd = cross(wa, d)
        if row[0] == "perp":
            c = Fb[:, :, row[2]]
            dc = cross(wb, c)
            out.append((dot(cross(wa, dd), c) + 2 * dot(dd, dc)
                        + dot(d, cross(wb, dc)))[:, None])
        else:
            ds = (vel[:, 1] + cross(wb, arms[:, 1])) - (vel[:, 0] + cross(wa, arms[:, 0]))
            out.append((dot(cross(wa, dd), s) + 2 * dot(dd, ds)
                        + dot(d, point))[:, None])
    gamma = np.concatenate(out, axis=1)
    if joint.drive is not None and joint.rows[-1][0] != "turn":
        gamma[:, -1] -= joint._drive_at(state.t, 2)
    return np.where(joint.released, 0.0, gamma)


def _turn_bias(joint, t: float, Fa, Fb, wa, wb) -> NDArray:
    """(E,) the driven revolute row's ``gamma`` (velocity and drive terms).

    With ``d = R_a F v(f)``, ``u = R_a F v'(f)``, ``c = R_b F e1``: ``d' = wa x d + f' u``,
    ``u' = wa x u - f' d``, so ``d'' = (alpha_a x d) + wa x (wa x d) + 2 f' wa x u + f'' u
    - f'^2 d``, and ``g'' = d''.c + 2 d'.c' + d.c''``.
    """
    cross = so3.cross
    f = joint._drive_at(t)
    f1, f2 = joint._drive_at(t, 1)[:, None], joint._drive_at(t, 2)[:, None]
    d, u, c = turned(Fa, f), turned(Fa, f, 1), Fb[:, :, 0]
    dd = cross(wa, d) + f1 * u
    dc = cross(wb, c)
    ddd = cross(wa, cross(wa, d)) + 2 * f1 * cross(wa, u) + f2 * u - f1 * f1 * d
    return dot(ddd, c) + 2 * dot(dd, dc) + dot(d, cross(wb, dc))
