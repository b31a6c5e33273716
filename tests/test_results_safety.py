"""Never lose or corrupt a result: refused runs, outputs that are inputs, full disks, readers
while a run writes, file sizes, drawable ParaView frames (issue "Trust", section 2).

Runs that meet another process (a second run, a reader, a program holding the file, a full disk)
are ``fem`` subprocesses; the others go through the same command line in this process
(:func:`results_checks.run_fem_here`), which saves an interpreter's start-up each."""

import hashlib
import os
import resource
import shutil
import subprocess
import sys
import textwrap
import time

import h5py
import numpy as np
import pytest
from results_checks import (
    assert_consistent,
    env,
    frame_counts,
    run_fem,
    run_fem_here,
    start_run,
    wait_for_frames,
)

BEAM = """
[model]
dim = 2

[[materials]]
name = "m"
E = 1000.0
nu = 0.3
density = 1.0

[[sections]]
name = "s"
A = 0.01
Iz = 1e-5

[nodes]
{nodes}

[[elements]]
name = "beam"
type = "beam"
formulation = "corotational"
material = "m"
section = "s"
{connect}

[[supports]]
nodes = 1
fixed = ["all"]
"""

STATIC = BEAM.format(nodes="coordinates = [[0, 0], [1, 0]]",
                     connect="connectivity = [[1, 2]]\ndivisions = 4") + """
[[loads]]
name = "P"
nodes = 2
force = [0, -1e-4]

[[steps]]
name = "load"
type = "static"
"""


def swinging(duration: float, time_step: float = 0.002) -> str:
    """A cantilever kicked sideways, many time steps, a frame each."""
    return BEAM.format(nodes="coordinates = [[0, 0], [1, 0]]",
                       connect="connectivity = [[1, 2]]\ndivisions = 8") + f"""
[[velocities]]
name = "kick"
nodes = 2
velocity = [0.0, 0.5]

[[steps]]
name = "swing"
type = "dynamic"
time_step = {time_step}
duration = {duration}
velocities = ["kick"]
"""


