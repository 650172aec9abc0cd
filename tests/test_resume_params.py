"""``load_state_dict`` restores the clock and keeps the constructor's parameters, and says so.

SPEC §14: a run resumed with other values runs those values (what ``schedlang resume``
compares), and the generated classes warn, naming each parameter whose saved value differs,
at the caller's line; ``load_state_dict(state, params="saved")`` keeps the saved values.
``tests/test_resume_class_rule.py`` drives the rule against ``schedlang resume``.
"""

import warnings

import pytest

import schedlang

torch = pytest.importorskip("torch")


def _scheduler(cls, **params):
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
    return cls(optimizer, **params)


@pytest.mark.parametrize("rule, kept", [("constructor", 20_000), ("saved", 10_000)])
def test_changed_parameters_warn_and_the_rule_decides(rule, kept):
    cls = schedlang.load("examples/gpt_pretrain.sched").scheduler_class("GPT")
    first = _scheduler(cls, total=10_000)
    for _ in range(3000):
        first.step()
    state = first.state_dict()
    second = _scheduler(cls, total=20_000)
    if rule == "constructor":
        with pytest.warns(schedlang.SchedlangWarning, match=r"total=10000 \(constructor: 20000\)") as caught:
            second.load_state_dict(state)
        assert caught[0].filename == __file__
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            second.load_state_dict(state, params=rule)
    assert second.params["total"] == kept and second.last_epoch == 3000
    want = schedlang.load("examples/gpt_pretrain.sched", params={"total": kept})["lr"]
    assert second.optimizer.param_groups[0]["lr"] == pytest.approx(want(3000))  # set on load
    second.step()
    assert second.get_last_lr()[0] == pytest.approx(want(3001))


def test_same_parameters_are_quiet():
    cls = schedlang.load("examples/gpt_pretrain.sched").scheduler_class("GPT")
    first = _scheduler(cls, total=10_000)
    first.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _scheduler(cls, total=10_000).load_state_dict(first.state_dict())


# -- what a class loads is checked as its constructor checks (issue 19) -------------------------

GPT = "examples/gpt_pretrain.sched"  # peak > 0, warmup >= 0, total > warmup


def _classes(tmp_path):
    """The three class kinds: in-process, the standalone module (no schedlang), Cerebras."""
    import importlib.util

    from schedlang.codegen.emit import emit

    program = schedlang.load(GPT)
    path = tmp_path / "gpt_module.py"
    path.write_text(emit(program, "torch", "gpt_pretrain.sched", "GPT"))
    spec = importlib.util.spec_from_file_location("schedlang_checked_gpt", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {"in-process": program.scheduler_class("GPT"), "standalone": module.GPT,
            "cerebras": program.scheduler_class("GPTCerebras", target="cerebras")}


BAD_STATES = [
    ({"peak": -1.0}, r"parameter 'peak' must satisfy peak > 0 \(peak = -1(\.0)?\)"),
    ({"peak": float("nan")}, r"parameter 'peak' must be finite, not nan"),
    ({"peak": float("inf")}, r"parameter 'peak' must be finite, not inf"),
    ({"total": 2.5}, r"parameter 'total' is an int \(a whole number >= 0\), not 2.5"),
    ({"total": 100, "warmup": 2000}, r"parameter 'total' must satisfy total > warmup"),
    ({"total": "1000"}, r"parameter 'total' must be a number, not '1000'"),
    ({"horizon": 5}, r"unknown parameter 'horizon'"),
]


@pytest.mark.parametrize("kind", ["in-process", "standalone", "cerebras"])
@pytest.mark.parametrize("bad, message", BAD_STATES)
def test_a_loaded_state_that_breaks_the_declarations_is_refused(kind, bad, message, tmp_path):
    cls = _classes(tmp_path)[kind]
    scheduler = _scheduler(cls, total=10_000)
    state = scheduler.state_dict()
    state["params"] = {**state["params"], **bad}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the "replaced parameters" warning
        with pytest.raises(ValueError, match="load_state_dict: " + message):
            scheduler.load_state_dict(state)
    assert scheduler.params["total"] == 10_000  # nothing was taken from the refused state


@pytest.mark.parametrize("kind", ["standalone", "cerebras"])
@pytest.mark.parametrize("bad, message", BAD_STATES[:5])
def test_the_constructor_refuses_what_the_file_refuses(kind, bad, message, tmp_path):
    """The standalone module checks without schedlang: the same rules, as ValueError."""
    cls = _classes(tmp_path)[kind]
    given = {"total": 10_000, **bad}
    name = message.split("'")[1]  # the in-process class words some of them as `-D` does
    with pytest.raises((ValueError, schedlang.SchedlangError), match=f"parameter '{name}'"):
        _scheduler(cls, **given)


@pytest.mark.parametrize("kind", ["in-process", "standalone", "cerebras"])
def test_a_state_without_a_parameter_keeps_the_constructors_value(kind, tmp_path):
    cls = _classes(tmp_path)[kind]
    scheduler = _scheduler(cls, total=5000)
    for _ in range(10):
        scheduler.step()
    state = scheduler.state_dict()
    del state["params"]["total"]  # e.g. saved before the file declared `total`
    fresh = _scheduler(cls, total=5000)
    with pytest.warns(UserWarning, match=r"no value for 'total'; the constructor's value is kept"):
        fresh.load_state_dict(state, params="saved")
    assert fresh.params["total"] == 5000
    fresh.step()
    want = schedlang.load(GPT, params={"total": 5000})["lr"](11)
    assert float(fresh.get_last_lr()[0]) == pytest.approx(want, rel=1e-6)


def test_int_parameters_are_loaded_as_ints(tmp_path):
    cls = _classes(tmp_path)["standalone"]
    scheduler = _scheduler(cls, total=5000.0, warmup=20.0)
    assert scheduler.params["total"] == 5000 and type(scheduler.params["total"]) is int
    state = scheduler.state_dict()
    state["params"]["warmup"] = 30.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scheduler.load_state_dict(state, params="saved")
    assert type(scheduler.params["warmup"]) is int and scheduler.params["warmup"] == 30
