"""The `spacetp` command: the example runs, and every kind of bad input gives exit code 2 and
one clear line, never a traceback."""

import json

import pytest

from conftest import EXAMPLES

ASYM = str(EXAMPLES / "asymmetry.toml")


def test_run_prints_a_summary_and_writes_json(cli, tmp_path):
    out = tmp_path / "a.json"
    r = cli("run", ASYM, "--json", str(out))
    assert r.returncode == 0, r.stderr
    assert "newreno" in r.stdout and "goodput" in r.stdout
    d = json.loads(out.read_text())
    assert d["flows"][0]["bytes_delivered"] == 5_000_000


def run_json(cli, tmp_path, seed: int, name: str) -> dict:
    """`spacetp run` of the asymmetry example with random losses (PER 1%) and `seed`: the
    JSON it writes, as text."""
    out = tmp_path / name
    r = cli("run", ASYM, "--set", 'links[1].delay="150 ms"', "--set", "links[1].errors.per=0.01",
            "--seed", str(seed), "--json", str(out), "-q")  # fmt: skip
    assert r.returncode == 0, r.stderr
    return out.read_text()


def test_the_same_seed_gives_the_same_run_and_another_seed_another(cli, tmp_path):
    a, b, a2 = (run_json(cli, tmp_path, seed, f"{i}.json") for i, seed in enumerate((5, 6, 5)))
    assert a == a2, "the same seed: bit-identical JSON"
    a, b = json.loads(a), json.loads(b)
    assert (a["run"]["seed"], b["run"]["seed"]) == (5, 6)
    assert a["flows"][0]["min_rtt_s"] > 0.3  # the --set delay
    for d in (a, b):
        assert d["flows"][0]["complete"] and d["links"][2]["error_drops"] > 0
    drops = [d["links"][2]["error_drops"] for d in (a, b)]
    assert drops[0] != drops[1] and a["flows"][0] != b["flows"][0], drops


def test_trace_files(cli, tmp_path):
    r = cli("run", ASYM, "--trace", str(tmp_path / "t.csv"), "--trace-interval", "5 s", "-q")
    assert r.returncode == 0, r.stderr
    lines = (tmp_path / "t.csv").read_text().splitlines()
    assert lines[0] == "time_s,flow,cwnd,ssthresh,srtt_s,flight,snd_max,snd_una,delivered"
    assert len(lines) > 20
    assert (tmp_path / "t-segments.csv").exists()


def _write(tmp_path, text):
    p = tmp_path / "s.toml"
    p.write_text(text)
    return str(p)


BASE = (EXAMPLES / "asymmetry.toml").read_text()


