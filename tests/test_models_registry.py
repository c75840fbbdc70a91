"""Model registry, parameter validation and sweep parsing."""

import numpy as np
import pytest

from spacetp.models import MODELS, evaluate, parse_sweep, pftk

NAMES = [
    "pftk", "pftk-approx", "mathis", "slowstart", "vegas", "scps-liu", "scps-liu-nt",
    "scalable", "scalable-iid", "scalable-markov", "cfdp", "ltp", "ltp-goodput", "ltp-block",
    "ltp-rounds", "ltp-rounds-ion", "ltp-segment-loss",
]  # fmt: skip

MINIMAL = {
    "pftk": {"rtt": 0.5, "p": 1e-3},
    "pftk-approx": {"rtt": 0.5, "p": 1e-3},
    "mathis": {"rtt": 0.5, "p": 1e-3},
    "slowstart": {"rtt": 0.5, "ssthresh": 20},
    "vegas": {"rtt": 0.3, "base_rtt": 0.2},
    "scps-liu": {"rtt": 0.2064, "p": 1e-3},
    "scps-liu-nt": {"rtt": 0.2064, "p": 1e-3},
    "scalable": {"q": 1e-4, "rtt": 0.12},
    "scalable-iid": {"p": 0.02, "rtt": 0.12},
    "scalable-markov": {"p_a": 0.02, "burstiness": 0.5, "rtt": 0.12},
    "cfdp": {"file": 2e6, "rate": 2e6, "one_way": 0.27, "p": 1e-2},
    "ltp": {"rate": 1e6, "rtt": 2400, "p": 1e-3, "file": 1e8},
    "ltp-goodput": {"rate": 1e6, "rtt": 2400, "ber": 1e-6, "file": 1e8},
    "ltp-block": {"rate": 1e6, "rtt": 2400, "p": 1e-3},
    "ltp-rounds": {"n": 46, "p": 0.1},
    "ltp-rounds-ion": {"n": 46, "p": 0.1},
    "ltp-segment-loss": {"ber": 1e-6},
}


def test_registry_names_and_specs():
    assert list(MODELS) == NAMES
    for spec in MODELS.values():
        assert callable(spec.func) and spec.description and spec.returns
        for param in spec.params.values():
            assert param.unit and param.description


@pytest.mark.parametrize("name", NAMES)
def test_every_model_evaluates_with_required_params(name):
    value = evaluate(name, **MINIMAL[name])
    assert np.isfinite(value) and value > 0


def test_evaluate_uses_defaults_and_broadcasts():
    # pftk-approx defaults (b = 1, T0 = 3 RTT) are 003's eq. (1): 308 b/s at RTT 1000 s.
    assert round(float(evaluate("pftk-approx", rtt=1000, p=1e-3)) * 8000) == 308
    assert evaluate("slowstart", rtt=1200, ssthresh=20) == 7200
    assert evaluate("vegas", rtt=0.3, base_rtt=0.2) == pytest.approx(30.0)
    rates = evaluate("pftk", rtt=0.2, p=np.array([1e-4, 1e-3, 1e-2]), w_max=100)
    assert rates.shape == (3,) and np.all(np.diff(rates) < 0)
    assert evaluate("pftk", rtt=0.2, p=1e-3, t0=0.6) == pftk.full_throughput(0.2, 1e-3, 0.6)


def test_unknown_model_and_parameter():
    with pytest.raises(ValueError, match="unknown model 'tahoe'"):
        evaluate("tahoe", rtt=1)
    with pytest.raises(ValueError, match=r"'rto'.*allowed parameters: rtt, p, t0, w_max, b"):
        evaluate("pftk", rtt=1, p=0.01, rto=3)


def test_missing_parameter_is_named():
    with pytest.raises(ValueError, match="missing parameter 'rtt'"):
        evaluate("mathis", p=0.01)


@pytest.mark.parametrize(
    "name, params, field, text",
    [
        ("pftk", {"rtt": 1, "p": 1.0}, "p", r"p = 1 .*\(0, 1\)"),
        ("pftk", {"rtt": 1, "p": 0.0}, "p", r"p = 0 .*\(0, 1\)"),
        ("mathis", {"rtt": 0.0, "p": 0.1}, "rtt", r"rtt = 0 .*\(0, inf\) s"),
        ("mathis", {"rtt": -1.0, "p": 0.1}, "rtt", r"rtt = -1 "),
        ("pftk", {"rtt": 1, "p": [0.1, 1.5, 0.2]}, "p", r"p = 1.5 "),
        ("pftk", {"rtt": 1, "p": float("nan")}, "p", r"p = nan "),
        ("pftk", {"rtt": 1, "p": 0.1, "b": 0.5}, "b", r"b = 0.5 .*\[1, inf\) packets"),
        ("slowstart", {"rtt": 1, "ssthresh": 0.5}, "ssthresh", r"ssthresh = 0.5 "),
        ("scalable", {"q": 1e-3, "rtt": 1, "alpha": 1.0}, "alpha", r"alpha = 1 .*\(1, inf\)"),
        ("scalable-markov", {"p_a": 0.02, "burstiness": 1.0, "rtt": 1}, "burstiness", r"\[0, 1\)"),
    ],
)
def test_out_of_range_names_field_value_and_range(name, params, field, text):
    with pytest.raises(ValueError, match=text) as err:
        evaluate(name, **params)
    assert str(err.value).startswith(field)


def test_cross_field_checks_and_bad_types():
    with pytest.raises(ValueError, match="rtt must be greater than base_rtt"):
        evaluate("vegas", rtt=0.2, base_rtt=0.3)
    with pytest.raises(ValueError, match="b_u must be greater than b_l"):
        evaluate("scalable-markov", p_a=0.02, rtt=0.1, b_l=600)
    with pytest.raises(ValueError, match="^p: expected a number"):
        evaluate("mathis", rtt=1, p="lots")


def test_parse_sweep_good():
    name, values = parse_sweep("p=1e-4:1e-1:log4")
    assert name == "p" and np.allclose(values, [1e-4, 1e-3, 1e-2, 1e-1], rtol=1e-12)
    assert values[0] == 1e-4 and values[-1] == 1e-1
    name, values = parse_sweep("rtt = 0.1:0.5:lin5")
    assert name == "rtt" and np.allclose(values, [0.1, 0.2, 0.3, 0.4, 0.5])
    assert np.array_equal(parse_sweep("w_max=8, 16,64")[1], [8, 16, 64])
    assert np.array_equal(parse_sweep("b=2")[1], [2])
    assert len(parse_sweep("p=1e-4:1e-1:log20")[1]) == 20


@pytest.mark.parametrize(
    "text, reason",
    [
        ("p", "expected NAME="),
        ("=1,2", "expected NAME="),
        ("1p=1", "expected NAME="),
        ("p=", "no values"),
        ("p=1:2", "three fields"),
        ("p=1:2:3:lin3", "three fields"),
        ("p=0:1:log5", "positive ends"),
        ("p=1:2:exp5", "logN or linN"),
        ("p=1:2:lin", "logN or linN"),
        ("p=1:2:lin1", "at least 2 points"),
        ("p=a:2:lin3", "'a' is not a number"),
        ("p=1,,2", "empty item"),
        ("p=1,x", "'x' is not a number"),
    ],
)
def test_parse_sweep_bad(text, reason):
    with pytest.raises(ValueError, match=reason):
        parse_sweep(text)
