"""Type stubs of the compiled core (crates/spacetp-py)."""

import os
from collections.abc import Callable

__version__: str

class Summary:
    """A run's summary, kept in the core until read."""

    def text(self) -> str:
        """JSON text, in the summary's own field order."""

    def indent2_sorted(self) -> str:
        """The text `json.dumps(json.loads(self.text()), indent=2, sort_keys=True)` gives."""

    def write_indent2_sorted(self, path: str | os.PathLike[str]) -> None:
        """`indent2_sorted()` and a newline, written to `path` by the core."""

def run_json(scenario_json: str, pcap: list[tuple[str, str]] = ...) -> dict[str, object]:
    """Run a scenario given as JSON text. Returns {"summary": Summary, "samples":
    dict[str, bytes] | None, "segments": dict[str, bytes] | None, "limits": ..., "wall_s":
    float}; columns are little-endian f64. Raises ValueError naming the offending field."""

def validate_json(scenario_json: str) -> None: ...
def dumps_indent2_sorted(obj: object) -> str | None: ...
def toml_loads(text: str) -> dict | None: ...
def check_toml(text: str) -> None: ...
def link_schedules(scenario_json: str) -> str: ...
def contact_plan(
    scenario_json: str, numbers: list[tuple[str, int]], horizon_s: float, epoch: int | None = None
) -> str: ...
def schema() -> str: ...
def transports() -> str:
    """The transport registry as JSON: [{title, settings_key, protocols, workloads, routed}]."""

def transport_schema(key: str) -> str:
    """JSON Schema of one transport's `[flows.KEY]` settings; ValueError for an unknown key."""

def protocols() -> list[tuple[str, str, str]]: ...
def emulate_check(scenario_json: str) -> str:
    """The two directions of a one-link scenario as JSON; ValueError naming a bad field."""

def emulate(
    scenario_json: str,
    fd_a: int,
    fd_b: int,
    duration_s: float | None = None,
    realtime: bool = False,
    notify: list[int] = ...,
    notify_udp: tuple[int, str, str] | None = None,
) -> str:
    """Emulate the link between packet fds until duration_s or a signal; report as JSON.
    Link-state notices (b"link down", b"link up") go to the datagram fds `notify`, and with
    notify_udp=(port, address_a, address_b) as UDP datagrams on the link to each end."""

def gateway_check(config_json: str) -> None:
    """Validate a gateway configuration; ValueError naming the bad setting."""

def gateway(
    config_json: str,
    link_fd: int | None = None,
    link_state_fd: int | None = None,
    on_tick: object | None = None,
) -> str:
    """Run a gateway until its duration or a signal; report as JSON. SCPS-TP: on packet fd
    `link_fd`; QUIC: on that fd (IPv4 packets) if given, else a UDP socket bound to its
    tunnel address. Link-state notices arrive as datagrams on `link_state_fd`. `on_tick` is
    called about once a second with the report so far (JSON text)."""

def gateway_make_cert() -> tuple[str, str]:
    """A certificate and private key (PEM) for a QUIC gateway pair."""

def dtn_check(config_json: str) -> None:
    """Validate a live DTN node's settings; ValueError naming the bad setting."""

def dtn_node(config_json: str, on_notice: Callable[[str], object] | None = None) -> str:
    """Run a live DTN node until its stop condition or a signal; report as JSON. on_notice
    gets each line the node says while it runs (canceled LTP sessions, bundles given up)."""

def cfdp_check(config_json: str) -> None:
    """Validate a live CFDP entity's settings; FieldError naming the bad setting."""

def cfdp_entity(config_json: str, on_ready: Callable[[str], object] | None = None) -> str:
    """Run a live CFDP entity until its stop condition or a signal; report as JSON. on_ready
    gets the socket's bound address."""

def limit_states() -> list[str]:
    """The limit analysis's states, in the order of their indices in a run's `limits` table."""

def fit_settings(scenario_json: str) -> str:
    """Build a scenario without running it: each flow's path facts and fitted settings (JSON)."""
