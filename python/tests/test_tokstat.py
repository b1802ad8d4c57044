"""The Python package against the command line: the same report, the same merge, the same
tables. Run by `.ci/run` on the wheel installed into a clean virtual environment;
`TOKSTAT_BIN` names the CLI to compare with (default: the debug build)."""

import concurrent.futures
import gzip
import json
import os
import pickle
import random
import subprocess
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import tokstat

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "fixtures"
BIN = os.environ.get("TOKSTAT_BIN", str(ROOT / "target" / "debug" / "tokstat"))
os.chdir(ROOT)  # the inputs' names are relative, as the CLI's are

# every fixture set: the bundled runs, and a folder of each kind of input
SETS = [
    ["fixtures/runs/demo"],
    ["fixtures/runs/completions"],
    ["fixtures/runs/fleet"],
    ["fixtures/runs/sglang-mrr"],
    ["fixtures/runs/vllm-c128"],
    ["fixtures/runs/vllm-c200"],
    ["fixtures/runs/demo", "fixtures/runs/completions"],
    ["fixtures/formats/sglang"],
    ["fixtures/formats/vllm"],
    ["fixtures/formats/prometheus"],
    ["fixtures/formats/completions"],
    ["fixtures/formats/bench"],
    ["fixtures/formats/incidents"],
    ["fixtures/formats/loadgen/cross-tool/aiperf-c8"],
    ["fixtures/formats/loadgen/cross-tool/guidellm-c8"],
]


def cli(*args, ok=(0, 1)):
    p = subprocess.run([BIN, *args], capture_output=True, text=True)
    assert p.returncode in ok, p.stderr
    return p


def cli_json(command, *args):
    quiet = ["-q"] if command == "report" else []
    return json.loads(cli(command, *args, "--format", "json", *quiet).stdout)


@pytest.mark.parametrize("inputs", SETS, ids=lambda s: "+".join(Path(i).name for i in s))
def test_report_equals_the_cli(inputs):
    want = cli_json("report", *inputs, "--year", "2026")
    assert tokstat.report(inputs, year=2026) == want


def test_options_are_the_flags():
    args = ["fixtures/runs/demo", "fixtures/runs/completions"]
    want = cli_json("report", *args, "--year", "2026", "--bucket", "1m", "--cap", "512")
    got = tokstat.report(args, year=2026, bucket="1m", cap=512)
    assert got == want
    assert got["timeline_bucket_s"] == 60.0
    # a number of seconds is a duration too
    assert tokstat.report(args, year=2026, bucket=60, cap=512) == want


def test_errors_carry_the_clis_messages():
    with pytest.raises(ValueError, match="expected a duration of at least 1s"):
        tokstat.report("fixtures/runs/demo", bucket="10ms")
    with pytest.raises(TypeError, match="unexpected keyword argument 'bukket'"):
        tokstat.report("fixtures/runs/demo", bukket="1m")
    with pytest.raises(tokstat.Error, match="no-such-file.log"):
        tokstat.report("no-such-file.log")
    with pytest.raises(tokstat.Error, match="nothing to report"):
        tokstat.report("fixtures/runs/completions.truth.txt")
    with pytest.raises(tokstat.Error, match="the saved read is damaged"):
        tokstat.Read.from_bytes(tokstat.read("fixtures/runs/demo").to_bytes()[:-9])


def _read_one(args):
    """A worker's partial read, handed back pickled (as its bytes)."""
    path, node = args
    return tokstat.read(path, node=node, year=2026)


def test_shuffled_partial_reads_merged_on_worker_processes_equal_the_whole():
    logs = sorted(str(p) for p in (FIX / "runs" / "fleet").glob("gpu*.log"))
    logs = [os.path.relpath(p, ROOT) for p in logs]
    whole = cli_json("report", *logs, "--year", "2026")
    tasks = [(p, f"node{k}") for k, p in enumerate(logs)]
    for seed in (1, 2, 3):
        random.Random(seed).shuffle(tasks)
        with concurrent.futures.ProcessPoolExecutor(2) as pool:
            parts = list(pool.map(_read_one, tasks))
        random.Random(seed + 10).shuffle(parts)
        merged = tokstat.merge(parts)
        assert merged.report() == whole, seed
    # a read given twice counts once, and is said
    again = tokstat.merge(parts + [pickle.loads(pickle.dumps(parts[0]))]).report()
    assert again["instances"] == whole["instances"]
    assert len(again["warnings"]) == 1 and "counted once" in again["warnings"][0]


