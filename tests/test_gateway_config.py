"""`spacetp gateway --config gw.toml`: one TOML file of the gateway's settings, the same
vocabulary as the flags, every flag an override; unknown keys and wrong kinds refused with
the file and the key (no root needed: `--check` resolves and validates, runs nothing)."""

from __future__ import annotations

import json

import pytest

from conftest import ROOT, spacetp_cli
from spacetp.live.gateway_config import KEYS, reference

GW = """
protocol = "scps-tp"
local = "10.77.0.1"
peer = "10.77.0.2"
listen = ["10.78.1.2:5000=5000"]
keepalive = 60
tcp = { scps = { rate = "10 Mb/s" } }
"""


def _check(tmp_path, text: str, *flags: str):
    f = tmp_path / "gw.toml"
    f.write_text(text)
    return spacetp_cli("gateway", "--config", str(f), "--check", *flags)


def _resolved(r) -> dict:
    assert r.returncode == 0, r.stderr
    out = r.stdout
    return json.loads(out[out.index("{") :])


def test_a_file_configures_the_gateway_and_flags_override_it(tmp_path):
    got = _resolved(_check(tmp_path, GW))
    assert got["keepalive"] == 60 and got["listen"] == ["10.78.1.2:5000=5000"]
    assert got["tcp"] == {"scps": {"rate": "10 Mb/s"}}
    assert got["mtu"] == 1500 and got["after_crash"] == "open"  # defaults where neither says
    over = _resolved(_check(tmp_path, GW, "--keepalive", "30", "--mtu", "1400", "--listen",
                            "10.78.1.2:6000=6000"))  # fmt: skip
    assert over["keepalive"] == 30 and over["mtu"] == 1400
    assert over["listen"] == ["10.78.1.2:6000=6000"]  # a list flag replaces the file's


def test_unknown_keys_and_wrong_kinds_name_the_file_and_the_key(tmp_path):
    cases = [
        ("kepalive = 3", "gw.toml: unknown key `kepalive`"),
        ('keepalive_probes = "four"', "gw.toml: keepalive_probes: 'four' is not a whole number"),
        ("forward = [5000]", "gw.toml: forward: [5000] is not a list of strings"),
        ("mtu = true", "gw.toml: mtu: True is not a whole number"),
        ("local = ", "gw.toml: not valid TOML"),
    ]
    for line, want in cases:
        r = _check(tmp_path, GW + line + "\n")
        assert r.returncode == 2 and want in r.stderr, (line, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1
    # The relay's own settings are checked by the core, naming their path.
    r = _check(tmp_path, GW.replace('"10 Mb/s"', '"10 Mbit"'))
    assert r.returncode == 2 and "tcp.scps.rate" in r.stderr, r.stderr
    r = _check(tmp_path, GW + "keepalive_probes = 0\n")
    assert r.returncode == 2 and "keepalive_probes" in r.stderr, r.stderr


def test_every_key_is_a_flag_and_is_documented():
    import typer.main

    from spacetp.cli import app

    gateway = typer.main.get_command(app).commands["gateway"]
    flags = {o for p in gateway.params for o in p.opts}
    for key in KEYS:
        assert "--" + key.replace("_", "-") in flags, key
    docs = (ROOT / "docs" / "live.md").read_text()
    assert reference() in docs, "docs/live.md's table is not gateway_config.reference()"


def test_sighup_reads_the_file_again_and_says_what_it_took(tmp_path):
    import signal

    from conftest import free_ports, start_gateway

    listen, here, there = free_ports(3)
    f = tmp_path / "gw.toml"
    f.write_text(f'local = "10.77.0.1"\npeer = "10.77.0.2"\nlisten = ["127.0.0.1:{listen}=5000"]\n'
                 f'udp = "127.0.0.1:{here},127.0.0.1:{there}"\nduration = 120\n')  # fmt: skip
    # Signalled only once it says it is ready: a SIGHUP before its handler is installed
    # would end the process (the default action).
    g, io = start_gateway("--config", str(f), "--keepalive-probes", "3")
    try:
        f.write_text(f.read_text() + "keepalive = 30\nmtu = 1400\nkeepalive_probes = 9\n")
        g.send_signal(signal.SIGHUP)
        applied = io.wait_for("SIGHUP: ")
        f.write_text(f.read_text() + "kepalive = 1\n")
        g.send_signal(signal.SIGHUP)
        refused = io.wait_for("SIGHUP: ", count=2)
        assert g.poll() is None, "SIGHUP stopped the gateway"
        g.send_signal(signal.SIGTERM)
        out, err = io.finish(timeout=60)
    finally:
        if g.poll() is None:
            g.kill()
    assert g.returncode == 0, err
    # The flag --keepalive-probes still overrides the file: only keepalive changed.
    assert applied.strip() == "SIGHUP: applied keepalive; needs a restart (kept as running): mtu"
    assert "unknown key `kepalive`" in refused and "kept the running settings" in refused
    rep = json.loads(out)
    assert rep["reloads"] == 1 and rep["stopped"] == "signal"


def test_a_stop_signal_handled_inside_the_tick_still_stops_the_gateway_in_order():
    """SIGTERM's handler raises KeyboardInterrupt wherever Python runs; arriving while the
    gateway's once-a-second callback runs (printing a SIGHUP's answer, serving metrics), it
    must begin the same orderly stop as between ticks (report written, exit 0), not unwind
    past it (exit 130, as CI once saw)."""
    import socket

    from conftest import free_ports
    from spacetp.live.gateway import run

    (port,) = free_ports(1)
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    calls = []

    def tick(report_json):
        calls.append(report_json)
        raise KeyboardInterrupt

    cfg = {"local": "10.77.0.1", "peer": "10.77.0.2",
           "listen": [[f"127.0.0.1:{port}", 5000]], "duration_s": 30}  # fmt: skip
    try:
        rep = run(cfg, a.fileno(), None, tick)
    except KeyboardInterrupt:  # caught here: it would end the whole pytest session
        pytest.fail("the interrupt unwound past the gateway's orderly stop")
    finally:
        a.close()
        b.close()
    assert len(calls) == 1 and rep["stopped"] == "signal", rep
