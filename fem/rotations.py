"""Finite rotations: SO(3) maps, unit quaternions and tangent operators, vectorized.

Every function works on arrays with any number of leading (batch) axes: a rotation vector is
``(..., 3)``, a matrix ``(..., 3, 3)``, a quaternion ``(..., 4)`` stored as ``(w, x, y, z)``.

Conventions (used throughout fem):

* A rotation vector ``theta`` maps to ``R = exp(hat(theta))`` (Rodrigues).
* Nodal orientations are updated with *spatial* increments, ``R_new = exp(hat(dw)) R``; a finite
  rotation is never added to another.
* ``jl(theta)`` is the left Jacobian (tangent operator ``T_s`` of Battini & Pacoste 2002, eq. 9):
  ``dR R^T = hat(jl(theta) dtheta)``.
* ``kh(theta, m)`` is ``d(jl_inv(theta)^T m)/dtheta`` (their ``K_h``), the geometric term that
  appears when a moment conjugate to ``theta`` is expressed conjugate to a spatial spin.

The small-angle branches use Taylor series (coefficients derived with sympy) below ``_SMALL``,
where the closed forms lose digits to cancellation.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

_SMALL = 0.3


def sinc(x: NDArray) -> tuple[NDArray, NDArray]:
    """``sin x / x`` and its derivative, elementwise (Taylor series below 1e-4)."""
    small = np.abs(x) < 1e-4
    xs = np.where(small, 1.0, x)
    s = np.where(small, 1 - x**2 / 6, np.sin(xs) / xs)
    ds = np.where(small, -x / 3 + x**3 / 30, (xs * np.cos(xs) - np.sin(xs)) / xs**2)
    return s, ds


def hat(v: NDArray) -> NDArray:
    """Skew matrix with ``hat(a) @ b == cross(a, b)``; ``(..., 3) -> (..., 3, 3)``.

    >>> hat(np.array([1.0, 2.0, 3.0])) @ np.array([4.0, 5.0, 6.0])
    array([-3.,  6., -3.])
    """
    v = np.asarray(v, dtype=float)
    out = np.zeros(v.shape + (3,))
    x, y, z = v[..., 0], v[..., 1], v[..., 2]
    out[..., 0, 1], out[..., 0, 2] = -z, y
    out[..., 1, 0], out[..., 1, 2] = z, -x
    out[..., 2, 0], out[..., 2, 1] = -y, x
    return out


def vee(m: NDArray) -> NDArray:
    """Axial vector of the skew part of ``m``; ``(..., 3, 3) -> (..., 3)``."""
    return 0.5 * np.stack([m[..., 2, 1] - m[..., 1, 2],
                           m[..., 0, 2] - m[..., 2, 0],
                           m[..., 1, 0] - m[..., 0, 1]], axis=-1)


def _angle(theta: NDArray) -> NDArray:
    return np.sqrt(np.einsum("...i,...i->...", theta, theta))


def _series(t2: NDArray, coeffs: tuple[float, ...]) -> NDArray:
    out = np.zeros_like(t2)
    for c in reversed(coeffs):
        out = out * t2 + c
    return out


def _coefficients(theta: NDArray) -> tuple[NDArray, NDArray, NDArray]:
    """``sin(t)/t``, ``(1-cos t)/t^2`` and ``(t - sin t)/t^3`` with their series near zero."""
    t = _angle(theta)
    t2 = t * t
    small = t < _SMALL
    ts = np.where(small, 1.0, t)
    a = np.where(small, _series(t2, (1, -1 / 6, 1 / 120, -1 / 5040, 1 / 362880)), np.sin(ts) / ts)
    b = np.where(small, _series(t2, (1 / 2, -1 / 24, 1 / 720, -1 / 40320, 1 / 3628800)),
                 (1 - np.cos(ts)) / ts**2)
    c = np.where(small, _series(t2, (1 / 6, -1 / 120, 1 / 5040, -1 / 362880, 1 / 39916800)),
                 (ts - np.sin(ts)) / ts**3)
    return a, b, c


def expm(theta: NDArray) -> NDArray:
    """Rotation matrix of a rotation vector (Rodrigues); ``(..., 3) -> (..., 3, 3)``."""
    theta = np.asarray(theta, dtype=float)
    a, b, _ = _coefficients(theta)
    th = hat(theta)
    return np.eye(3) + a[..., None, None] * th + b[..., None, None] * (th @ th)


def rotate(theta: NDArray, v: NDArray) -> NDArray:
    """``expm(theta) v`` without the matrices (Rodrigues on the vectors); ``(..., 3)`` each.

    ``v + a theta x v + b theta x (theta x v)``: a third of :func:`expm`'s work where only the
    turned vectors are needed (the bent correction turns one chord per beam).
    """
    theta = np.asarray(theta, dtype=float)
    a, b, _ = _coefficients(theta)
    tv = np.cross(theta, v)
    return v + a[..., None] * tv + b[..., None] * np.cross(theta, tv)


def jl(theta: NDArray) -> NDArray:
    """Left Jacobian ``T_s(theta)``: ``dR R^T = hat(jl(theta) dtheta)``."""
    theta = np.asarray(theta, dtype=float)
    _, b, c = _coefficients(theta)
    th = hat(theta)
    return np.eye(3) + b[..., None, None] * th + c[..., None, None] * (th @ th)


def _eta(t: NDArray) -> NDArray:
    """``eta = (1 - (t/2) cot(t/2)) / t^2 = 1/t^2 - 1/(2 t tan(t/2))`` of angles ``t``.

    The second form has no cancellation near ``t = pi`` (``tan(t/2)`` grows, nothing subtracts
    to zero); the series takes over below ``_SMALL``.
    """
    small = t < _SMALL
    ts = np.where(small, 1.0, t)
    closed = 1 / ts**2 - 1 / (2 * ts * np.tan(ts / 2))
    return np.where(small, _series(t * t, (1 / 12, 1 / 720, 1 / 30240, 1 / 1209600, 1 / 47900160)),
                    closed)


def _eta_mu(theta: NDArray) -> tuple[NDArray, NDArray]:
    """``eta`` (see :func:`_eta`) and ``mu = eta'(t) / t``."""
    t = _angle(theta)
    t2 = t * t
    small = t < _SMALL
    ts = np.where(small, 1.0, t)
    # eta'(t)/t written without the cancellation of the cot form near t = pi (where the former
    # closed form lost all digits within 1e-8 of pi)
    mu_closed = (-2 / ts**4 + 1 / (2 * ts**3 * np.tan(ts / 2))
                 + 1 / (4 * ts**2 * np.sin(ts / 2) ** 2))
    mu = np.where(small,
                  _series(t2, (1 / 360, 1 / 7560, 1 / 201600, 1 / 5987520, 691 / 130767436800)),
                  mu_closed)
    return _eta(t), mu


