"""``schedlang audit`` on logs the real trainers wrote, on CPU: each convention of
``schedlang/audit/conventions.py`` confirmed by running the framework that defines it.

- transformers' ``Trainer`` (its ``trainer_state.json`` and its ``TensorBoardCallback``'s
  events): from 4.51 the lr logged at ``global_step`` N is the one update N-1 used;
- Lightning with ``CSVLogger`` and ``TensorBoardLogger`` and ``LearningRateMonitor``: the lr
  update N uses, logged at step N, once per micro-batch under accumulation;
- Accelerate's gradient accumulation, with the scheduler stepped per micro-batch (the bug);
- megatron-core's own ``OptimizerParamScheduler``, stepped as ``train_step`` steps it and logged
  with ``training_log``'s format strings.

Clean runs exit 0; each bug exits 1 with its first update and its cause.
"""

from __future__ import annotations

import warnings

import pytest

import schedlang

torch = pytest.importorskip("torch")


def _sched(tmp_path, text: str):
    path = tmp_path / "run.sched"
    path.write_text(text)
    return path


# -- transformers' Trainer ------------------------------------------------------------------

HF_FILE = """\
param total: int = 10 where total > 2
schedule lr = hf.linear(lr=1e-3, num_warmup_steps=2, num_training_steps=total)
"""


