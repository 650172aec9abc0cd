"""``schedlang resume`` across a batch change, against megatron-core's real code (issue 36 item 4a).

A Megatron-LM run trains 100 iterations at ``--step-batch-size-schedule "0:16 800:32"`` with an
lr given in samples (``--lr-warmup-samples``, ``--lr-decay-samples``), saves, and resumes with
``--step-batch-size-schedule "0:64 5000:128"``.  Megatron applies the new table to the consumed
samples it loads (``update_num_microbatches(args.consumed_train_samples)``): the batch from
the checkpoint on is the new table's at 2,400 samples, whatever the history was.  Both runs are
driven here with megatron-core 0.19.2's ``StepBatchsizeNumMicroBatchesCalculator`` and
``OptimizerParamScheduler`` (loaded from ``.frameworks``), as Megatron-LM's loop drives them
(``frameworks.test_megatron_batch.Loop``), and the checkpoint is saved in Megatron-LM's layout.
``resume`` must say the run continues, and its step <-> token map (``run_clock``) and lr
(``run_lr``) must be the resumed Megatron run's at every later step, past the decay's end; a
changed decay must be reported at the first step where the two resumed Megatron runs differ.
With NEW as the resumed launch and ``--use-checkpoint-opt_param-scheduler`` (SPEC §14), the
restored run is megatron-core's with the saved decay, on the new batch table.
"""

from __future__ import annotations

import argparse

import pytest
from helpers import run_cli

import schedlang

from .test_megatron_batch import Loop, scheduler_019, step_calculator

torch = pytest.importorskip("torch")

SEQ = 16
OLD_TABLE, NEW_TABLE = "0:16 800:32", "0:64 5000:128"
SAVE_AT, WARMUP, DECAY = 100, 2000, 22000  # iterations; samples
AFTER = 320  # iterations compared, past the decay's end (about step 275)


def _lr_text(decay: int) -> str:
    return (f"schedule lr = warmup(linear, {WARMUP * SEQ}tok) >> "
            f"cosine(3e-4, 3e-5, {(decay - WARMUP) * SEQ}tok) >> constant(3e-5)\n")


def _sched(batch: str, decay: int = DECAY) -> str:
    return f"param seq_len: int = {SEQ}\nbatch = {batch}\n" + _lr_text(decay)


OLD = _sched("stages(16, [32], [800sp])")
NEW = _sched("stages(64, [128], [5000sp])")


def _scheduler(optimizer, decay: int = DECAY):
    """What Megatron-LM's get_optimizer_param_scheduler builds for --train-samples runs."""
    return scheduler_019().OptimizerParamScheduler(
        optimizer, init_lr=0.0, max_lr=3e-4, min_lr=3e-5, lr_warmup_steps=WARMUP,
        lr_decay_steps=decay, lr_decay_style="cosine", start_wd=0.0, end_wd=0.0,
        wd_incr_steps=decay, wd_incr_style="constant")


def _train(loop: Loop, scheduler, optimizer, iterations: int) -> list[tuple[int, int, int, float]]:
    """(iteration, samples consumed before it, its batch, the lr it trains with) per iteration."""
    out = []
    for _ in range(iterations):
        iteration, lr = loop.iteration, optimizer.param_groups[0]["lr"]
        before, batch = loop.step()
        optimizer.step()
        scheduler.step(increment=batch)
        out.append((iteration, before, batch, lr))
    return out


@pytest.fixture
def megatron_run(tmp_path):
    """The original run trained and saved at iteration 100; the resumed run's iterations."""
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.0)
    scheduler = _scheduler(optimizer)
    loop = Loop(step_calculator(OLD_TABLE, None))
    _train(loop, scheduler, optimizer, SAVE_AT)
    folder = tmp_path / "megatron"
    file = folder / f"iter_{SAVE_AT:07d}" / "mp_rank_00" / "model_optim_rng.pt"
    file.parent.mkdir(parents=True)
    args = argparse.Namespace(consumed_train_samples=loop.consumed, step_batch_size_schedule=OLD_TABLE,
                              seq_length=SEQ)
    torch.save({"args": args, "checkpoint_version": 3.0, "iteration": SAVE_AT,
                "optimizer": {"optimizer": optimizer.state_dict()},
                "opt_param_scheduler": scheduler.state_dict()}, file)
    (folder / "latest_checkpointed_iteration.txt").write_text(str(SAVE_AT))
    (tmp_path / "old.sched").write_text(OLD)
    return folder, scheduler.state_dict(), loop.consumed


