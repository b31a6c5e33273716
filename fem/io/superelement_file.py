"""Writing the superelement file of a ``cms_reduce`` step, whole or not at all.

The file's layout, its version and its reader are the superelement family's
(:mod:`fem.elements.superelement`); a step hands the reduced data to its results writer
(:meth:`fem.io.hdf5.ResultsFile.write_superelement`), which writes it here under a temporary
name beside the target and moves it into place (:mod:`fem.io.files`).
"""

from __future__ import annotations

import datetime

import h5py

from fem import __version__
from fem.elements.superelement.group import FORMAT, VERSION, SuperelementData
from fem.errors import OutputError
from fem.io import files


def write(path: str, data: SuperelementData, source: str = "") -> None:
    """Write ``data`` to ``path`` whole or not at all (a temporary file, then a rename).

    Refused (:class:`~fem.errors.OutputError`) while another program has ``path`` open, as the
    results file is (:func:`fem.io.files.replace`): it would go on reading the replaced data.
    """
    if files.in_use(path):
        raise OutputError(f"the superelement file {path} is open in another program (h5py, "
                          "ParaView, or a fem run that reads it); it was not touched: close it "
                          "there and run again")
    tmp = files.temporary_beside(path, ".h5")
    with files.moved_into_place(tmp, path):
        with h5py.File(tmp, "w") as h5:
            a = h5.attrs
            a["format"], a["version"], a["dim"] = FORMAT, VERSION, data.dim
            a["method"], a["mass"], a["name"], a["units"] = (data.method, data.mass, data.name,
                                                             data.units)
            a["created"] = datetime.datetime.now().isoformat(timespec="seconds")
            a["fem_version"], a["source"] = __version__, source
            for path_, value in (("interface/node_ids", data.node_ids),
                                 ("interface/coordinates", data.coordinates),
                                 ("boundary/node", data.boundary_node),
                                 ("boundary/slot", data.boundary_slot),
                                 ("reduced/K", data.K), ("reduced/M", data.M),
                                 ("reduced/momentum", data.momentum),
                                 ("component/frequencies", data.frequencies),
                                 ("component/node_ids", data.component_ids),
                                 ("component/coordinates", data.component_coordinates),
                                 ("component/dofs", data.component_dofs),
                                 ("component/T", data.T),
                                 ("component/mass", data.component_mass),
                                 ("reduced/stiffening", data.stiffening),
                                 ("reduced/gravity", data.gravity),
                                 ("reduced/nonlinear_index", data.nonlinear_index),
                                 ("reduced/cubic", data.cubic),
                                 ("reduced/quartic", data.quartic),
                                 ("reduced/quartic_index", data.quartic_index)):
                if value is not None:
                    h5.create_dataset(path_, data=value)
            for t, c in (data.cells or {}).items():
                h5.create_dataset(f"component/cells/{t}", data=c)
