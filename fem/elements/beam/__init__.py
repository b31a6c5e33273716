"""The beam family: 2D and 3D beams, linear or co-rotational, in one group (:class:`Beam`).

One folder, one registered family (``register("beam", Beam, deck)`` in
:mod:`fem.elements`):

* :mod:`~fem.elements.beam.group` the group (:class:`Beam`: evaluate, energy, mass, outputs,
  the energy-conserving step), :mod:`~fem.elements.beam.basic` the basic beams (the frame-free
  response), :mod:`~fem.elements.beam.frames2d` and :mod:`~fem.elements.beam.frames3d` the
  co-rotational frames, :mod:`~fem.elements.beam.offsets` rigid end offsets,
  :mod:`~fem.elements.beam.interior` interior modes, :mod:`~fem.elements.beam.mass` the
  consistent mass, :mod:`~fem.elements.beam.deck` the deck entry;
* the compiled pairs (:mod:`fem.kernels`): ``beam2d_jit`` / ``beam3d_jit`` dispatch to
  ``beam2d_kernel`` / ``beam3d_kernel`` and the energy-conserving ``beam2d_ec_kernel`` /
  ``beam3d_ec_kernel``.
"""

from fem.elements.beam.group import Beam

__all__ = ["Beam"]