def jl_inv(theta: NDArray) -> NDArray:
    """Inverse left Jacobian, ``I - hat(theta)/2 + eta hat(theta)^2``."""
    theta = np.asarray(theta, dtype=float)
    eta = _eta(_angle(theta))
    th = hat(theta)
    return np.eye(3) - 0.5 * th + eta[..., None, None] * (th @ th)


def kh(theta: NDArray, m: NDArray) -> NDArray:
    """Derivative ``d(jl_inv(theta)^T m)/dtheta`` at fixed ``m``.

    Shapes ``(..., 3), (..., 3) -> (..., 3, 3)``.
    ``jl_inv^T m = m + (theta x m)/2 + eta (theta (theta.m) - m |theta|^2)``.
    """
    theta = np.asarray(theta, dtype=float)
    m = np.asarray(m, dtype=float)
    eta, mu = _eta_mu(theta)
    tm = np.einsum("...i,...i->...", theta, m)
    t2 = np.einsum("...i,...i->...", theta, theta)
    outer = np.einsum("...i,...j->...ij", theta, m)        # theta m^T
    outer_mt = np.einsum("...i,...j->...ij", m, theta)     # m theta^T
    w = theta * tm[..., None] - m * t2[..., None]          # theta (theta.m) - m |theta|^2
    return (-0.5 * hat(m)
            + eta[..., None, None] * (tm[..., None, None] * np.eye(3) + outer - 2 * outer_mt)
            + mu[..., None, None] * np.einsum("...i,...j->...ij", w, theta))


