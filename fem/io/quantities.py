"""The names of what a nodal sensor or plot measures.

Apart from :mod:`fem.io.sensors` (which checks sensors against them) because the command line
builds ``fem plot``'s options from them, and this module imports nothing: the parser is built
before numpy loads, so that ``fem study -j N`` can still pin BLAS to one thread per process
(:func:`fem.study.runner.pin_threads` works only before numpy's BLAS starts its threads).
"""

NODE_QUANTITIES = ("displacement", "rotation", "velocity", "acceleration", "reaction",
                   "position")