def _resumed(saved: dict, consumed: int, decay: int = DECAY):
    """Megatron-LM resuming with the new table: load, ``update_num_microbatches(consumed)``,
    the scheduler built from the flags and loaded, then the loop from the checkpoint on."""
    calculator = step_calculator(NEW_TABLE, None)
    calculator.update(consumed, consistency_check=False)
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.0)
    scheduler = _scheduler(optimizer, decay)
    scheduler.override_opt_param_scheduler = decay != DECAY  # --override-opt_param-scheduler
    scheduler.use_checkpoint_opt_param_scheduler = decay == DECAY
    scheduler.load_state_dict(saved)
    return _train(Loop(calculator, consumed=consumed, iteration=SAVE_AT), scheduler, optimizer, AFTER)


def test_resume_with_a_new_batch_table_is_megatrons_run_at_every_step(megatron_run, tmp_path):
    folder, saved, consumed = megatron_run
    assert consumed == 50 * 16 + 50 * 32  # the old table's history: 2,400 samples
    new = tmp_path / "new.sched"
    new.write_text(NEW)
    verdict = schedlang.resume_check(folder, new, was=tmp_path / "old.sched")
    assert verdict.equivalent, verdict
    assert verdict.step == SAVE_AT and verdict.samples == consumed
    clock, lr = verdict.run_clock, verdict.run_lr
    megatron = _resumed(saved, consumed)
    assert megatron[-1][1] > DECAY + 128 * 10  # compared past the decay's end
    for iteration, before, batch, megatron_lr in megatron:
        assert clock.samples_at(iteration) == before, iteration
        assert clock.tokens_at(iteration) == before * SEQ, iteration
        assert clock.batch_at(iteration) == batch, iteration
        assert lr(iteration) == pytest.approx(megatron_lr, rel=1e-12, abs=1e-18), iteration
    switch = next(i for i, _, b, _ in megatron if b == 128)
    assert verdict.time_map == (
        f"from step {SAVE_AT}: 1,024 tokens per step, 38,400 tokens before it",
        f"from step {switch}: 2,048 tokens per step, {(2400 + 64 * (switch - SAVE_AT)) * SEQ:,} "
        "tokens before it")
    # step by step the new file's own plan from step 0 is another run: the history differs
    own = schedlang.compile(NEW)
    assert own.samples_at(SAVE_AT) != consumed


def test_the_cli_says_it_continues_with_the_new_map(megatron_run, tmp_path):
    folder, _, _ = megatron_run
    new = tmp_path / "new.sched"
    new.write_text(NEW)
    result = run_cli("resume", str(folder), str(new), "--was", str(tmp_path / "old.sched"))
    assert result.returncode == 0, result.stderr
    assert "from the checkpoint's samples times the original's seq_len" in result.stdout
    assert f"from step {SAVE_AT}: 1,024 tokens per step, 38,400 tokens before it" in result.stdout
    assert "continues exactly" in result.stdout


def test_a_changed_decay_is_the_first_step_megatron_differs(megatron_run, tmp_path):
    folder, saved, consumed = megatron_run
    new = tmp_path / "new.sched"
    new.write_text(_sched("stages(64, [128], [5000sp])", decay=19000))
    verdict = schedlang.resume_check(folder, new, was=tmp_path / "old.sched")
    assert verdict.different
    kept, changed = _resumed(saved, consumed), _resumed(saved, consumed, decay=19000)
    first = next(k for (k, _, _, a), (_, _, _, b) in zip(kept, changed) if a != b)
    assert verdict.counterexample.step == first
    assert verdict.counterexample.a == pytest.approx(kept[first - SAVE_AT][3], rel=1e-12)
    assert verdict.counterexample.b == pytest.approx(changed[first - SAVE_AT][3], rel=1e-12)
    for iteration, _, _, megatron_lr in changed:
        assert verdict.run_lr(iteration) == pytest.approx(megatron_lr, rel=1e-12, abs=1e-18)