def jl_derivative(theta: NDArray, y: NDArray) -> NDArray:
    """Derivative ``d(jl(theta) y)/dtheta`` at fixed ``y``; ``(..., 3), (..., 3) -> (..., 3, 3)``.

    ``jl y = y + b theta x y + c theta x (theta x y)`` with ``b = (1 - cos t)/t^2`` and
    ``c = (t - sin t)/t^3``; ``b'/t`` and ``c'/t`` by their series below ``_SMALL``.
    """
    theta = np.asarray(theta, dtype=float)
    y = np.asarray(y, dtype=float)
    _, b, c = _coefficients(theta)
    t = _angle(theta)
    t2 = t * t
    small = t < _SMALL
    ts = np.where(small, 1.0, t)
    db = np.where(small, _series(t2, (-1 / 12, 1 / 180, -1 / 6720, 1 / 453600)),
                  np.sin(ts) / ts**3 - 2 * (1 - np.cos(ts)) / ts**4)           # b'(t) / t
    dc = np.where(small, _series(t2, (-1 / 60, 1 / 1260, -1 / 60480, 1 / 4989600)),
                  (1 - np.cos(ts)) / ts**4 - 3 * (ts - np.sin(ts)) / ts**5)   # c'(t) / t
    ty = cross(theta, y)
    tty = cross(theta, ty)
    ny = np.einsum("...i,...i->...", theta, y)
    outer = np.einsum("...i,...j->...ij", ty, theta)
    return (db[..., None, None] * outer - b[..., None, None] * hat(y)
            + dc[..., None, None] * np.einsum("...i,...j->...ij", tty, theta)
            + c[..., None, None] * (ny[..., None, None] * np.eye(3)
                                    + np.einsum("...i,...j->...ij", theta, y)
                                    - 2 * np.einsum("...i,...j->...ij", y, theta)))


# --- unit quaternions (w, x, y, z) --------------------------------------------------------------

def quat_identity(n: int) -> NDArray:
    """``(n, 4)`` identity quaternions."""
    q = np.zeros((n, 4))
    q[:, 0] = 1.0
    return q


def quat_from_rotvec(theta: NDArray) -> NDArray:
    """Unit quaternion of a rotation vector; ``(..., 3) -> (..., 4)``."""
    theta = np.asarray(theta, dtype=float)
    t = _angle(theta)
    small = t < 1e-4
    ts = np.where(small, 1.0, t)
    half_sinc = np.where(small, 0.5 - t * t / 48, np.sin(ts / 2) / ts)
    return np.concatenate([np.cos(t / 2)[..., None], half_sinc[..., None] * theta], axis=-1)


def rotvec_from_quat(q: NDArray) -> NDArray:
    """Rotation vector (angle in ``[0, pi]``) of a unit quaternion; ``(..., 4) -> (..., 3)``."""
    q = np.asarray(q, dtype=float)
    q = np.where(q[..., :1] < 0, -q, q)
    v = q[..., 1:]
    s = _angle(v)
    angle = 2 * np.arctan2(s, q[..., 0])
    small = s < 1e-12
    scale = np.where(small, 2.0 / np.where(q[..., 0] == 0, 1.0, q[..., 0]),
                     angle / np.where(small, 1.0, s))
    return v * scale[..., None]


