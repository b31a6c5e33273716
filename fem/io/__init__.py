"""Input and output: decks, meshes, the HDF5 results file and XDMF for ParaView."""
