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


def test_a_batch_schedule_that_does_not_reach_the_checkpoint_is_refused(checkpoint, tmp_path):
    wrong = NEW.replace("stages(8, [16], [240sp])", "16")
    with pytest.raises(SchedlangError, match="has consumed 7,680 by then") as info:
        schedlang.resume_check(checkpoint, write(tmp_path, wrong), was=tmp_path / "old.sched")
    assert "batch = stages(16, [NEW_BATCH], [3840tok])" in info.value.hint


def test_without_a_batch_in_the_new_file_it_compares_step_by_step(checkpoint, tmp_path):
    plain = "param seq_len: int = 16\nparam tokens_per_batch: int = 128\n" + LR  # constant-batch tok
    verdict = schedlang.resume_check(checkpoint, write(tmp_path, plain), was=tmp_path / "old.sched")
    assert verdict.clock is None
