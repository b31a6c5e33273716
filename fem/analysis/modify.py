"""The ``modify`` step: Hutton-Smith design modification of the deck's model (issue 13, item 4).

Hutton & Smith ("Modification of flexible body dynamics using substructures"), in the digest
``notes/cms_constraints.md`` A.3-A.6, on the Python API :mod:`fem.cms.modification`. About the
reference configuration of the deck's model:

1. The model is split into ``components``, each a list of the deck's element groups (every group
   in exactly one). The interface is found: the nodes of two or more components; every free DOF
   of them is a boundary unknown of each component holding it. Each component (its groups, the
   deck's supports, the point masses of its nodes: one at an interface node belongs to the first
   component in ``components`` order that holds it) is reduced by the free-interface method
   (:func:`fem.cms.free_interface.free_interface`: free-free modes, rigid-body modes included,
   ``modes`` of them or all up to ``cutoff`` rad/s, plus residual attachment modes) and the
   components are coupled with the interface forces eliminated
   (:func:`~fem.cms.free_interface.couple_free_interface`, eq. (3)): ``u = T p``, ``r`` modes.
   With ``method = "craig_bampton"`` each is reduced by Craig-Bampton instead
   (:func:`fem.cms.craig_bampton.craig_bampton`: ``modes`` fixed-interface modes or those up to
   ``cutoff``, plus the constraint modes) and assembled on the interface unknowns
   (:func:`fem.cms.coupling.couple`).
2. The coupled model's baseline modes (all ``r``) are the basis ``Z`` of every re-analysis
   (:func:`fem.cms.modification.design_model`); eq. (8) gives the sensitivities of the modes
   ``sensitivity_modes`` (default: the first 6 elastic ones) to every component's density and
   modulus, normalized as Table 2 of the paper: ``(rho_c / lambda) d lambda / d rho_c`` (minus the
   component's share of the mode's kinetic energy; summed over the components, -1) and ``(E_c /
   lambda) d lambda / d E_c`` (its share of the strain energy, +1). A "density" is the whole mass
   of the component (its element masses and point masses), a "modulus" its whole stiffness.
3. With ``parameters`` (design parameters ``{component, kind}``) and ``alpha`` (their fractional
   changes: the property times ``1 + alpha``), the forward modification, eq. (12); with
   ``targets`` instead, the inverse modification, eqs. (13)/(14): the ``alpha`` that move modes
   to target frequencies (one parameter and one target: the real roots of eq. (14), the smallest
   physical one that puts the target at its mode polished by Newton; else minimum-norm Newton).

``T`` is held fixed throughout (it is not recomputed for the modified components): exact for
density changes (a density only rescales a component's free modes, so the span of ``T`` is
unchanged: the result is the CMS re-analysis), approximate for modulus changes with the free
interface (``T`` would change; notes A.4, A.5), exact for both with Craig-Bampton (neither the
constraint modes nor the span of the fixed-interface modes changes when a component's whole
stiffness or mass is scaled: :mod:`fem.cms.modification`). The summary says which.

Mode numbers (``sensitivity_modes``, ``targets[].mode``, the summary, the results) are 1-based
positions among all the coupled model's modes in ascending order, rigid-body modes included, as
a modal step numbers them: on a free-free planar model mode 4 is the first elastic one.

Written to ``/cms/<step>/``: ``components`` (names), ``component_modes`` and
``component_rigid`` (free-free modes kept, rigid-body ones among them), ``interface_node_ids``,
``baseline_eigenvalues`` (omega^2) and ``baseline_frequencies`` (rad/s), ``sensitivity_modes``,
``sensitivity_frequencies``, ``sensitivities`` (k, N, 2) (the normalized shares; last axis
``sensitivity_kinds`` = density, modulus), ``derivatives`` (k, N, 2) (``d lambda / d alpha``);
when modified: ``modified_eigenvalues``, ``modified_frequencies``, ``change_percent`` (NaN for
rigid-body modes), ``parameter_components``, ``parameter_kinds``, ``alpha``, ``scale`` (``1 +
alpha``); inverse: ``target_modes``, ``target_frequencies``, ``achieved_frequencies``,
``tracked_modes`` (where each target's mode ended), one parameter and one target also
``candidates`` (the physical roots of eq. (14)) and ``candidate_modes`` (where each put the
target; 0: nowhere); attributes ``analysis`` (sensitivity, forward or inverse), ``mass``,
``n_modes``, ``n_rigid``, ``T_fixed`` (1), ``exact`` (1 when only densities change),
``approximation``, ``mode_numbering``, and for the inverse ``iterations`` and ``residual``. The
modified modes (the baseline ones without ``parameters``) recovered on the model's nodes, ``T Z
c``, the lowest ``output_modes`` of them, go to ``/modes/<step>/`` and ParaView
(``<out>_<step>_modes.xdmf``, ``<out>_<step>_vibration.xdmf``) as a modal step's do.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from numpy.typing import NDArray

from fem import interrupt
from fem.analysis import modify_deck
from fem.analysis.base import StepBase, options_prefix
from fem.analysis.modify_deck import ModifySettings, Part
from fem.cms import KINDS
from fem.cms.component import node_dofs
from fem.cms.coupling import couple
from fem.cms.craig_bampton import craig_bampton
from fem.cms.free_interface import couple_free_interface, free_interface
from fem.cms.modification import (
    RIGID,
    DesignModel,
    Modified,
    design_model,
    forward,
    inverse,
    sensitivities,
)
from fem.errors import ConvergenceError, DeckError, ModelError

SENSITIVITY_MODES = 6      # the elastic modes tabulated by default
SUMMARY_MODES = 10         # frequencies listed in the summary (at least)


def frequencies(omega2: NDArray) -> NDArray:
    """Circular frequencies ``sign(omega^2) sqrt(|omega^2|)`` (rigid-body round-off: near 0)."""
    return np.sign(omega2) * np.sqrt(np.abs(omega2))


class ModifyStep(StepBase):
    """Design modification of the deck's model; see the module docstring."""

    step_type = "modify"
    Settings = ModifySettings
    NO_LOADS = "it analyses the model about its reference configuration"
    WRITES = ("modes", "vibration")
    NEEDS = ("mass",)            # a stiffness and a mass from every group

    check = staticmethod(modify_deck.check)

    def __init__(self, name, system, loads, settings: ModifySettings, solver_options=None):
        super().__init__(name, system, loads, solver_options)
        self.settings = settings
        self.dm: DesignModel | None = None
        self.counts: list[tuple[int, int]] = []     # per component: modes kept, rigid ones
        self.n_rigid = 0
        self.sensitivity = None
        self.modified: Modified | None = None
        self.analysis = "sensitivity"
        self.shapes = np.zeros((0,))
        self.xdmf = None
        self._subs = []                              # per component, its System

    # --- the coupled model ----------------------------------------------------------------------
    def component(self, part: Part):
        """The component's :class:`~fem.system.System`: its groups and point masses."""
        from fem.system import System

        model = self.system.model
        masses = tuple(dataclasses.replace(model.masses[i], nodes=np.asarray(nodes))
                       for i, nodes in part.masses)
        return System(model.with_changes(groups=tuple(g for g in model.groups
                                                      if g.name in part.groups),
                                         constraints=(), masses=masses))

    def couple(self) -> DesignModel:
        """Reduce every component, couple them, project on the baseline modes (docstring)."""
        s, model = self.settings, self.system.model
        ids = model.node_ids[np.asarray(s.interface, dtype=np.int64)]
        reduced, labels, matrices = [], [], []
        for part in s.parts:
            interrupt.check()
            sub = self.component(part)
            ref = sub.reference_state()
            K = sub.assembler.to_scipy(sub.tangent(ref)).tocsr()
            M = sub.assembler.to_scipy(sub.mass(ref, lumped=s.mass == "lumped")).tocsr()
            mine = ids[np.isin(ids, model.node_ids[np.unique(np.concatenate(
                [model.group(g).conn.ravel() for g in part.groups]))])]
            b, lab = node_dofs(sub, mine)
            if len(b) == 0:
                raise ModelError(f"step '{self.name}': component '{part.name}': its interface "
                                 f"nodes {mine.tolist()} have no free DOF (all supported): "
                                 "it is not coupled to the others")
            tag = options_prefix(f"{self.name} {part.name}")[:-1]
            reduce = craig_bampton if s.method == "craig_bampton" else free_interface
            try:
                c = reduce(K, M, b, modes=part.modes, cutoff=part.cutoff, name=tag,
                           solver_options=self.solver_options)
            except (ModelError, DeckError) as err:
                text = str(err).replace(f"component '{tag}': ", "")
                raise ModelError(f"step '{self.name}': component '{part.name}': {text}"
                                 ) from None
            c.name = part.name
            reduced.append(c)
            labels.append(lab)
            matrices.append((K, M))
            self.counts.append((len(c.omega2), getattr(c, "n_rigid", 0)))
            self._subs.append(sub)
        try:
            coupled = (couple(reduced, labels) if s.method == "craig_bampton"
                       else couple_free_interface(reduced, labels))
            dm = design_model(coupled, matrices)
        except ModelError as err:
            raise ModelError(f"step '{self.name}': {err}") from None
        w2 = dm.omega2
        self.n_rigid = int(np.count_nonzero(w2 <= RIGID * np.abs(w2).max()))
        return dm

    # --- checks that need the coupled model --------------------------------------------------
    def _positions(self, modes, key: str) -> NDArray:
        """0-based positions of the 1-based ``modes``, each an elastic mode of the model."""
        r, where = len(self.dm.omega2), self.settings.where
        pos = np.asarray(modes, dtype=np.int64) - 1
        for j, p in enumerate(pos):
            k = key.format(j=j)
            if p >= r:
                raise DeckError(f"{where}.{k}", f"the coupled model has {r} modes (the "
                                f"components' kept modes), got mode {p + 1}; keep more modes "
                                "per component")
            if p < self.n_rigid:
                rigid = f"modes 1 to {self.n_rigid}" if self.n_rigid > 1 else "mode 1"
                raise DeckError(f"{where}.{k}", f"mode {p + 1} is a rigid-body mode ({rigid}, "
                                "omega = 0): it has no sensitivity and no frequency to move; "
                                f"the first elastic mode is {self.n_rigid + 1}")
        return pos

    # --- the step -------------------------------------------------------------------------------
    def run(self, state, results):
        """Reduce, couple, tabulate, modify; write ``/cms/<step>/`` and the modes."""
        if np.any(state.u != 0) or np.any(state.dof_values()[:, state.dim:] != 0):
            self.warn("the model is reduced about its reference configuration; the "
                      "displacements of the steps before are not in it")
        s = self.settings
        dm = self.dm = self.couple()
        interrupt.check()
        r, N = len(dm.omega2), len(s.parts)
        if s.sensitivity_modes is not None:
            sens = self._positions(s.sensitivity_modes, "sensitivity_modes")
        else:
            sens = np.arange(self.n_rigid, min(self.n_rigid + SENSITIVITY_MODES, r))
        if len(sens):
            spec = [(c, k) for k in KINDS for c in range(N)]
            self.sensitivity = sensitivities(dm, spec, sens)
        design = list(s.design)
        try:
            if s.alpha is not None:
                self.analysis = "forward"
                self.modified = forward(dm, design, s.alpha)
            elif s.targets is not None:
                self.analysis = "inverse"
                pos = self._positions([t["mode"] for t in s.targets], "targets[{j}].mode")
                lam = np.array([float(t["frequency"]) ** 2 for t in s.targets])
                self.modified = inverse(dm, design, pos, lam, tol=s.tolerance,
                                        max_iterations=s.max_iterations, first=1)
        except ModelError as err:
            raise ModelError(f"step '{self.name}': {err}") from None
        except ConvergenceError as err:
            raise ConvergenceError(f"step '{self.name}': {err}") from None
        omega2, C = (self.modified.omega2, self.modified.C) if self.modified is not None \
            else (dm.omega2, np.eye(r))
        k = min(s.output_modes, r)
        self.shapes = self._recover(C[:, :k])
        if results is not None:
            self._write_results(results, omega2[:k])
        return state

    def _recover(self, C: NDArray) -> NDArray:
        """(k, n, nslots) the modes ``T Z c`` on the model's nodes (interface: any component)."""
        model = self.system.model
        shapes = np.zeros((C.shape[1], model.n_nodes, model.nslots))
        for sub, U in zip(self._subs, self.dm.recover(C), strict=True):
            index = sub.dofmap.index
            free = (index >= 0) & (index < sub.n_free)
            node, slot = np.nonzero(free)
            shapes[:, node, slot] = U[index[node, slot]].T
        return shapes

    # --- results ------------------------------------------------------------------------------
    def exact(self) -> bool:
        """Whether T fixed is exact: Craig-Bampton, or density changes only."""
        return (self.settings.method == "craig_bampton"
                or all(kind == "density" for _, kind in self.settings.design))

    def _write_results(self, results, omega2: NDArray) -> None:
        s, dm, model = self.settings, self.dm, self.system.model
        names = np.array([p.name for p in s.parts])
        w0 = frequencies(dm.omega2)
        data = {"components": names,
                "component_modes": np.array([m for m, _ in self.counts]),
                "component_rigid": np.array([r for _, r in self.counts]),
                "interface_node_ids": model.node_ids[np.asarray(s.interface, dtype=np.int64)],
                "baseline_eigenvalues": dm.omega2, "baseline_frequencies": w0,
                "sensitivity_kinds": np.array(KINDS)}
        if self.sensitivity is not None:
            sv, N = self.sensitivity, len(s.parts)
            data.update({"sensitivity_modes": sv.modes + 1,
                         "sensitivity_frequencies": w0[sv.modes],
                         "sensitivities": sv.share.reshape(-1, 2, N).transpose(0, 2, 1),
                         "derivatives": sv.derivative.reshape(-1, 2, N).transpose(0, 2, 1)})
        attrs = {"analysis": self.analysis, "mass": s.mass, "n_modes": len(dm.omega2),
                 "n_rigid": self.n_rigid, "T_fixed": 1, "exact": int(self.exact()),
                 "approximation": self.approximation(),
                 "mode_numbering": "1-based positions among all modes, ascending, rigid-body "
                                   "modes included"}
        mod = self.modified
        if mod is not None:
            data.update({"modified_eigenvalues": mod.omega2,
                         "modified_frequencies": frequencies(mod.omega2),
                         "change_percent": self.change_percent(),
                         "parameter_components": names[[c for c, _ in s.design]],
                         "parameter_kinds": np.array([k for _, k in s.design]),
                         "alpha": mod.alpha, "scale": 1 + mod.alpha})
        if self.analysis == "inverse":
            data.update({"target_modes": np.array([t["mode"] for t in s.targets]),
                         "target_frequencies": np.array([float(t["frequency"])
                                                         for t in s.targets]),
                         "achieved_frequencies": frequencies(mod.omega2[mod.modes]),
                         "tracked_modes": mod.modes + 1})
            attrs.update({"iterations": mod.iterations, "residual": mod.residual})
            if mod.candidates is not None:
                data.update({"candidates": mod.candidates, "candidate_modes": mod.positions + 1})
        results.write_linear(self.name, data, {}, attrs, group="cms")
        w = frequencies(omega2)
        hz = w / (2 * np.pi)
        self.xdmf = results.write_modes(
            self.name, "modify", omega2, self.shapes,
            attrs={"quantity": "omega^2", "mass": s.mass, "modified": int(mod is not None)},
            extra={"frequencies": w, "hertz": hz},
            labels=[f"mode {i + 1}: {f:.6g} Hz" for i, f in enumerate(hz)], vibration=True)

    def change_percent(self) -> NDArray:
        """(r,) ``100 (omega* / omega - 1)`` per mode; NaN for the rigid-body modes."""
        w0, w = frequencies(self.dm.omega2), frequencies(self.modified.omega2)
        out = np.full(len(w0), np.nan)
        out[self.n_rigid:] = 100 * (w[self.n_rigid:] / w0[self.n_rigid:] - 1)
        return out

    def approximation(self) -> str:
        """What holding ``T`` fixed means for this modification."""
        if self.settings.method == "craig_bampton":
            return ("T held fixed: exact for density and modulus changes (Craig-Bampton: the "
                    "re-reduced basis spans the same space; the CMS re-analysis)")
        if self.modified is not None and not self.exact():
            return ("T held fixed: modulus changes are approximate (T would change with the "
                    "stiffness); check with a modal step of the modified deck")
        return "T held fixed: exact for density changes (the CMS re-analysis)"

    def summary(self) -> list[str]:
        """Lines for the run summary: frequencies, alphas, targets, sensitivities, T fixed."""
        s, r = self.settings, len(self.dm.omega2)
        kept = "{} {} fixed-interface" if s.method == "craig_bampton" else "{} {} ({} rigid)"
        parts = ", ".join(kept.format(p.name, m, q)
                          for p, (m, q) in zip(s.parts, self.counts, strict=True))
        lines = [f"{s.method.replace('_', ' ')}, {s.mass} mass: modes kept {parts}; "
                 f"{len(s.interface)} interface node{'s' if len(s.interface) != 1 else ''}; "
                 f"coupled model {r} modes, "
                 f"{self.n_rigid} rigid-body"]
        lines += self._frequency_lines()
        if self.analysis == "inverse":
            lines += self._inverse_lines()
        lines += self._sensitivity_lines()
        lines.append(self.approximation())
        return lines

    def _frequency_lines(self) -> list[str]:
        """Baseline (and modified) frequencies of the modes up to the highest of interest."""
        s, mod = self.settings, self.modified
        w0, q = frequencies(self.dm.omega2), self.n_rigid
        wanted = [SUMMARY_MODES - 1]                  # the highest mode listed, 0-based
        if self.sensitivity is not None:
            wanted += self.sensitivity.modes.tolist()
        if self.analysis == "inverse":
            wanted += mod.modes.tolist()
        shown = min(max(wanted) + 1, len(w0))
        lines = []
        if mod is not None:
            lines.append(f"{self.analysis} modification: baseline -> modified frequency, "
                         "rad/s (change)")
        if q:
            w = np.abs(w0[:q]).max()
            if mod is not None:
                w = max(w, np.abs(frequencies(mod.omega2[:q])).max())
            lines.append(f"mode{'s 1 to' if q > 1 else ''} {q}: rigid-body (|omega| <= "
                         f"{w:.2g} rad/s: round-off)")
        if mod is None:
            return lines + [f"mode {i + 1}: {w0[i]:.6g} rad/s ({w0[i] / (2 * np.pi):.6g} Hz)"
                            for i in range(q, shown)]
        w, pct = frequencies(mod.omega2), self.change_percent()
        lines += [f"mode {i + 1}: {w0[i]:.6g} -> {w[i]:.6g} ({pct[i]:+.4g} %)"
                  for i in range(q, shown)]
        return lines + [f"alpha {s.parts[c].name} {kind}: {a:+.6g} (x {1 + a:.6g})"
                        for (c, kind), a in zip(s.design, mod.alpha, strict=True)]

    def _inverse_lines(self) -> list[str]:
        """Each target and where it was reached; Newton; the roots of eq. (14)."""
        mod = self.modified
        w = frequencies(mod.omega2)
        lines = [f"target: mode {t['mode']} to {t['frequency']:.10g} rad/s: reached "
                 f"{w[p]:.10g} rad/s at mode {p + 1}"
                 for t, p in zip(self.settings.targets, mod.modes.tolist(), strict=True)]
        lines.append(f"Newton: {mod.iterations} iterations, max |omega^2 - target^2| / "
                     f"target^2 = {mod.residual:.3g}")
        if mod.candidates is not None:
            lines.append("physical roots of eq. (14): " + ", ".join(
                f"alpha = {a:.6g} (target at " + (f"mode {p + 1})" if p >= 0 else "no mode)")
                for a, p in zip(mod.candidates, mod.positions.tolist(), strict=True)))
        return lines

    def _sensitivity_lines(self) -> list[str]:
        """The table of normalized sensitivities (Hutton & Smith's Table 2)."""
        sv, parts = self.sensitivity, self.settings.parts
        if sv is None:
            return []
        w0, N = frequencies(self.dm.omega2), len(parts)
        lines = ["sensitivities of the baseline modes, eq. (8): per component rho = "
                 "(rho/lambda) dlambda/drho (minus its share of kinetic energy), E = (E/lambda) "
                 "dlambda/dE (its share of strain energy):"]
        return lines + [f"mode {m + 1} ({w0[m]:.6g} rad/s): " + ", ".join(
            f"{p.name} rho {sv.share[i, c]:+.4f} E {sv.share[i, N + c]:+.4f}"
            for c, p in enumerate(parts)) for i, m in enumerate(sv.modes)]
