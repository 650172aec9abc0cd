"""``schedlang resume`` on the token clock (SPEC §12): a run checkpointed at one batch size and
resumed at another continues when the lr as a function of tokens is unchanged."""

from __future__ import annotations

import pytest
from helpers import run_cli

import schedlang
from schedlang.errors import SchedlangError

torch = pytest.importorskip("torch")

LR = "schedule lr = warmup(linear, 3000tok) >> cosine(0.01, 0.001, 20000tok) >> constant(0.001)\n"
OLD = "param seq_len: int = 16\nbatch = 8\n" + LR
NEW = "param seq_len: int = 16\nbatch = stages(8, [16], [240sp])\n" + LR
SAVE_AT = 30


@pytest.fixture
def checkpoint(tmp_path):
    """The combined checkpoint docs/guides.md tells users to save, after 30 steps of OLD."""
    model = torch.nn.Linear(2, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.0)
    sched = schedlang.compile(OLD).scheduler_class("Old")(opt)
    for _ in range(SAVE_AT):
        opt.step()
        sched.step()
    path = tmp_path / "ckpt.pt"
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(),
                "scheduler": sched.state_dict(), "step": SAVE_AT}, path)
    (tmp_path / "old.sched").write_text(OLD)
    return path


def write(tmp_path, text: str):
    path = tmp_path / "new.sched"
    path.write_text(text)
    return path


def test_a_larger_batch_with_the_same_lr_in_tokens_continues(checkpoint, tmp_path):
    verdict = schedlang.resume_check(checkpoint, write(tmp_path, NEW), was=tmp_path / "old.sched")
    assert verdict.equivalent, verdict
    assert verdict.tokens == SAVE_AT * 8 * 16 and verdict.samples == SAVE_AT * 8
    assert "tokens clock" in verdict.clock
    assert verdict.time_map == ("from step 30: 256 tokens per step, 3,840 tokens before it",)
    # step by step the two runs differ: the cosine ends at another step
    old, new = schedlang.compile(OLD)["lr"], schedlang.compile(NEW)["lr"]
    assert not schedlang.equivalent(old, new)


def test_the_cli_says_it_continues_and_prints_the_map(checkpoint, tmp_path):
    new = write(tmp_path, NEW)
    result = run_cli("resume", str(checkpoint), str(new), "--was", str(tmp_path / "old.sched"))
    assert result.returncode == 0, result.stderr
    assert "clock:    compared on the tokens clock" in result.stdout
    assert "from step 30: 256 tokens per step" in result.stdout


def test_a_changed_lr_in_tokens_is_the_first_differing_step(checkpoint, tmp_path):
    changed = NEW.replace("20000tok", "19000tok")
    verdict = schedlang.resume_check(checkpoint, write(tmp_path, changed), was=tmp_path / "old.sched")
    assert verdict.different and verdict.counterexample.step >= SAVE_AT


def test_a_new_batch_table_applies_from_the_checkpoints_count(checkpoint, tmp_path):
    """The batch is a function of the samples consumed: after a resume the new table applies
    from the checkpoint's count, as Megatron does (issue 36 4a); its history need not match
    (a batch of 16 from step 0 would have consumed 7,680 tokens by step 30, not 3,840)."""
    other = NEW.replace("stages(8, [16], [240sp])", "16")
    verdict = schedlang.resume_check(checkpoint, write(tmp_path, other), was=tmp_path / "old.sched")
    assert verdict.equivalent, verdict
    assert verdict.time_map == ("from step 30: 256 tokens per step, 3,840 tokens before it",)
    assert verdict.run_clock.tokens_at(30) == 3840 and verdict.run_clock.tokens_at(31) == 4096
    ramp = NEW.replace("stages(8, [16], [240sp])", "stages(32, [64], [400sp])")
    verdict = schedlang.resume_check(checkpoint, write(tmp_path, ramp), was=tmp_path / "old.sched")
    assert verdict.equivalent, verdict  # 240 samples: 32 per step until 400, then 64
    assert verdict.time_map == ("from step 30: 512 tokens per step, 3,840 tokens before it",
                                "from step 35: 1,024 tokens per step, 6,400 tokens before it")
    result = run_cli("resume", str(checkpoint), str(write(tmp_path, other)), "--was",
                     str(tmp_path / "old.sched"))
    assert result.returncode == 0, result.stderr


def test_the_lr_is_the_original_at_the_resumed_runs_tokens(checkpoint, tmp_path):
    """At every later step the lr resume reports is the original's text at the tokens the
    resumed run has consumed by then (3,840 at step 30, then 512 per step)."""
    ramp = NEW.replace("stages(8, [16], [240sp])", "32")
    verdict = schedlang.resume_check(checkpoint, write(tmp_path, ramp), was=tmp_path / "old.sched")
    on_tokens = schedlang.compile("param seq_len: int = 1\nbatch = 1\n" + LR)["lr"]
    for k in range(SAVE_AT, SAVE_AT + 60):
        assert verdict.run_lr(k) == pytest.approx(on_tokens(3840 + 512 * (k - SAVE_AT)), rel=1e-12)