def test_use_checkpoint_with_a_new_batch_table_is_megatrons_run(megatron_run, tmp_path):
    """SPEC §14: NEW as the resumed launch, ``--use-checkpoint-opt_param-scheduler`` and another
    decay: megatron-core keeps the saved decay, and resume's restored run is that run at every
    iteration on the new batch table (placed on the resumed run's clock as NEW is)."""
    folder, saved, consumed = megatron_run
    launch = tmp_path / "new.sh"
    launch.write_text(f"python pretrain_gpt.py --train-samples {DECAY} --lr 3e-4 --min-lr 3e-5 "
                      f"--lr-warmup-samples {WARMUP} --lr-decay-samples 19000 --lr-decay-style cosine "
                      f"--weight-decay 0 --step-batch-size-schedule '{NEW_TABLE}' --seq-length {SEQ} "
                      "--use-checkpoint-opt_param-scheduler\n")
    calculator = step_calculator(NEW_TABLE, SEQ)  # its thresholds in tokens, as --seq-length makes them
    calculator.update(consumed, consistency_check=False)
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.0)
    scheduler = _scheduler(optimizer, 19000)  # the launch's values ...
    scheduler.override_opt_param_scheduler, scheduler.use_checkpoint_opt_param_scheduler = False, True
    scheduler.load_state_dict(saved)  # ... the checkpoint's win
    assert scheduler.lr_decay_steps == DECAY
    megatron = _train(Loop(calculator, consumed=consumed, iteration=SAVE_AT), scheduler, optimizer, AFTER)
    verdict = schedlang.resume_check(folder, launch, was=tmp_path / "old.sched")
    assert verdict.restored.flag == "use-checkpoint" and verdict.restored.run == "mixed"
    assert [w.name.split(" ")[0] for w in verdict.restored.wins] == ["lr_decay_steps"]
    for iteration, _, _, megatron_lr in megatron:
        assert verdict.restored_lr(iteration) == pytest.approx(megatron_lr, rel=1e-12, abs=1e-18), iteration
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.0)
    scheduler = _scheduler(optimizer, 19000)
    scheduler.override_opt_param_scheduler = True  # what NEW's values run
    scheduler.load_state_dict(saved)
    calculator = step_calculator(NEW_TABLE, SEQ)
    calculator.update(consumed, consistency_check=False)
    changed = _train(Loop(calculator, consumed=consumed, iteration=SAVE_AT), scheduler, optimizer, AFTER)
    first = next(k for (k, _, _, a), (_, _, _, b) in zip(megatron, changed) if a != b)
    assert verdict.follows == "different" and verdict.run_counterexample.step == first


def test_a_launch_without_seq_length_against_an_original_in_tokens_is_refused(megatron_run, tmp_path):
    """The original's phases are in tokens; a launch without --seq-length counts none: exit 2
    with the reason (it was an internal error, a ValueError from the clock)."""
    folder, _, _ = megatron_run
    launch = tmp_path / "new.sh"
    launch.write_text(f"python pretrain_gpt.py --train-samples {DECAY} --lr 3e-4 --min-lr 3e-5 "
                      f"--lr-warmup-samples {WARMUP} --lr-decay-style cosine --weight-decay 0 "
                      f"--step-batch-size-schedule '{NEW_TABLE}'\n")
    result = run_cli("resume", folder, launch, "--was", tmp_path / "old.sched")
    assert result.returncode == 2 and "internal error" not in result.stderr
    assert "the new run declares no seq_len" in result.stderr and "--seq-length" in result.stderr
    assert "this run counts no tokens" in result.stderr