def quat_mul(a: NDArray, b: NDArray) -> NDArray:
    """Hamilton product ``a b`` (the rotation ``b`` followed by ``a``)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    aw, ax, ay, az = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
    bw, bx, by, bz = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[..., 0] = aw * bw - ax * bx - ay * by - az * bz
    out[..., 1] = aw * bx + ax * bw + ay * bz - az * by
    out[..., 2] = aw * by - ax * bz + ay * bw + az * bx
    out[..., 3] = aw * bz + ax * by - ay * bx + az * bw
    return out


def cross(a: NDArray, b: NDArray) -> NDArray:
    """``np.cross`` for ``(..., 3)`` arrays, without its generic overhead."""
    a1, a2, a3 = a[..., 0], a[..., 1], a[..., 2]
    b1, b2, b3 = b[..., 0], b[..., 1], b[..., 2]
    sa, sb = np.shape(a), np.shape(b)
    out = np.empty(sa if sa == sb else np.broadcast_shapes(sa, sb))
    out[..., 0] = a2 * b3 - a3 * b2
    out[..., 1] = a3 * b1 - a1 * b3
    out[..., 2] = a1 * b2 - a2 * b1
    return out


def quat_conj(q: NDArray) -> NDArray:
    """Conjugate (inverse) of unit quaternions ``(..., 4)``."""
    out = np.array(q, dtype=float, copy=True)
    out[..., 1:] *= -1
    return out


def quat_normalize(q: NDArray) -> NDArray:
    """Scale quaternions to unit length."""
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def quat_to_matrix(q: NDArray) -> NDArray:
    """Rotation matrix of a unit quaternion; ``(..., 4) -> (..., 3, 3)``."""
    q = np.asarray(q, dtype=float)
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    x2, y2, z2 = 2 * x, 2 * y, 2 * z
    xx, yy, zz = x * x2, y * y2, z * z2
    xy, xz, yz = x * y2, x * z2, y * z2
    wx, wy, wz = w * x2, w * y2, w * z2
    out = np.empty(q.shape[:-1] + (3, 3))
    out[..., 0, 0] = 1 - yy - zz
    out[..., 0, 1] = xy - wz
    out[..., 0, 2] = xz + wy
    out[..., 1, 0] = xy + wz
    out[..., 1, 1] = 1 - xx - zz
    out[..., 1, 2] = yz - wx
    out[..., 2, 0] = xz - wy
    out[..., 2, 1] = yz + wx
    out[..., 2, 2] = 1 - xx - yy
    return out


def matrix_to_quat(r: NDArray) -> NDArray:
    """Unit quaternion (``w >= 0``) of a rotation matrix by Shepperd's method; ``(..., 3, 3)``."""
    r = np.asarray(r, dtype=float)
    tr = np.trace(r, axis1=-2, axis2=-1)
    diag = np.stack([tr, r[..., 0, 0], r[..., 1, 1], r[..., 2, 2]], axis=-1)
    k = np.argmax(diag, axis=-1)
    q = np.empty(r.shape[:-2] + (4,))
    # Each branch divides by its largest component, which is at least 1/2 in magnitude.
    s0 = np.sqrt(np.maximum(1 + tr, 0.0)) * 2
    s1 = np.sqrt(np.maximum(1 + r[..., 0, 0] - r[..., 1, 1] - r[..., 2, 2], 0.0)) * 2
    s2 = np.sqrt(np.maximum(1 - r[..., 0, 0] + r[..., 1, 1] - r[..., 2, 2], 0.0)) * 2
    s3 = np.sqrt(np.maximum(1 - r[..., 0, 0] - r[..., 1, 1] + r[..., 2, 2], 0.0)) * 2
    r21, r12, r02, r20, r10, r01 = (r[..., 2, 1], r[..., 1, 2], r[..., 0, 2], r[..., 2, 0],
                                    r[..., 1, 0], r[..., 0, 1])
    with np.errstate(divide="ignore", invalid="ignore"):
        cand = np.stack([
            np.stack([s0 / 4, (r21 - r12) / s0, (r02 - r20) / s0, (r10 - r01) / s0], axis=-1),
            np.stack([(r21 - r12) / s1, s1 / 4, (r01 + r10) / s1, (r02 + r20) / s1], axis=-1),
            np.stack([(r02 - r20) / s2, (r01 + r10) / s2, s2 / 4, (r12 + r21) / s2], axis=-1),
            np.stack([(r10 - r01) / s3, (r02 + r20) / s3, (r12 + r21) / s3, s3 / 4], axis=-1),
        ], axis=-2)
    q = np.take_along_axis(cand, k[..., None, None], axis=-2)[..., 0, :]
    q = np.where(q[..., :1] < 0, -q, q)
    return quat_normalize(q)


def logm(r: NDArray) -> NDArray:
    """Rotation vector (angle in ``[0, pi]``) of a rotation matrix; ``(..., 3, 3) -> (..., 3)``.

    From the skew part ``sin(t) n`` and the trace ``1 + 2 cos(t)``: ``t = atan2(|s|, c)``, exact to
    round-off up to angles near pi, where the skew part vanishes; there (rare for the local
    rotations of beams) the quaternion route takes over.
    """
    r = np.asarray(r, dtype=float)
    s = 0.5 * np.stack([r[..., 2, 1] - r[..., 1, 2], r[..., 0, 2] - r[..., 2, 0],
                        r[..., 1, 0] - r[..., 0, 1]], axis=-1)
    c = 0.5 * (r[..., 0, 0] + r[..., 1, 1] + r[..., 2, 2] - 1.0)
    sn = np.sqrt(np.einsum("...i,...i->...", s, s))
    angle = np.arctan2(sn, c)
    small = sn < 1e-8
    factor = np.where(small, 1.0 + sn * sn / 6, angle / np.where(small, 1.0, sn))
    out = s * factor[..., None]
    near_pi = c < -0.99
    if np.any(near_pi):
        out[near_pi] = rotvec_from_quat(matrix_to_quat(r[near_pi]))
    return out


def rotate_spatial(q: NDArray, dw: NDArray) -> NDArray:
    """Apply spatial incremental rotation vectors: ``q_new = exp(dw) q``; ``(n, 4), (n, 3)``."""
    return quat_normalize(quat_mul(quat_from_rotvec(dw), q))


def jl_inv_derivative(theta: NDArray, y: NDArray) -> NDArray:
    """Derivative ``d(jl_inv(theta) y)/dtheta`` at fixed ``y``: ``kh(theta, y) + hat(y)``.

    Shapes ``(..., 3), (..., 3) -> (..., 3, 3)``. ``jl_inv y = y - (theta x y)/2
    + eta (theta (theta.y) - y |theta|^2)`` differs from ``jl_inv^T y`` (:func:`kh`) only in the
    sign of the half cross product, whose derivative is ``hat(y)/2`` instead of ``-hat(y)/2``.
    """
    return kh(theta, y) + hat(y)