@pytest.mark.parametrize(
    "text, args, expected",
    [
        (BASE.replace('delay = "50 ms"', 'dealy = "50 ms"'), [], "unknown field `dealy`"),
        (BASE.replace('"5 kb/s"', '"5 kbit"'), [], 'links[1].rate_back: "5 kbit" is not a rate'),
        (BASE.replace('"5 kb/s"', '"-5 kb/s"'), [], "links[1].rate_back"),
        (
            BASE.replace("queue = { bdp = 1.0 }", "queue = { bdp = 1.0 }\nerrors = { ber = 1.5 }"),
            [],
            "links[1].errors.ber: 1.5 must be in [0, 1)",
        ),
        (BASE.replace('["router", "server"]', '["router", "srv"]'), [], 'unknown node "srv"'),
        (
            BASE.replace('to = "server"', 'to = "island"') + '[[nodes]]\nname = "island"\n',
            [],
            'no route from "client" to "island"',
        ),
        ("", [], "the scenario is empty"),
        ("[[nodes]\n", [], "not valid TOML"),
        (BASE, ["--set", "links[1].no_such_field=3"], "no field `no_such_field`"),
        (BASE, ["--set", "links[9].delay=3"], "no [9]"),
        (BASE, ["--set", "nodelay"], "use PATH=VALUE"),
        (BASE, ["--pcap", "7=x.pcap"], "--pcap 7: there are 2 links"),
        (BASE, ["--pcap", "x.pcap"], "use LINK=FILE"),
        (BASE, ["--trace", "t.txt"], "use a .csv or .parquet"),
        (BASE.replace('protocol = "newreno"', 'protocol = "tcp-x"'), [], "unknown protocol"),
    ],
)
def test_bad_input_is_one_clear_line(cli, tmp_path, text, args, expected):
    r = cli("run", _write(tmp_path, text), *args, cwd=tmp_path)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr and "panicked" not in r.stderr
    assert expected in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_an_unknown_protocol_lists_every_protocol_a_flow_takes(cli, tmp_path):
    # TCP and SCPS-TP profiles, QUIC's, LTP and bp: from their registries, not by hand
    import spacetp

    r = cli("run", _write(tmp_path, BASE.replace('"newreno"', '"tcp-x"')), cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    listed = r.stderr.strip().split("known: ", 1)[1].split(", ")
    assert set(listed) == set(spacetp.protocols())
    assert {"quic", "quic-cubic", "quic-newreno", "quic-bbr", "ltp", "bp", "cfdp"} <= set(listed)
    # a workload's list has no ltp or bp (they carry [[flows]] only) and says so
    wl = (
        BASE.split("[[flows]]")[0]
        + '[[workloads]]\nkind = "file_requests"\nclients = ["client"]\nserver = "server"\n'
        'protocol = "ltp"\ncount = 2\nsize = { constant = "10 kB" }\n'
        'interval = { constant = "1 s" }\n'
    )
    r = cli("validate", _write(tmp_path, wl), cwd=tmp_path)
    assert r.returncode == 2 and "workloads[0].protocol: unknown protocol" in r.stderr, r.stderr
    assert "quic-bbr" in r.stderr and "(ltp and bp carry [[flows]] only)" in r.stderr


def test_version(cli):
    from importlib.metadata import version

    r = cli("--version")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"spacetp {version('spacetp')}"


def test_missing_file(cli, tmp_path):
    r = cli("run", str(tmp_path / "nope.toml"))
    assert r.returncode == 2 and "no such file" in r.stderr


def test_protocols_and_schema(cli):
    r = cli("protocols")
    assert r.returncode == 0 and "newreno" in r.stdout
    r = cli("schema")
    assert r.returncode == 0
    assert "rate_back" in json.loads(r.stdout)["definitions"]["LinkCfg"]["properties"]


GATEWAY = ["gateway", "--check", "--forward-original"]


@pytest.mark.parametrize(
    "args, expected",
    [
        (["run", "--seed", "abc", ASYM], "Invalid value for '--seed'"),
        (["run", "--no-such-option", ASYM], "No such option"),
        (["no-such-command"], "No such command"),
        # Printed as written: rich took `[abc]` for a style tag, `:b:` for an emoji.
        (["run", ASYM, "--set", "links[abc].delay=3"], "--set links[abc].delay"),
        (["model", "pftk", "--rtt", "0.1", "--sweep", "x"], "NAME=a:b:logN"),
        (GATEWAY + ["--drain", "-1"], "--drain -1: must be a number of seconds >= 0"),
        (GATEWAY + ["--after-crash", "half"], "--after-crash half: use one of open, closed"),
        (["gateway", "--cleanup"], "--cleanup needs --tun NAME"),
    ],
)
def test_usage_errors_exit_2_without_traceback(cli, args, expected):
    r = cli(*args)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr and expected in r.stderr


def _help_texts() -> list[tuple[str, str]]:
    """(where, text) for the help of every command and option, as written (rich markup)."""
    import typer

    from spacetp.cli import app

    found = []

    def walk(cmd, path: str) -> None:
        found.append((path, cmd.help or ""))
        for p in cmd.params:
            found.append((f"{path} {p.name}", getattr(p, "help", None) or ""))
        for name, sub in getattr(cmd, "commands", {}).items():
            walk(sub, f"{path} {name}")

    walk(typer.main.get_command(app), "spacetp")
    return found


def test_help_texts_print_as_written(cli):
    # Rich markup once ate "[[links]]" from `spacetp emulate --help` ("A [] entry") and
    # "[flows.tcp]" from `schema --help`, and made an emoji of ":b:" in "a:b:linN".
    from rich.text import Text

    texts = _help_texts()
    assert len(texts) > 50, texts  # every command and its options
    for where, text in texts:
        assert Text.from_markup(text).plain == text.replace("\\[", "["), where
    assert "A [[links]] entry" in cli("emulate", "--help").stdout
    assert "A transport's [flows.KEY] settings" in cli("schema", "--help").stdout
    assert "START:STOP:linN" in cli("model", "--help").stdout
    assert "--rtt [s] mean round-trip time" in cli("model").stdout


def test_gateway_passes_drain_to_the_relay(monkeypatch):
    from typer.testing import CliRunner

    from spacetp.cli import app
    from spacetp.live import gateway

    seen = []

    def run(cfg, link_fd, link_state_fd, on_tick=None, stop_requested=None):
        seen.append(cfg)
        return {"stopped": "duration"}

    monkeypatch.setattr(gateway, "run", run)
    base = ["gateway", "--link-fd", "0", "--forward-original"]
    for extra in (["--drain", "2.5"], ["--drain", "0"], []):
        r = CliRunner().invoke(app, [*base, *extra])
        assert r.exit_code == 0, r.output
    assert seen[0]["drain_s"] == 2.5 and seen[1]["drain_s"] == 0
    # Without --drain the relay resets at once: no key at all.
    assert "drain_s" not in seen[2]


def test_reproduce_help_lists_every_paper(cli):
    from spacetp import experiments

    help_text = cli("reproduce", "--help").stdout
    for name in experiments.available():
        assert name in help_text, name


def test_no_command_has_annotation_strings_for_typer_to_evaluate_at_each_start():
    """typer builds every command on each start; string annotations (`from __future__ import
    annotations`) make it evaluate them all, about 45 ms of each `spacetp run`."""
    import inspect

    from spacetp.cli import app

    def callbacks(typer_app):
        """Every command's callback, in groups (`plot`) too."""
        for info in typer_app.registered_commands:
            yield info.callback
        for group in typer_app.registered_groups:
            if group.typer_instance.registered_callback is not None:
                yield group.typer_instance.registered_callback.callback
            yield from callbacks(group.typer_instance)

    found = [cb for cb in callbacks(app) if cb is not None]
    assert len(found) > 15 and len(app.registered_groups) > 0
    for cb in found:
        for p in inspect.signature(cb).parameters.values():
            assert not isinstance(p.annotation, str), (cb.__module__, cb.__name__, p.name)


def test_a_quiet_run_loads_no_module_it_does_not_use(tmp_path):
    """`spacetp run -q` imports neither rich (18 ms: nothing is printed), nor hashlib (its
    OpenSSL: 3 ms, for sweeps' keys), nor tomllib (the core's parser reads the file); an
    error is still printed by rich."""
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from spacetp import cli\n"
        "sys.argv = ['spacetp', 'run', sys.argv[1], '--json', sys.argv[2], '-q']\n"
        "try:\n"
        "    cli.main()\n"
        "finally:\n"
        "    print(sorted({m.split('.')[0] for m in sys.modules} & {'rich', 'hashlib', 'tomllib'}))"
        "\n"
    )
    out = tmp_path / "out.json"
    ran = subprocess.run(
        [sys.executable, "-c", probe, str(EXAMPLES / "asymmetry.toml"), str(out)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert ran.stdout.strip() == "[]" and json.loads(out.read_text())["flows"]
    failed = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path / "missing.toml"), str(out)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert failed.returncode == 2 and "no such file" in failed.stderr
    assert "rich" in failed.stdout


def test_the_gateway_options_help_is_escaped_as_rich_escapes_it():
    # escape_markup copies rich.markup.escape (to spare importing rich at every start):
    # every setting's help, and text rich would take for tags, come out the same.
    from rich.markup import escape

    from spacetp.cli_gateway import escape_markup
    from spacetp.live.gateway_config import KEYS

    texts = [s.help for s in KEYS.values()] + [
        "[bold]x[/bold]", "a [flows.tcp] b", "[1] kept", "\\[x]", "ends with \\", "ends \\\\",
        "[#ff0000]red", "[@click]", "no brackets",
    ]  # fmt: skip
    assert any("[" in t for t in texts[: len(KEYS)]), "some help quotes a [table]"
    for t in texts:
        assert escape_markup(t) == escape(t), t
