"""The core's errors carry the field's path into Python, beside a message that names it."""

import pytest

import spacetp
from spacetp import _core
from spacetp.scenario import ScenarioError


def two_nodes(**flow) -> dict:
    return {
        "nodes": [{"name": "a"}, {"name": "b"}],
        "links": [{"between": ["a", "b"], "rate": "1 Mb/s", "delay": "10 ms"}],
        "flows": [{"from": "a", "to": "b", "bytes": "10 kB", **flow}],
    }


def test_a_bad_tcp_setting_names_its_path_in_the_message_and_the_attribute():
    with pytest.raises(ScenarioError) as e:
        spacetp.run(two_nodes(tcp={"min_rto": "0 s"}))
    assert e.value.path == "flows[0].tcp.min_rto"
    assert str(e.value).startswith("flows[0].tcp.min_rto: ")


def test_the_core_raises_a_value_error_with_the_path():
    with pytest.raises(_core.FieldError) as e:
        _core.validate_json('{"nodes": [{"name": "a"}], "links": [], "flows": [], "stop": "x"}')
    assert isinstance(e.value, ValueError)
    assert e.value.path == "stop"


def test_an_error_about_the_whole_document_has_no_path():
    with pytest.raises(ScenarioError) as e:
        spacetp.validate({"nodes": [{"name": "a"}, {"name": "b"}], "links": [], "flows": []})
    assert e.value.path is None
    assert "nothing to run" in str(e.value)


def test_the_operating_system_refusing_is_an_os_error_not_a_value_error():
    assert issubclass(_core.SystemRefused, OSError)
    assert not issubclass(_core.SystemRefused, ValueError)