def _hf_train(output, *, accumulation: int = 1, scheduler_total: int | None = None):
    transformers = pytest.importorskip("transformers")

    class Tiny(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Linear(2, 1)

        def forward(self, x, y):
            return {"loss": ((self.w(x).squeeze(-1) - y) ** 2).mean()}

    torch.manual_seed(0)
    data = [{"x": torch.randn(2), "y": torch.tensor(1.0)} for _ in range(128)]
    args = transformers.TrainingArguments(
        output_dir=str(output), max_steps=10, logging_steps=1, learning_rate=1e-3,
        lr_scheduler_type="linear", warmup_steps=2, report_to=["tensorboard"], save_strategy="steps",
        save_steps=10, use_cpu=True, per_device_train_batch_size=2, disable_tqdm=True,
        gradient_accumulation_steps=accumulation)
    model = Tiny()
    optimizers = (None, None)
    if scheduler_total is not None:  # the user builds the scheduler, for the wrong total
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        optimizers = (optimizer, transformers.get_linear_schedule_with_warmup(optimizer, 2, scheduler_total))
    trainer = transformers.Trainer(model=model, args=args, train_dataset=data, optimizers=optimizers)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer.train()
    return output


@pytest.fixture(scope="module")
def hf_run(tmp_path_factory):
    return _hf_train(tmp_path_factory.mktemp("hf"))


def test_hf_trainer_state_follows_the_file(hf_run, tmp_path):
    """The real Trainer: ``global_step`` N holds the lr update N-1 used (transformers >= 4.51)."""
    report = schedlang.audit(_sched(tmp_path, HF_FILE), hf_run / "checkpoint-10")
    assert (report.format, report.series, report.convention.name) == \
        ("hf-trainer-state", "learning_rate", "hf")
    assert report.followed and report.matched == 10
    older = schedlang.audit(_sched(tmp_path, HF_FILE), hf_run, convention="hf-before-4.51")
    assert older.cause.kind == "late"  # the convention is what tells them apart


def test_hf_tensorboard_callback_events_follow_the_file(hf_run, tmp_path):
    report = schedlang.audit(_sched(tmp_path, HF_FILE), next(hf_run.rglob("*tfevents*")).parent)
    assert (report.format, report.series, report.convention.name) == \
        ("tensorboard", "train/learning_rate", "hf")
    assert report.followed and report.matched == 10


def test_hf_scheduler_built_for_the_undivided_total(tmp_path):
    """speculators PR#859: the total not divided by the gradient accumulation (4)."""
    run = _hf_train(tmp_path / "out", accumulation=4, scheduler_total=40)
    report = schedlang.audit(_sched(tmp_path, HF_FILE), run)
    assert not report.followed and report.first_deviation.step == 3  # the first update of the decay
    assert (report.cause.kind, report.cause.param, report.cause.total) == ("horizon", "total", 40)


# -- Lightning ------------------------------------------------------------------------------

L_FILE = """\
schedule lr = warmup(linear, 3) >> cosine(1e-3, 1e-4, 9)
"""


def _lightning_train(root, *, accumulation: int = 1, extra_steps: int = 0):
    L = pytest.importorskip("lightning")
    from lightning.pytorch.callbacks import LearningRateMonitor
    from lightning.pytorch.loggers import CSVLogger, TensorBoardLogger

    program = schedlang.compile(L_FILE)

    class Module(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Linear(2, 1)

        def training_step(self, batch, index):
            for _ in range(extra_steps):  # a scheduler also stepped by hand: twice per update
                if (index + 1) % accumulation == 0:
                    self.lr_schedulers().step()
            return self.w(batch).pow(2).mean()

        def configure_optimizers(self):
            optimizer = torch.optim.AdamW(self.parameters(), lr=1e-3)
            return {"optimizer": optimizer, "lr_scheduler": {
                "scheduler": program.scheduler_class("Run")(optimizer), "interval": "step"}}

    data = torch.utils.data.DataLoader(torch.randn(200, 2), batch_size=2)
    trainer = L.Trainer(max_steps=16, accelerator="cpu", log_every_n_steps=1,
                        accumulate_grad_batches=accumulation,
                        logger=[CSVLogger(str(root)), TensorBoardLogger(str(root))],
                        callbacks=[LearningRateMonitor(logging_interval="step")],
                        enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer.fit(Module(), data)
    return root


@pytest.mark.parametrize("accumulation", [1, 2])
def test_lightning_csv_and_tensorboard_loggers_follow_the_file(tmp_path, accumulation):
    root = _lightning_train(tmp_path, accumulation=accumulation)
    metrics = next(root.rglob("metrics.csv"))
    report = schedlang.audit(_sched(tmp_path, L_FILE), metrics)
    assert (report.format, report.series, report.convention.name) == \
        ("lightning-csv", "lr-AdamW", "lightning")
    assert report.followed, report.to_json()
    assert report.matched == 16 * accumulation  # once per micro-batch, at the same step
    assert schedlang.audit(_sched(tmp_path, L_FILE), metrics.parent).followed  # the version_N folder
    events = next(root.rglob("*tfevents*"))
    report = schedlang.audit(_sched(tmp_path, L_FILE), events.parent)
    assert (report.series, report.convention.name) == ("lr-AdamW", "lightning") and report.followed


def test_lightning_scheduler_stepped_twice_per_update(tmp_path):
    root = _lightning_train(tmp_path, extra_steps=1)
    report = schedlang.audit(_sched(tmp_path, L_FILE), next(root.rglob("metrics.csv")))
    assert report.first_deviation.step == 1 and (report.cause.kind, report.cause.k) == ("stepped", 2)


# -- Accelerate -----------------------------------------------------------------------------


def test_accelerate_accumulation_with_the_scheduler_stepped_per_micro_batch(tmp_path):
    """The scheduler not passed to ``accelerator.prepare``, stepped under ``accumulate`` on every
    micro-batch: the prepared optimizer skips 3 of 4 steps, the scheduler does not."""
    accelerate = pytest.importorskip("accelerate")
    program = schedlang.compile(L_FILE)
    accelerator = accelerate.Accelerator(gradient_accumulation_steps=4, cpu=True)
    model = torch.nn.Linear(2, 1)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scheduler = program.scheduler_class("Run")(optimizer)
    model, optimizer = accelerator.prepare(model, optimizer)
    rows, update = ["step,lr"], 0
    for batch in torch.randn(64, 2).split(2):
        with accelerator.accumulate(model):
            if accelerator.sync_gradients:
                rows.append(f"{update},{scheduler.get_last_lr()[0]!r}")
                update += 1
            accelerator.backward(model(batch).pow(2).mean())
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
    log = tmp_path / "lr.csv"
    log.write_text("\n".join(rows) + "\n")
    report = schedlang.audit(_sched(tmp_path, L_FILE), log)
    assert update == 8 and (report.cause.kind, report.cause.k) == ("stepped", 4), report.to_json()


def test_accelerate_prepared_scheduler_on_eight_processes(tmp_path, monkeypatch):
    """RuiningLi/particulate#22: a scheduler passed to ``accelerator.prepare`` steps
    ``num_processes`` times per update.  Accelerate's own ``AcceleratedScheduler.step`` runs;
    only the world size it reads is 8 (a CPU test cannot launch 8 processes)."""
    accelerate = pytest.importorskip("accelerate")
    scheduler_module = pytest.importorskip("accelerate.scheduler")
    program = schedlang.compile(L_FILE)
    accelerator = accelerate.Accelerator(cpu=True)
    model = torch.nn.Linear(2, 1)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model, optimizer, scheduler = accelerator.prepare(model, optimizer,
                                                      program.scheduler_class("Run")(optimizer))

    class EightProcesses:
        num_processes = 8

    monkeypatch.setattr(scheduler_module, "AcceleratorState", EightProcesses)
    rows = ["step,lr"]
    for update, batch in enumerate(torch.randn(8, 2).split(2)):
        rows.append(f"{update},{scheduler.get_last_lr()[0]!r}")
        accelerator.backward(model(batch).pow(2).mean())
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
    log = tmp_path / "lr.csv"
    log.write_text("\n".join(rows) + "\n")
    report = schedlang.audit(_sched(tmp_path, L_FILE), log)
    assert report.first_deviation.step == 1
    assert (report.cause.kind, report.cause.k, report.cause.phase) == ("stepped", 8, 0)


# -- Megatron -------------------------------------------------------------------------------

M_FILE = """\
schedule lr = megatron.OptimizerParamScheduler(init_lr=0, max_lr=1e-3, min_lr=1e-5, \
lr_warmup_steps=5, lr_decay_steps=30, lr_decay_style="cosine")
"""


def _megatron_log(path, *, restart_at: int | None = None, iterations: int = 40):
    """megatron-core's scheduler stepped as ``train_step`` steps it (after the optimizer), and
    the line ``training_log`` prints after it (its format strings)."""
    pytest.importorskip("megatron.core")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from megatron.core.optimizer_param_scheduler import OptimizerParamScheduler

    model = torch.nn.Linear(2, 1)
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.0)

    def build():
        return OptimizerParamScheduler(optimizer, init_lr=0.0, max_lr=1e-3, min_lr=1e-5, lr_warmup_steps=5,
                                       lr_decay_steps=30, lr_decay_style="cosine", start_wd=0.0, end_wd=0.0,
                                       wd_incr_steps=30, wd_incr_style="constant")

    scheduler = build()
    lines = ["using world size: 1", "> building GPT model ..."]
    for iteration in range(1, iterations + 1):
        if restart_at is not None and iteration == restart_at + 1:
            scheduler = build()  # a resume that rebuilt the scheduler without its state
        model(torch.ones(2)).sum().backward()
        optimizer.step()
        scheduler.step(increment=1)
        learning_rate = optimizer.param_groups[0]["lr"]
        log_string = " [2026-12-01 10:00:00.000000]"
        log_string += f" iteration {iteration:8d}/{iterations:8d} |"
        log_string += f" consumed samples: {iteration * 8:12d} |"
        log_string += f" elapsed time per iteration (ms): {12.5:.1f} |"
        log_string += f" learning rate: {learning_rate:.6E} |"
        log_string += f" global batch size: {8:5d} |"
        log_string += " lm loss: 1.000000E+01 |"
        lines.append(log_string)
    path.write_text("\n".join(lines) + "\n")
    return path


def test_megatron_training_log_follows_the_file(tmp_path):
    log = _megatron_log(tmp_path / "train.log")
    report = schedlang.audit(_sched(tmp_path, M_FILE), log)
    assert (report.format, report.series, report.convention.name) == \
        ("megatron-log", "learning rate", "megatron")
    assert report.followed and report.matched == 40
    assert 0 < report.max_diff < 5e-7  # seven printed digits


def test_megatron_restarted_scheduler(tmp_path):
    log = _megatron_log(tmp_path / "train.log", restart_at=20)
    report = schedlang.audit(_sched(tmp_path, M_FILE), log)
    assert report.first_deviation.step == 21 and report.first_deviation.line == 2 + 21
    assert (report.cause.kind, report.cause.step) == ("restarted", 20)