def half_spin(theta: NDArray) -> NDArray:
    """Spin of ``exp(hat(theta)/2) R0`` per spin of ``exp(hat(theta)) R0`` (``R0`` fixed).

    Shapes ``(..., 3) -> (..., 3, 3)``. A spin ``dw`` of the end rotation changes the rotation
    vector by ``jl_inv(theta) dw``, and the half rotation then turns by
    ``jl(theta/2) jl_inv(theta) dw / 2 = (I + exp(hat(theta)/2))^-1 dw``
    ``= (I - tan(t/4)/t hat(theta)) dw / 2`` with ``t = |theta|`` (functions of one ``hat(theta)``
    commute; on the axis the map is 1/2, in the plane normal to it ``1/(1 + exp(i t/2))``).
    The mid-point configuration of a time step moves by this map when Newton corrects the end.

    >>> th = np.array([0.3, -0.2, 0.5])
    >>> bool(np.allclose(half_spin(th), np.linalg.inv(np.eye(3) + expm(th / 2))))
    True
    """
    theta = np.asarray(theta, dtype=float)
    t = _angle(theta)
    small = t < 1e-6
    ts = np.where(small, 1.0, t)
    c = np.where(small, 0.25 + t * t / 192, np.tan(ts / 4) / ts)
    return 0.5 * (np.eye(3) - c[..., None, None] * hat(theta))


# --- the Cayley map ---------------------------------------------------------------------------

def cay(psi: NDArray) -> NDArray:
    """Cayley map ``(I - hat(psi)/2)^-1 (I + hat(psi)/2)``; ``(..., 3) -> (..., 3, 3)``.

    ``= I + 4/(4 + |psi|^2) (hat(psi) + hat(psi)^2/2)``: the rotation by ``2 atan(|psi|/2)``
    about ``psi``. It is what the mid-point rule does to a rigid chord, ``x1 - x0 = psi x
    (x0 + x1)/2`` (Crisfield & Shi's chord increment ``2 tan(dalpha/2)``).

    >>> psi = np.array([0.3, -0.2, 0.5])
    >>> bool(np.allclose(cay(psi), expm(log_cay(psi))))
    True
    """
    psi = np.asarray(psi, dtype=float)
    c = 4 / (4 + np.einsum("...i,...i->...", psi, psi))
    p = hat(psi)
    return np.eye(3) + c[..., None, None] * (p + 0.5 * (p @ p))


def cay_from_quat(q: NDArray) -> NDArray:
    """Cayley parameter ``psi = 2 tan(t/2) n`` of unit quaternions ``(..., 4) -> (..., 3)``.

    ``q = (cos(t/2), sin(t/2) n)``, so ``psi = 2 q_v / q_w`` (either sign of ``q``); infinite at
    a half turn, where the Cayley map has no inverse.
    """
    q = np.asarray(q, dtype=float)
    return 2 * q[..., 1:] / q[..., :1]


def log_cay(psi: NDArray) -> NDArray:
    """Rotation vector of ``cay(psi)``: ``2 atan(|psi|/2) psi/|psi|``; ``(..., 3) -> (..., 3)``."""
    psi = np.asarray(psi, dtype=float)
    p = _angle(psi)
    small = p < 1e-4
    ps = np.where(small, 1.0, p)
    f = np.where(small, 1 - p * p / 12, 2 * np.arctan(ps / 2) / ps)
    return f[..., None] * psi


def cay_inv_spin(psi: NDArray) -> NDArray:
    """``d psi / dw`` for a spatial spin ``dw`` of ``cay(psi) R0`` (``R0`` fixed); ``(..., 3, 3)``.

    ``I - hat(psi)/2 + psi psi^T/4``, from the quaternion form ``psi = 2 q_v/q_w`` and
    ``dq = (0, dw/2) q``; the inverse of ``4/(4 + |psi|^2) (I + hat(psi)/2)``.

    >>> psi, dw = np.array([0.3, -0.2, 0.5]), 1e-7 * np.array([1.0, 2.0, -1.0])
    >>> fd = cay_from_quat(matrix_to_quat(expm(dw) @ cay(psi))) - psi
    >>> bool(np.allclose(fd, cay_inv_spin(psi) @ dw, rtol=1e-5, atol=1e-13))
    True
    """
    psi = np.asarray(psi, dtype=float)
    return (np.eye(3) - 0.5 * hat(psi) + 0.25 * np.einsum("...i,...j->...ij", psi, psi))