def _digest(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


@pytest.fixture
def deck(tmp_path):
    path = tmp_path / "deck.toml"
    path.write_text(STATIC)
    return path


# --- a refused run does not touch the existing file ---------------------------------------------

def test_output_open_in_another_program_is_refused_and_left_intact(deck, tmp_path):
    out = tmp_path / "out.h5"
    assert run_fem("run", str(deck), "-o", str(out)).returncode == 0
    before = _digest(out)
    # another process holds the file open (as ParaView or h5py would) until told to stop
    reader = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import sys, h5py
            f = h5py.File({str(out)!r}, "r")
            print("open", flush=True)
            sys.stdin.readline()
            print(f["steps/load/displacement"].shape[0], flush=True)
        """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env())
    try:
        assert reader.stdout.readline().strip() == "open"
        proc = run_fem("run", str(deck), "-o", str(out))
        assert proc.returncode == 2, proc.stderr
        assert "is open in another program" in proc.stderr
        assert "was not touched" in proc.stderr
        assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr
        assert _digest(out) == before               # not truncated, not rewritten
        reader.stdin.write("\n")
        reader.stdin.flush()
        assert int(reader.stdout.readline()) == 1    # the reader still reads its data
    finally:
        reader.kill()
        reader.wait()
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".out.h5")], \
        "the refused run left its temporary file behind"
    assert run_fem("run", str(deck), "-o", str(out)).returncode == 0   # once closed: fine


def test_second_run_on_the_output_of_a_running_one_is_refused(tmp_path):
    deck = tmp_path / "long.toml"
    deck.write_text(swinging(duration=4.0))
    out = tmp_path / "long.h5"
    log = tmp_path / "first.log"
    first = start_run(deck, out, log)
    try:
        wait_for_frames(log, 1)
        second = run_fem("run", str(deck), "-o", str(out))
        assert second.returncode == 2
        assert "is open in another program" in second.stderr
        first.send_signal(2)
        first.wait(timeout=60)
    finally:
        first.kill()
        first.wait()
    assert first.returncode == 130, log.read_text()
    assert assert_consistent(str(out), str(tmp_path / "long.xdmf")) > 0


# --- an output that is an input, and the .h5 suffix -------------------------------------------

def test_output_that_is_the_deck_is_refused(deck):
    text = deck.read_text()
    proc = run_fem_here("run", str(deck), "-o", str(deck.with_suffix(".h5")))
    assert proc.returncode == 0                       # deck.h5 beside deck.toml is fine
    for out in (str(deck), str(deck.with_suffix(".xdmf"))):
        proc = run_fem_here("run", str(deck), "-o", out)
        assert proc.returncode == 2, proc.stderr
        assert "expected a results file ending in .h5" in proc.stderr
    assert deck.read_text() == text


def test_output_that_is_the_mesh_is_refused(tmp_path):
    mesh = tmp_path / "frame.msh"
    mesh.write_text(textwrap.dedent("""\
        $MeshFormat
        2.2 0 8
        $EndMeshFormat
        $Nodes
        2
        1 0 0 0
        2 1 0 0
        $EndNodes
        $Elements
        1
        1 1 2 0 1 1 2
        $EndElements
        """))
    deck = tmp_path / "deck.toml"
    deck.write_text(STATIC.replace('coordinates = [[0, 0], [1, 0]]', 'mesh = "frame.msh"'))
    before = mesh.read_text()
    proc = run_fem_here("run", str(deck), "-o", str(mesh))
    assert proc.returncode == 2 and "ending in .h5" in proc.stderr
    assert mesh.read_text() == before
    # a mesh file (XDMF, read through meshio) that the XDMF beside the results would replace
    xmesh = tmp_path / "frame.xdmf"
    import meshio
    meshio.write(str(xmesh), meshio.read(str(mesh)))
    deck.write_text(STATIC.replace('coordinates = [[0, 0], [1, 0]]', 'mesh = "frame.xdmf"'))
    xbefore = xmesh.read_bytes()
    proc = run_fem_here("run", str(deck), "-o", str(tmp_path / "frame.h5"))
    assert proc.returncode == 2, proc.stderr
    assert "would overwrite its own input" in proc.stderr and "frame.xdmf" in proc.stderr
    assert xmesh.read_bytes() == xbefore


def test_output_without_suffix_gets_h5(deck, tmp_path):
    proc = run_fem_here("run", str(deck), "-o", str(tmp_path / "plain"))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "plain.h5").exists() and (tmp_path / "plain.xdmf").exists()


def test_xdmf_path_that_is_a_folder_is_refused_before_the_run(deck, tmp_path):
    (tmp_path / "out.xdmf").mkdir()
    proc = run_fem_here("run", str(deck), "-o", str(tmp_path / "out.h5"))
    assert proc.returncode == 2
    assert "out.xdmf" in proc.stderr and "not a regular file" in proc.stderr
    assert not (tmp_path / "out.h5").exists()


@pytest.mark.parametrize("name, content", [
    ("out.h5", b"my notes"), ("out.xdmf", b"<Xdmf><Domain/></Xdmf>"),
    ("out_lin.mat", None), ("out_lin_campbell.png", b"\x89PNG\r\n\x1a\n")],
    ids=["results", "xdmf", "matlab", "png"])
def test_a_file_fem_did_not_write_is_never_replaced(tmp_path, name, content):
    """issue 29, item 5: an existing file at a path a run writes (the results file, its XDMF, a
    linearize step's .mat, a sweep's PNG) that fem did not write is refused before the run,
    byte for byte intact; the files fem wrote are replaced by the next run."""
    import scipy.io

    from fem.io.files import ResultsFileError, results_path, written_by_fem

    mine = tmp_path / name
    if content is None:                         # a user's MATLAB file with their own variables
        scipy.io.savemat(str(mine), {"A": np.eye(2), "mydata": np.ones(3)})
    else:
        mine.write_bytes(content)
    before = _digest(mine)
    with pytest.raises(ResultsFileError, match="never replaces a file it did not write") as err:
        results_path(str(tmp_path / "out.h5"), [], ["lin"])
    assert name in str(err.value)
    assert _digest(mine) == before and not written_by_fem(str(mine), "out.h5")


def test_files_fem_wrote_are_recognized_and_replaced(tmp_path):
    """The .mat of a linearize step (marked), the XDMF and the results file of a run are fem's:
    a second run replaces them; a sweep's PNG plots carry fem's Software text."""
    from fem.io import plots
    from fem.io.files import png_text, written_by_fem

    deck = tmp_path / "lin.toml"
    deck.write_text(BEAM.format(nodes="coordinates = [[0, 0], [1, 0]]",
                                connect="connectivity = [[1, 2]]\ndivisions = 4")
                    + '\n[[steps]]\nname = "lin"\ntype = "linearize"\nmodes = 2\n'
                      'inputs = ["2 uy"]\noutputs = ["2 uy"]\n')
    out = tmp_path / "out.h5"
    for _ in range(2):
        proc = run_fem_here("run", str(deck), "-o", str(out))
        assert proc.returncode == 0, proc.stderr
    for path in (out, tmp_path / "out_lin.mat"):
        assert written_by_fem(str(path), "out.h5"), path
    png = tmp_path / "p.png"
    plots.stability(str(png), np.array([0.0, 1.0]), np.zeros(2), label="s")
    assert png_text(str(png))["Software"].startswith("fem ")
    assert written_by_fem(str(png), "out.h5")


# --- a full disk -------------------------------------------------------------------------------

def test_full_disk_stops_with_a_clear_message_and_a_consistent_file(tmp_path):
    deck = tmp_path / "long.toml"
    deck.write_text(swinging(duration=4.0))
    out = tmp_path / "full.h5"
    log = tmp_path / "full.log"
    run = start_run(deck, out, log)
    try:
        wait_for_frames(log, 3)
        # from now on no file of the run may grow past this size: writes fail with EFBIG, as on
        # a full disk (set on the running process: MPI's start-up needs larger files itself)
        limit = os.path.getsize(out) + 200_000
        resource.prlimit(run.pid, resource.RLIMIT_FSIZE, (limit, limit))
        run.wait(timeout=300)
    finally:
        run.kill()
        run.wait()
    said = log.read_text()
    assert run.returncode == 4, said
    assert "the disk is full or a file-size limit is reached" in said
    assert "internal error" not in said and "Traceback" not in said
    assert str(out) in said                          # says where the frames written are
    frames = assert_consistent(str(out), str(tmp_path / "full.xdmf"))
    assert 3 <= frames < 2001


# --- readers while a run writes -----------------------------------------------------------------

def test_results_can_be_read_while_the_run_writes_them(tmp_path):
    deck = tmp_path / "long.toml"
    deck.write_text(swinging(duration=4.0))
    out = tmp_path / "live.h5"
    log = tmp_path / "live.log"
    run = start_run(deck, out, log)
    try:
        wait_for_frames(log, 5)
        reads = []
        for _ in range(2):              # two readings, the second one sees more frames
            # a reader that meets a commit in progress gets an error and reads again (module
            # docstring of fem.io.hdf5); on a loaded machine a commit can take a while
            r = subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
                import time
                import h5py
                for attempt in range(10):
                    try:
                        with h5py.File({str(out)!r}, "r") as f:
                            s = f["steps/swing"]
                            line = (s["time"].shape[0], s["displacement"].shape[0],
                                    s["time"][-1], float(abs(s["displacement"][-1]).max()))
                        break
                    except OSError:
                        if attempt == 9:
                            raise
                        time.sleep(0.2)
                print(*line)
                """)], capture_output=True, text=True, env=env(), timeout=60)
            assert r.returncode == 0, r.stderr
            reads.append([float(x) for x in r.stdout.split()])
            time.sleep(1.0)
        # frames are committed (visible) at most every 0.5 s: some, not all five, may show
        assert reads[0][0] >= 1 and reads[0][0] == reads[0][1]
        assert reads[1][0] > reads[0][0]                 # the run went on while we read
        if shutil.which("h5dump"):                       # the HDF5 command-line tools too
            d = subprocess.run(["h5dump", "-H", str(out)], capture_output=True, text=True,
                               timeout=60)
            assert d.returncode == 0, d.stderr
            assert "swing" in d.stdout
        if shutil.which("pvpython"):                     # and ParaView, through the XDMF
            probe = tmp_path / "probe.py"
            probe.write_text(textwrap.dedent("""
                import sys
                from paraview import simple as pv
                r = pv.Xdmf3ReaderT(FileName=[sys.argv[1]])
                r.UpdatePipelineInformation()
                r.UpdatePipeline(r.TimestepValues[-1])
                print(len(r.TimestepValues), r.GetDataInformation().GetNumberOfPoints())
                """))
            p = subprocess.run(["pvpython", str(probe), str(tmp_path / "live.xdmf")],
                               capture_output=True, text=True, timeout=120)
            shown = [line.split() for line in p.stdout.splitlines() if len(line.split()) == 2]
            assert shown and int(shown[-1][0]) >= 1 and int(shown[-1][1]) == 9, p.stdout
        assert run.poll() is None, "the run was disturbed by the readers"
        run.send_signal(15)
        run.wait(timeout=60)
    finally:
        run.kill()
        run.wait()
    assert run.returncode == 143
    assert assert_consistent(str(out), str(tmp_path / "live.xdmf")) > reads[1][0]