def test_without_a_batch_in_the_new_file_it_compares_step_by_step(checkpoint, tmp_path):
    plain = "param seq_len: int = 16\nparam tokens_per_batch: int = 128\n" + LR  # constant-batch tok
    verdict = schedlang.resume_check(checkpoint, write(tmp_path, plain), was=tmp_path / "old.sched")
    assert verdict.clock is None


# -- damaged counts (issue 39 item 1): refused at their key, never replaced by the plan -------


def _damaged(checkpoint, tmp_path, optimizer=True, **changes):
    """The checkpoint with its scheduler's counts (or top-level keys) changed."""
    data = torch.load(checkpoint, weights_only=True)
    for key, value in changes.items():
        if key in ("samples", "tokens"):
            data["scheduler"][key] = value
        else:
            data[key] = value
    if not optimizer:
        del data["optimizer"]
    path = tmp_path / "damaged.pt"
    torch.save(data, path)
    return path


@pytest.mark.parametrize("changes, message", [
    ({"samples": -8, "tokens": -32}, "scheduler.samples is -8, not a count"),
    ({"samples": float("nan"), "tokens": float("nan")}, "scheduler.samples is nan, not a count"),
    ({"samples": 240, "tokens": float("inf")}, "scheduler.tokens is inf, not a count"),
    ({"samples": "240", "tokens": "3840"}, "scheduler.samples is '240' (a str), not a count"),
    ({"samples": 240.5}, "scheduler.samples is 240.5, not a count"),
    ({"samples": True}, "scheduler.samples is True (a bool), not a count"),
    ({"samples": 999, "tokens": 3840},
     "scheduler.samples is 999 but scheduler.tokens is 3,840: with seq_len 16 3,840 tokens are 240 samples"),
    ({"consumed_train_samples": 999},
     "consumed_train_samples is 999 but scheduler.samples is 240: two records of the samples"),
    ({"num_input_tokens_seen": -960}, "num_input_tokens_seen is -960, not a count"),
    ({"samples": 10, "tokens": 160}, "scheduler.samples is 10 at step 30, but each of 30 steps takes "
                                     "at least one sample"),
    ({"samples": 0, "tokens": 5}, "scheduler.tokens is 5 at step 30, but each of 30 steps takes at "
                                  "least one token"),
], ids=repr)
def test_damaged_counts_are_refused_naming_the_key(checkpoint, tmp_path, changes, message):
    path = _damaged(checkpoint, tmp_path, **changes)
    new = write(tmp_path, NEW)
    with pytest.raises(SchedlangError) as info:
        schedlang.resume_check(path, new, was=tmp_path / "old.sched")
    assert message in str(info.value) and str(path) in str(info.value)
    result = run_cli("resume", str(path), str(new), "--was", str(tmp_path / "old.sched"))
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr
    assert "continues exactly" not in result.stdout


def test_the_issue_case_999_samples_of_960_tokens(tmp_path):
    """The issue's numbers: seq_len 4, 30 steps of 8: the plan and the tokens say 240 samples."""
    text = "param seq_len: int = 4\nbatch = 8\n" + LR
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.0)
    sched = schedlang.compile(text).scheduler_class("Old")(opt)
    for _ in range(SAVE_AT):
        sched.step()
    state = sched.state_dict()
    assert (state["samples"], state["tokens"]) == (240, 960)
    (tmp_path / "old.sched").write_text(text)
    for top, own in (({}, {"samples": 999}), ({"consumed_train_samples": 999}, {})):
        path = tmp_path / "ckpt.pt"
        torch.save({"scheduler": {**state, **own}, "step": SAVE_AT, **top}, path)
        old = str(tmp_path / "old.sched")
        result = run_cli("resume", str(path), old, "--was", old)
        assert result.returncode == 2, result.stdout
        assert "999" in result.stderr and ("scheduler.tokens is 960" in result.stderr
                                           or "scheduler.samples is 240" in result.stderr)


def test_a_count_above_the_plan_is_another_batch_history_not_damage(checkpoint, tmp_path):
    """480 samples by step 30 is a run that had batch 16 before the checkpoint: allowed, and
    the lr is the original's at 7,680 tokens (no lr is recorded to contradict it)."""
    path = _damaged(checkpoint, tmp_path, optimizer=False, samples=480, tokens=7680)
    verdict = schedlang.resume_check(path, write(tmp_path, NEW), was=tmp_path / "old.sched")
    assert verdict.equivalent and verdict.tokens == 7680
    assert verdict.time_map == ("from step 30: 256 tokens per step, 7,680 tokens before it",)
    original = schedlang.compile("param seq_len: int = 1\nbatch = 1\n" + LR)["lr"]
    assert verdict.new_lr == pytest.approx(original(7680), rel=1e-12)


def test_counts_that_are_whole_floats_or_tensors_are_read(checkpoint, tmp_path):
    path = _damaged(checkpoint, tmp_path, samples=240.0, tokens=torch.tensor(3840))
    verdict = schedlang.resume_check(path, write(tmp_path, NEW), was=tmp_path / "old.sched")
    assert verdict.equivalent and (verdict.samples, verdict.tokens) == (240, 3840)
