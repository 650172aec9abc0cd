"""``load_state_dict`` restores the checkpoint's parameters over the constructor's, and says so.

A resumed run continues the schedule it saved (as every PyTorch scheduler restores its own
attributes); a constructor given other values would be silently ignored, so the generated
classes warn, naming each parameter, at the caller's line.
"""

import warnings

import pytest

import schedlang

torch = pytest.importorskip("torch")


def _scheduler(cls, **params):
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
    return cls(optimizer, **params)


def test_changed_parameters_warn_and_the_checkpoint_wins():
    cls = schedlang.load("examples/gpt_pretrain.sched").scheduler_class("GPT")
    first = _scheduler(cls, total=10_000)
    for _ in range(3000):
        first.step()
    state = first.state_dict()
    second = _scheduler(cls, total=20_000)
    with pytest.warns(UserWarning, match=r"total=10000 \(constructor: 20000\)") as caught:
        second.load_state_dict(state)
    assert caught[0].filename == __file__
    assert second.params["total"] == 10_000
    second.step()
    assert second.get_last_lr()[0] == pytest.approx(schedlang.load("examples/gpt_pretrain.sched",
                                                                   params={"total": 10_000})["lr"](3001))


def test_same_parameters_are_quiet():
    cls = schedlang.load("examples/gpt_pretrain.sched").scheduler_class("GPT")
    first = _scheduler(cls, total=10_000)
    first.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _scheduler(cls, total=10_000).load_state_dict(first.state_dict())