# --- the file grows with the data ----------------------------------------------------------------

def test_file_size_is_a_small_multiple_of_the_data(tmp_path):
    """One static frame of a 12,000-element model in 40 groups (346 MB before the fix)."""
    groups, per = 40, 300
    nodes = [[0.0, 10.0 * g] for g in range(groups)] + [[1000.0, 10.0 * g] for g in range(groups)]
    parts = [BEAM.format(nodes=f"coordinates = {nodes}", connect="connectivity = [[1, 41]]")
             .split("[[elements]]")[0]]
    for g in range(groups):
        parts.append(f"""
[[elements]]
name = "g{g}"
type = "beam"
formulation = "linear"
material = "m"
section = "s"
connectivity = [[{g + 1}, {g + 41}]]
divisions = {per}
""")
    parts.append(f"""
[[supports]]
nodes = {list(range(1, groups + 1))}
fixed = ["all"]

[[loads]]
name = "P"
nodes = {list(range(groups + 1, 2 * groups + 1))}
force = [0, -1e-6]

[[steps]]
name = "load"
type = "static"
""")
    deck = tmp_path / "big.toml"
    deck.write_text("".join(parts))
    out = tmp_path / "big.h5"
    proc = run_fem_here("run", str(deck), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    data = 0
    with h5py.File(out, "r") as h5:
        def add(_, obj):
            nonlocal data
            if isinstance(obj, h5py.Dataset) and not obj.is_virtual:
                data += obj.size * obj.dtype.itemsize
        h5.visititems(add)
        assert sum(len(h5[f"model/groups/g{g}/connectivity"]) for g in range(groups)) == 12000
    size = os.path.getsize(out)
    assert size <= 1.5 * data + 2**20, f"{size / 1e6:.1f} MB for {data / 1e6:.1f} MB of data"


# --- every frame drawable in ParaView -----------------------------------------------------------

RELEASE = STATIC + """
[[steps]]
name = "release"
type = "dynamic"
remove = ["P"]
time_step = 0.01
duration = 0.05
"""


def test_series_times_strictly_increase_across_steps(tmp_path):
    deck = tmp_path / "two.toml"
    deck.write_text(RELEASE.replace('name = "load"\ntype = "static"',
                                    'name = "load"\ntype = "static"\nnonlinear = true\n'
                                    'increments = 2'))
    out = tmp_path / "two.h5"
    assert run_fem_here("run", str(deck), "-o", str(out)).returncode == 0
    assert assert_consistent(str(out), str(tmp_path / "two.xdmf")) == 2 + 6
    # the dynamic step's first frame takes the place of the static step's last in the series
    import xml.etree.ElementTree as ET
    grids = [g.get("Name") for g in ET.parse(tmp_path / "two.xdmf").getroot().iter("Grid")
             if g.find("Time") is not None]
    assert grids[:2] == ["load 0", "release 0"]


@pytest.mark.skipif(shutil.which("pvpython") is None, reason="ParaView (pvpython) not installed")
def test_paraview_draws_every_frame(tmp_path):
    deck = tmp_path / "two.toml"
    deck.write_text(RELEASE)
    out = tmp_path / "two.h5"
    assert run_fem_here("run", str(deck), "-o", str(out)).returncode == 0
    probe = tmp_path / "probe.py"
    probe.write_text(textwrap.dedent("""
        import sys
        from paraview import simple as pv
        r = pv.Xdmf3ReaderT(FileName=[sys.argv[1]])
        r.UpdatePipelineInformation()
        for t in r.TimestepValues:
            r.UpdatePipeline(t)
            print(t, r.GetDataInformation().GetNumberOfPoints())
        """))
    proc = subprocess.run(["pvpython", str(probe), str(tmp_path / "two.xdmf")],
                          capture_output=True, text=True, timeout=300)
    rows = [line.split() for line in proc.stdout.splitlines() if len(line.split()) == 2]
    assert len(rows) == 6, proc.stdout + proc.stderr
    assert all(int(n) == 5 for _, n in rows), rows            # 5 nodes drawn at every time


def test_frames_of_a_step_have_equal_counts_when_a_quantity_starts_late(tmp_path):
    """A dynamic step has no reactions at its initial frame: NaN there, not a shorter dataset."""
    deck = tmp_path / "two.toml"
    deck.write_text(RELEASE)
    out = tmp_path / "two.h5"
    assert run_fem_here("run", str(deck), "-o", str(out)).returncode == 0
    assert frame_counts(str(out))["release"] == {6}
    with h5py.File(out, "r") as h5:
        reaction = h5["steps/release/reaction"][()]
    assert np.all(np.isnan(reaction[0])) and np.all(np.isfinite(reaction[1:]))