def test_same_named_logs_of_two_nodes_are_two_instances():
    data = (FIX / "runs" / "fleet" / "gpu0.log").read_bytes()
    a = tokstat.read_bytes(data, "server.log", node="nodeA", year=2026)
    b = tokstat.read_bytes(data, "server.log", node="nodeB", year=2026)
    rep = tokstat.merge([b, a]).report()
    assert [i["instance"] for i in rep["instances"]] == ["nodeA/server", "nodeB/server"]
    # one node's two reads of one log over the same time: merged, and warned of
    c = tokstat.read_bytes(data + b"\n", "server.log", node="nodeA", year=2026)
    rep = tokstat.merge([a, c]).report()
    assert any("both hold its lines" in w for w in rep["warnings"])


def test_bytes_read_as_the_file():
    for rel in ["runs/fleet/gpu3.log", "runs/completions/batch_000.jsonl",
                "runs/completions/batch_002.jsonl.zst"]:
        path = FIX / rel
        data = path.read_bytes()
        want = tokstat.read(str(path), node="n", year=2026).report()
        got = tokstat.read_bytes(data, str(path), node="n", year=2026).report()
        assert got == want, rel
        # and compressed in memory
        if not rel.endswith(".zst"):
            got = tokstat.read_bytes(gzip.compress(data), str(path), node="n", year=2026)
            assert got.report()["lines"] == want["lines"], rel
    with pytest.raises(TypeError, match="bytes or bytearray"):
        tokstat.read_bytes("text", "a.log")


def test_a_read_travels_as_the_saved_read_format(tmp_path):
    part = tokstat.read(["fixtures/runs/demo", "fixtures/runs/completions"], node="nodeA",
                        year=2026)
    blob = part.to_bytes()
    header = json.loads(blob.split(b"\n", 1)[0])
    assert (header["format"], header["node"], header["run"]) == (3, "nodeA", "")
    assert part.run == "runs"  # the folder the inputs share, as no label was given
    back = tokstat.Read.from_bytes(blob)
    assert back.report() == part.report()
    assert pickle.loads(pickle.dumps(part)).report() == part.report()
    # the file an export saves is the same format: read either way
    out = tmp_path / "ds"
    cli("export", "-q", "--to", str(out), "--node", "nodeA", "--year", "2026",
        "fixtures/runs/demo", "fixtures/runs/completions", ok=(0,))
    saved = tokstat.Read.load(out / "_tokstat" / "read.bin")
    assert saved.report() == part.report() == tokstat.report(str(out))
    # the frozen format-1 read of the fixtures
    old = next((FIX / "saved" / "format-1").rglob("*.bin"))
    assert tokstat.Read.load(old).format == 1


def test_tables_equal_the_exports_parquet(tmp_path):
    inputs = ["fixtures/runs/demo", "fixtures/runs/completions"]
    out = tmp_path / "ds"
    cli("export", "-q", "--to", str(out), "--year", "2026", "--run", "demo", *inputs, ok=(0,))
    tables = tokstat.read(inputs, year=2026, steps=True, run="demo").tables()
    files = sorted(p.stem for p in out.glob("*.parquet"))
    assert sorted(tables) == files
    for name, table in tables.items():
        want = pq.read_table(out / f"{name}.parquet")
        assert table.schema.equals(want.schema), name
        assert table.equals(want), name
        assert table.schema.metadata[b"tokstat_table"] == name.encode()


def test_tables_go_to_polars_and_duckdb():
    tables = tokstat.read("fixtures/runs/demo", year=2026).tables()
    timeline = tables["timeline"]
    polars = pytest.importorskip("polars")
    df = polars.from_arrow(timeline)
    assert df.height == timeline.num_rows
    duckdb = pytest.importorskip("duckdb")
    n = duckdb.sql("select count(*) from timeline where instance is not null").fetchall()[0][0]
    assert n == sum(1 for v in timeline.column("instance").to_pylist() if v is not None)


def test_compare_equals_the_cli():
    a, b = "fixtures/runs/vllm-c128", "fixtures/runs/vllm-c200"
    want = cli_json("compare", f"c128={a}", f"c200={b}", "--year", "2026")
    assert tokstat.compare({"c128": a, "c200": b}, year=2026) == want
    # reads in memory compare as their inputs do
    ra, rb = tokstat.read(a, year=2026), tokstat.read(b, year=2026)
    assert tokstat.compare({"c128": ra, "c200": rb}) == want
    with pytest.raises(tokstat.Error, match="compare needs two runs"):
        tokstat.compare({"c128": ra})
