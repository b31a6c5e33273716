"""The shell family: flat triangles, small-displacement or co-rotational (:class:`Shell`).

One folder, one registered family (``register("shell", Shell, deck)`` in
:mod:`fem.elements`): :mod:`~fem.elements.shell.group` the group (:class:`Shell`, the element
frames), :mod:`~fem.elements.shell.membrane` and :mod:`~fem.elements.shell.plate` the membrane
and plate parts, :mod:`~fem.elements.shell.laminate` laminated sections,
:mod:`~fem.elements.shell.corot` the co-rotational shell, :mod:`~fem.elements.shell.cells` its
cells, :mod:`~fem.elements.shell.results` its stresses and resultants,
:mod:`~fem.elements.shell.deck` the deck entry; the compiled pairs (:mod:`fem.kernels`):
``shell_jit`` dispatches to ``shell_kernel`` and the energy-conserving ``shell_ec_kernel``.
"""

from fem.elements.shell.group import Shell

__all__ = ["Shell"]
