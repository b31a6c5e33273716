"""Internal force + tangent evaluation and assembly rate of 3D co-rotational beams.

For E = 1e3, 1e4, 1e5 elements: elements per second of (a) the vectorized element evaluation
(internal force and consistent tangent), (b) the assembly of both into the global vector and the
PETSc matrix (bincount into the fixed CSR pattern, ``setValuesCSR``). Baseline in the same run:
the same element routine called one element at a time (a Python loop over elements), at E = 1e3.
"""


from benchmarks.common import beam_chain, best_of
from fem import linalg
from fem.system import System


def evaluate(group, state):
    group.internal_force(state)
    group.tangent(state)


def looped(group, state, count):
    """The baseline: the same routines on one-element slices of the group."""
    from fem.elements import Beam

    p = group.props
    X = group.X
    for e in range(count):
        one = Beam("one", [[0, 1]], X[e], 3, formulation="corotational", ref=group.E0[e][:, 1],
                   **{k: p[k][e] for k in ("E", "G", "A", "Iy", "Iz", "J")})
        sub = state.copy()
        sub.u, sub.rot = state.u[group.conn[e]], state.rot[group.conn[e]]
        one.internal_force(sub)
        one.tangent(sub)


def main():
    print("3D co-rotational beams: element evaluation and assembly (elements per second)")
    print(f"{'elements':>9} {'evaluate':>12} {'assemble':>12} {'both':>12}")
    rates = {}
    for E in (1_000, 10_000, 100_000):
        model, state = beam_chain(E)
        group = model.groups[0]
        sysm = System(model)
        asm = sysm.assembler
        A = linalg.create_matrix(asm.indptr, asm.indices)
        fe, ke = group.internal_force(state), group.tangent(state)
        t_eval = best_of(lambda: evaluate(group, state))

        def assemble():
            asm.vector([fe])
            linalg.fill_matrix(A, asm.indptr, asm.indices, asm.matrix([ke]))

        t_asm = best_of(assemble)
        A.destroy()
        rates[E] = E / t_eval
        print(f"{E:>9} {E / t_eval:>12.3g} {E / t_asm:>12.3g} {E / (t_eval + t_asm):>12.3g}")
    model, state = beam_chain(1_000)
    group = model.groups[0]
    count = 200
    t_loop = best_of(lambda: looped(group, state, count), repeat=1) * (1_000 / count)
    print(f"baseline, one element at a time (E = 1e3): {1_000 / t_loop:.3g} elements/s; "
          f"vectorized is {rates[1_000] * t_loop / 1_000:.0f}x faster at 1e3, "
          f"{rates[100_000] * t_loop / 1_000:.0f}x at 1e5")
