"""The parity atlas's input: one canonical schedule per family, written in every library.

Each family fixes one schedule (peak ``1e-3``, warmup 100 steps, 1000 steps in all, ...)
and writes it with each library's preset, under that library's own keywords, with the
mapping that comes closest (equal wherever some mapping is).  ``pitfalls`` are the
mappings users write by mistake, or a library's defaults, each compared with that
library's mapping.  No verdict is written here: ``atlas.render`` asks
``schedlang.equivalent`` for every one, and ``docs/atlas.md`` shows what it answered.
The notes say how a library's keywords map onto the family's numbers and why its
formula differs where it does; the verdicts (and the step they give) are computed.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Entry:
    library: str     # namespace of the preset ("schedlang" for the plain-language reference)
    call: str        # one schedlang expression, the library's call under its own keywords
    note: str = ""   # the mapping, and what the library's formula does differently
    label: str = ""  # what a pitfall changes, e.g. "warmup_prefix=false"


@dataclass(frozen=True)
class Family:
    key: str                 # anchor of the section
    title: str
    canonical: str           # the schedule in words
    entries: tuple[Entry, ...]
    pitfalls: tuple[Entry, ...] = ()
    absent: str = ""         # libraries with no built-in schedule of this family
    steps: int | None = 1000  # the training run (t = 0 .. steps - 1); None: the family has no end
    symbolic: tuple[Entry, ...] = ()  # the same calls with parameters (SYMBOLIC_PARAMS), first the reference


DEEPSPEED_LATE = ("DeepSpeed's warmup is one step late: 0 at steps 0 and 1, then the value of step `t` is "
                  "the others' value of step `t - 1`")
TITAN_WARMUP = ("the warmup is `(t + 1) / warmup_steps`, one step early (the peak at step 99), so no mapping "
                "starts at 0; from step 100 to 1000 it equals the reference")
MMENGINE_COSINE_END = ("; the cosine's window ends at `end`, and from step 1000 on mmengine holds the "
                       "value of step 999, not the floor")
MMENGINE_DECAY_END = "; the decay's window has the same N, so it ends at step 999"
MMENGINE_WARMUP = ("LinearLR's start_factor must be > 0, so the warmup cannot start at 0, and it reaches "
                   "end_factor at step `end - 1` (its N is `end - begin - 1`), one step before the others")

#: The parameters of the symbolic rows: for every peak, warmup and total with 0 < warm < total.
SYMBOLIC_PARAMS = ("param peak: float where peak > 0", "param warm: int where warm > 0",
                   "param total: int where total > warm")

COSINE = Family(
    key="cosine",
    title="Cosine with linear warmup",
    canonical="peak 1e-3; linear warmup from 0 over 100 steps (the peak at step 100); "
              "cosine down to 0 at step 1000; 0 after",
    entries=(
        Entry("schedlang", "warmup(linear, 100) >> cosine(1e-3, 0, 900)"),
        Entry("hf", "hf.cosine(lr=1e-3, num_warmup_steps=100, num_training_steps=1000)",
              "num_training_steps is the total, warmup included; past it the cosine rises again "
              "(HF does not clamp its progress at 1)"),
        Entry("composer", "composer.CosineAnnealingWithWarmupScheduler(lr=1e-3, t_warmup=100ba, "
                          "t_max=1000ba)",
              "t_max is the total, warmup included"),
        Entry("torch", "torch.SequentialLR(lr=1e-3, schedulers=[torch.LinearLR(start_factor=0.001, "
                       "total_iters=100), torch.CosineAnnealingLR(T_max=900)], milestones=[100])",
              "LinearLR's start_factor must be > 0, so the warmup cannot start at 0; "
              "CosineAnnealingLR is periodic, so past T_max it rises again"),
        Entry("optax", "optax.warmup_cosine_decay_schedule(init_value=0.0, peak_value=1e-3, "
                       "warmup_steps=100, decay_steps=1000)",
              "decay_steps is the total, warmup included"),
        Entry("megatron", 'megatron.OptimizerParamScheduler(max_lr=1e-3, min_lr=0.0, lr_warmup_steps=100, '
                          'lr_decay_steps=1000, lr_decay_style="cosine")',
              "lr_decay_steps (`--lr-decay-iters`) counts from step 0, warmup included"),
        Entry("torchtitan", 'torchtitan.lr_scheduler(lr=1e-3, training_steps=1000, warmup_steps=100, '
                            'decay_type="cosine")',
              TITAN_WARMUP),
        Entry("deepspeed", 'deepspeed.WarmupCosineLR(lr=1e-3, total_num_steps=1000, warmup_num_steps=100, '
                           'warmup_type="linear", cos_min_ratio=0.0)',
              DEEPSPEED_LATE + "; its cosine then starts one step in (step 101 has the cosine's "
              "second value), so the peak itself is never reached"),
        Entry("timm", "timm.CosineLRScheduler(lr=1e-3, t_initial=900, warmup_t=100, warmup_prefix=true)",
              "with warmup_prefix=true, t_initial is the decay alone (total - warmup)"),
        Entry("mmengine", "mmengine.param_scheduler(schedulers=[mmengine.LinearLR(lr=1e-3, "
                          "start_factor=0.001, "
                          "by_epoch=false, end=100), mmengine.CosineAnnealingLR(lr=1e-3, T_max=900, "
                          "by_epoch=false, "
                          "begin=100, end=1000)])",
              MMENGINE_WARMUP + MMENGINE_COSINE_END),
        Entry("keras", "keras.CosineDecay(initial_learning_rate=0.0, decay_steps=900, warmup_target=1e-3, "
                       "warmup_steps=100)",
              "decay_steps is the decay alone (total - warmup); the warmup starts at initial_learning_rate"),
        Entry("cerebras", "cerebras.SequentialLR(schedulers=[cerebras.LinearLR(initial_learning_rate=0.0, "
                          "end_learning_rate=1e-3, total_iters=100), cerebras.CosineDecayLR("
                          "initial_learning_rate=1e-3, end_learning_rate=0.0, total_iters=900)])",
              "ModelZoo's SequentialLR: the milestone is the first child's total_iters"),
    ),
    pitfalls=(
        Entry("optax", "optax.warmup_cosine_decay_schedule(init_value=0.0, peak_value=1e-3, "
                       "warmup_steps=100, decay_steps=900)",
              "decay_steps includes the warmup: 900 makes the cosine end at step 900", "decay_steps=900"),
        Entry("keras", "keras.CosineDecay(initial_learning_rate=0.0, decay_steps=1000, warmup_target=1e-3, "
                       "warmup_steps=100)",
              "Keras' decay_steps excludes the warmup: 1000 makes the cosine end at step 1100",
              "decay_steps=1000"),
        Entry("timm", "timm.CosineLRScheduler(lr=1e-3, t_initial=1000, warmup_t=100)",
              "timm's default warmup_prefix=false: the cosine is measured from step 0, so the warmup "
              "replaces its first 100 steps and the peak is never reached",
              "warmup_prefix=false (the default)"),
        Entry("deepspeed", "deepspeed.WarmupCosineLR(lr=1e-3, total_num_steps=1000, warmup_num_steps=100)",
              "DeepSpeed's defaults: a log-shaped warmup (warmup_type=\"log\") and cos_min_ratio=1e-4",
              "defaults"),
        Entry("megatron", 'megatron.OptimizerParamScheduler(max_lr=1e-3, min_lr=0.0, lr_warmup_steps=100, '
                          'lr_decay_steps=900, lr_decay_style="cosine")',
              "lr_decay_steps counts from step 0: 900 ends the decay at step 900", "lr_decay_steps=900"),
    ),
    symbolic=(
        Entry("schedlang", "warmup(linear, warm) >> cosine(peak, 0, total - warm)"),
        Entry("hf", "hf.cosine(lr=peak, num_warmup_steps=warm, num_training_steps=total)"),
        Entry("composer", "composer.CosineAnnealingWithWarmupScheduler(lr=peak, t_warmup=warm, t_max=total)"),
        Entry("optax", "optax.warmup_cosine_decay_schedule(init_value=0.0, peak_value=peak, "
                       "warmup_steps=warm, decay_steps=total)"),
        Entry("megatron", 'megatron.OptimizerParamScheduler(max_lr=peak, min_lr=0.0, lr_warmup_steps=warm, '
                          'lr_decay_steps=total, lr_decay_style="cosine")'),
        Entry("torchtitan", 'torchtitan.lr_scheduler(lr=peak, training_steps=total, warmup_steps=warm, '
                            'decay_type="cosine")'),
        Entry("deepspeed", 'deepspeed.WarmupCosineLR(lr=peak, total_num_steps=total, warmup_num_steps=warm, '
                           'warmup_type="linear", cos_min_ratio=0.0)'),
        Entry("timm", "timm.CosineLRScheduler(lr=peak, t_initial=total - warm, warmup_t=warm, "
                      "warmup_prefix=true)"),
        Entry("keras", "keras.CosineDecay(initial_learning_rate=0.0, decay_steps=total - warm, "
                       "warmup_target=peak, warmup_steps=warm)"),
        Entry("cerebras", "cerebras.SequentialLR(schedulers=[cerebras.LinearLR(initial_learning_rate=0.0, "
                          "end_learning_rate=peak, total_iters=warm), cerebras.CosineDecayLR("
                          "initial_learning_rate=peak, end_learning_rate=0.0, total_iters=total - warm)])"),
    ),
)

COSINE_FLOOR = Family(
    key="cosine-floor",
    title="Cosine with warmup to a 10% floor",
    canonical="peak 1e-3; linear warmup from 0 over 100 steps; cosine down to 1e-4 (10% of the peak) "
              "at step 1000; 1e-4 after",
    entries=(
        Entry("schedlang", "warmup(linear, 100) >> cosine(1e-3, 1e-4, 900)"),
        Entry("hf", "hf.cosine_with_min_lr(lr=1e-3, num_warmup_steps=100, num_training_steps=1000, "
                    "min_lr_rate=0.1)",
              "min_lr_rate is a fraction of lr (or min_lr absolute); past the end the cosine rises again"),
        Entry("composer", "composer.CosineAnnealingWithWarmupScheduler(lr=1e-3, t_warmup=100ba, "
                          "t_max=1000ba, "
                          "alpha_f=0.1)",
              "alpha_f is a fraction of the optimizer's lr"),
        Entry("torch", "torch.SequentialLR(lr=1e-3, schedulers=[torch.LinearLR(start_factor=0.001, "
                       "total_iters=100), torch.CosineAnnealingLR(T_max=900, eta_min=1e-4)], "
                       "milestones=[100])",
              "eta_min is absolute; the warmup cannot start at 0 and the cosine is periodic"),
        Entry("optax", "optax.warmup_cosine_decay_schedule(init_value=0.0, peak_value=1e-3, "
                       "warmup_steps=100, "
                       "decay_steps=1000, end_value=1e-4)",
              "end_value is absolute"),
        Entry("megatron", 'megatron.OptimizerParamScheduler(max_lr=1e-3, min_lr=1e-4, lr_warmup_steps=100, '
                          'lr_decay_steps=1000, lr_decay_style="cosine")',
              "min_lr is absolute; the warmup starts at init_lr (0), not at min_lr"),
        Entry("torchtitan", 'torchtitan.lr_scheduler(lr=1e-3, training_steps=1000, warmup_steps=100, '
                            'decay_type="cosine", min_lr_factor=0.1)',
              "min_lr_factor is a fraction of lr; " + TITAN_WARMUP),
        Entry("deepspeed", 'deepspeed.WarmupCosineLR(lr=1e-3, total_num_steps=1000, warmup_num_steps=100, '
                           'warmup_type="linear", cos_min_ratio=0.1)',
              "cos_min_ratio is a fraction of lr; " + DEEPSPEED_LATE),
        Entry("timm", "timm.CosineLRScheduler(lr=1e-3, t_initial=900, lr_min=1e-4, warmup_t=100, "
                      "warmup_prefix=true)",
              "lr_min is absolute"),
        Entry("mmengine", "mmengine.param_scheduler(schedulers=[mmengine.LinearLR(lr=1e-3, "
                          "start_factor=0.001, "
                          "by_epoch=false, end=100), mmengine.CosineAnnealingLR(lr=1e-3, T_max=900, "
                          "eta_min=1e-4, "
                          "by_epoch=false, begin=100, end=1000)])",
              "eta_min is absolute (eta_min_ratio a fraction); " + MMENGINE_WARMUP + MMENGINE_COSINE_END),
        Entry("keras", "keras.CosineDecay(initial_learning_rate=0.0, decay_steps=900, alpha=0.1, "
                       "warmup_target=1e-3, warmup_steps=100)",
              "alpha is a fraction of the peak (warmup_target), not an absolute lr"),
        Entry("cerebras", "cerebras.SequentialLR(schedulers=[cerebras.LinearLR(initial_learning_rate=0.0, "
                          "end_learning_rate=1e-3, total_iters=100), cerebras.CosineDecayLR("
                          "initial_learning_rate=1e-3, end_learning_rate=1e-4, total_iters=900)])",
              "end_learning_rate is absolute"),
    ),
    pitfalls=(
        Entry("keras", "keras.CosineDecay(initial_learning_rate=0.0, decay_steps=900, alpha=1e-4, "
                       "warmup_target=1e-3, warmup_steps=100)",
              "alpha is a fraction: alpha=1e-4 gives a floor of 1e-7", "alpha=1e-4 (absolute)"),
        Entry("megatron", 'megatron.OptimizerParamScheduler(init_lr=1e-4, max_lr=1e-3, min_lr=1e-4, '
                          'lr_warmup_steps=100, lr_decay_steps=1000, lr_decay_style="cosine")',
              "starting the warmup at the floor (init_lr=min_lr) changes the warmup only",
              "init_lr=min_lr"),
        Entry("hf", "hf.cosine_with_min_lr(lr=1e-3, num_warmup_steps=100, num_training_steps=1000, "
                    "min_lr=0.1)",
              "min_lr is absolute: 0.1 is a hundred times the peak", "min_lr=0.1"),
    ),
)

LINEAR = Family(
    key="linear",
    title="Linear warmup, linear decay",
    canonical="peak 1e-3; linear warmup from 0 over 100 steps; linear decay to 0 at step 1000; 0 after",
    entries=(
        Entry("schedlang", "warmup(linear, 100) >> linear(1e-3, 0, 900)"),
        Entry("hf", "hf.linear(lr=1e-3, num_warmup_steps=100, num_training_steps=1000)",
              "num_training_steps is the total"),
        Entry("composer", "composer.LinearWithWarmupScheduler(lr=1e-3, t_warmup=100ba, t_max=1000ba)",
              "t_max is the total"),
        Entry("torch", "torch.SequentialLR(lr=1e-3, schedulers=[torch.LinearLR(start_factor=0.001, "
                       "total_iters=100), torch.LinearLR(start_factor=1.0, end_factor=0.0, "
                       "total_iters=900)], "
                       "milestones=[100])",
              "the warmup cannot start at 0 (start_factor > 0)"),
        Entry("optax", "optax.join_schedules(schedules=[optax.linear_schedule(init_value=0.0, "
                       "end_value=1e-3, "
                       "transition_steps=100), optax.linear_schedule(init_value=1e-3, end_value=0.0, "
                       "transition_steps=900)], boundaries=[100])",
              "join_schedules restarts the second schedule's step count at the boundary"),
        Entry("megatron", 'megatron.OptimizerParamScheduler(max_lr=1e-3, min_lr=0.0, lr_warmup_steps=100, '
                          'lr_decay_steps=1000, lr_decay_style="linear")',
              "lr_decay_steps counts from step 0"),
        Entry("torchtitan", 'torchtitan.lr_scheduler(lr=1e-3, training_steps=1000, warmup_steps=100, '
                            'decay_type="linear")',
              TITAN_WARMUP),
        Entry("deepspeed", 'deepspeed.WarmupDecayLR(total_num_steps=1000, warmup_min_lr=0.0, '
                           'warmup_max_lr=1e-3, '
                           'warmup_num_steps=100, warmup_type="linear")',
              DEEPSPEED_LATE + ", and so is the decay: the peak at step 101, 0 at step 1001"),
        Entry("timm", "timm.PolyLRScheduler(lr=1e-3, t_initial=900, power=1.0, warmup_t=100, "
                      "warmup_prefix=true)",
              "PolyLRScheduler with power=1 (its default is 0.5)"),
        Entry("mmengine", "mmengine.param_scheduler(schedulers=[mmengine.LinearLR(lr=1e-3, "
                          "start_factor=0.001, "
                          "by_epoch=false, end=100), mmengine.LinearLR(lr=1e-3, start_factor=1.0, "
                          "end_factor=0.0, "
                          "by_epoch=false, begin=100, end=1000)])",
              MMENGINE_WARMUP + MMENGINE_DECAY_END),
        Entry("cerebras", "cerebras.SequentialLR(schedulers=[cerebras.LinearLR(initial_learning_rate=0.0, "
                          "end_learning_rate=1e-3, total_iters=100), "
                          "cerebras.LinearLR(initial_learning_rate=1e-3, "
                          "end_learning_rate=0.0, total_iters=900)])"),
    ),
    pitfalls=(
        Entry("timm", "timm.PolyLRScheduler(lr=1e-3, t_initial=900, warmup_t=100, warmup_prefix=true)",
              "PolyLRScheduler's default power is 0.5, not 1", "power left at its default"),
    ),
    symbolic=(
        Entry("schedlang", "warmup(linear, warm) >> linear(peak, 0, total - warm)"),
        Entry("hf", "hf.linear(lr=peak, num_warmup_steps=warm, num_training_steps=total)"),
        Entry("composer", "composer.LinearWithWarmupScheduler(lr=peak, t_warmup=warm, t_max=total)"),
        Entry("optax", "optax.join_schedules(schedules=[optax.linear_schedule(init_value=0.0, "
                       "end_value=peak, "
                       "transition_steps=warm), optax.linear_schedule(init_value=peak, end_value=0.0, "
                       "transition_steps=total - warm)], boundaries=[warm])"),
        Entry("megatron", 'megatron.OptimizerParamScheduler(max_lr=peak, min_lr=0.0, lr_warmup_steps=warm, '
                          'lr_decay_steps=total, lr_decay_style="linear")'),
        Entry("torchtitan", 'torchtitan.lr_scheduler(lr=peak, training_steps=total, warmup_steps=warm, '
                            'decay_type="linear")'),
        Entry("deepspeed", 'deepspeed.WarmupDecayLR(total_num_steps=total, warmup_min_lr=0.0, '
                           'warmup_max_lr=peak, '
                           'warmup_num_steps=warm, warmup_type="linear")'),
        Entry("timm", "timm.PolyLRScheduler(lr=peak, t_initial=total - warm, power=1.0, warmup_t=warm, "
                      "warmup_prefix=true)"),
        Entry("cerebras", "cerebras.SequentialLR(schedulers=[cerebras.LinearLR(initial_learning_rate=0.0, "
                          "end_learning_rate=peak, total_iters=warm), "
                          "cerebras.LinearLR(initial_learning_rate=peak, "
                          "end_learning_rate=0.0, total_iters=total - warm)])"),
    ),
    absent="keras (PolynomialDecay has no warmup)",
)

CONSTANT = Family(
    key="constant",
    title="Constant with linear warmup",
    canonical="linear warmup from 0 over 100 steps, then 1e-3 for ever",
    entries=(
        Entry("schedlang", "warmup(linear, 100) >> constant(1e-3)"),
        Entry("hf", "hf.constant_with_warmup(lr=1e-3, num_warmup_steps=100)"),
        Entry("composer", "composer.ConstantWithWarmupScheduler(lr=1e-3, t_warmup=100ba, t_max=1000ba)",
              "t_max must be given (its default 1dur needs the run's length) and changes nothing"),
        Entry("torch", "torch.LinearLR(lr=1e-3, start_factor=0.001, total_iters=100)",
              "the warmup cannot start at 0 (start_factor > 0)"),
        Entry("optax", "optax.warmup_constant_schedule(init_value=0.0, peak_value=1e-3, warmup_steps=100)"),
        Entry("megatron", 'megatron.OptimizerParamScheduler(max_lr=1e-3, lr_warmup_steps=100, '
                          'lr_decay_steps=1000, lr_decay_style="constant")',
              "lr_decay_style=\"constant\" ignores lr_decay_steps"),
        Entry("torchtitan", 'torchtitan.lr_scheduler(lr=1e-3, training_steps=1000, warmup_steps=100, '
                            'decay_ratio=0.0)',
              "decay_ratio=0 leaves no decay; " + TITAN_WARMUP),
        Entry("deepspeed", 'deepspeed.WarmupLR(warmup_min_lr=0.0, warmup_max_lr=1e-3, warmup_num_steps=100, '
                           'warmup_type="linear")',
              DEEPSPEED_LATE + ": the peak at step 101"),
        Entry("timm", "timm.StepLRScheduler(lr=1e-3, decay_t=1000, decay_rate=1.0, warmup_t=100)",
              "timm has no constant scheduler: StepLRScheduler with decay_rate=1"),
        Entry("mmengine", "mmengine.LinearLR(lr=1e-3, start_factor=0.001, by_epoch=false, end=100)",
              MMENGINE_WARMUP),
        Entry("cerebras", "cerebras.SequentialLR(schedulers=[cerebras.LinearLR(initial_learning_rate=0.0, "
                          "end_learning_rate=1e-3, total_iters=100), "
                          "cerebras.ConstantLR(learning_rate=1e-3)])"),
    ),
    pitfalls=(
        Entry("deepspeed", "deepspeed.WarmupLR(warmup_max_lr=1e-3, warmup_num_steps=100)",
              "DeepSpeed's default warmup_type is \"log\": a log-shaped warmup", "defaults"),
    ),
    absent="keras (its only warmup is CosineDecay's)",
)

INVERSE_SQRT = Family(
    key="inverse-sqrt",
    title="Inverse square root with warmup",
    canonical="linear warmup from 0 over 100 steps, then `1e-3 * sqrt(100 / t)` for ever",
    entries=(
        Entry("schedlang", "warmup(linear, 100) >> rsqrt_decay(1e-3, 100)"),
        Entry("hf", "hf.inverse_sqrt(lr=1e-3, num_warmup_steps=100)",
              "timescale defaults to num_warmup_steps"),
        Entry("composer", "composer.InverseSquareRootWithWarmupScheduler(lr=1e-3, t_warmup=100ba, "
                          "t_scale=100ba, t_cooldown=0ba, t_max=1000ba)",
              "llm-foundry's inv_sqrt_with_warmup stops at t_max (then a cooldown of t_cooldown steps); "
              "with t_cooldown=0 it holds its step-1000 value after"),
        Entry("megatron", 'megatron.OptimizerParamScheduler(max_lr=1e-3, min_lr=0.0, lr_warmup_steps=100, '
                          'lr_decay_steps=1000, lr_decay_style="inverse-square-root")',
              "`max_lr * sqrt(warmup / t)` after the warmup, but past lr_decay_steps Megatron returns min_lr "
              "(here 0): no lr_decay_steps makes it last for ever"),
        Entry("cerebras", "cerebras.InverseSquareRootDecayLR(initial_learning_rate=1e-3, scale=10.0, "
                          "warmup_steps=100)",
              "`I * scale / sqrt(max(warmup_steps, t))` with scale = sqrt(warmup_steps): the same decay, "
              "but flat at the peak before warmup_steps instead of a ramp (and inside a SequentialLR "
              "the decay would restart its step count)"),
    ),
    absent="torch, optax, torchtitan, deepspeed, timm, mmengine, keras",
)

POLYNOMIAL = Family(
    key="polynomial",
    title="Polynomial (power 2) with warmup",
    canonical="peak 1e-3; linear warmup from 0 over 100 steps; `(1 - s/900)^2` decay to 0 at step 1000; 0 "
              "after",
    entries=(
        Entry("schedlang", "warmup(linear, 100) >> poly(1e-3, 0, 900, power=2)"),
        Entry("hf", "hf.polynomial(lr=1e-3, num_warmup_steps=100, num_training_steps=1000, lr_end=0.0, "
                    "power=2.0)",
              "lr_end defaults to 1e-7"),
        Entry("composer", "composer.PolynomialWithWarmupScheduler(lr=1e-3, t_warmup=100ba, power=2.0, "
                          "t_max=1000ba)"),
        Entry("torch", "torch.SequentialLR(lr=1e-3, schedulers=[torch.LinearLR(start_factor=0.001, "
                       "total_iters=100), torch.PolynomialLR(total_iters=900, power=2.0)], milestones=[100])",
              "the warmup cannot start at 0 (start_factor > 0)"),
        Entry("optax", "optax.join_schedules(schedules=[optax.linear_schedule(init_value=0.0, "
                       "end_value=1e-3, "
                       "transition_steps=100), optax.polynomial_schedule(init_value=1e-3, end_value=0.0, "
                       "power=2, transition_steps=900)], boundaries=[100])"),
        Entry("timm", "timm.PolyLRScheduler(lr=1e-3, t_initial=900, power=2.0, warmup_t=100, "
                      "warmup_prefix=true)"),
        Entry("mmengine", "mmengine.param_scheduler(schedulers=[mmengine.LinearLR(lr=1e-3, "
                          "start_factor=0.001, "
                          "by_epoch=false, end=100), mmengine.PolyLR(lr=1e-3, power=2.0, by_epoch=false, "
                          "begin=100, end=1000)])",
              MMENGINE_WARMUP + MMENGINE_DECAY_END),
        Entry("cerebras", "cerebras.SequentialLR(schedulers=[cerebras.LinearLR(initial_learning_rate=0.0, "
                          "end_learning_rate=1e-3, total_iters=100), "
                          "cerebras.PolynomialLR(initial_learning_rate=1e-3, "
                          "end_learning_rate=0.0, total_iters=900, power=2.0)])"),
    ),
    pitfalls=(
        Entry("hf", "hf.polynomial(lr=1e-3, num_warmup_steps=100, num_training_steps=1000, power=2.0)",
              "HF's lr_end defaults to 1e-7, not 0", "lr_end left at its default"),
    ),
    absent="megatron, torchtitan, deepspeed (no polynomial decay); keras (PolynomialDecay has no warmup)",
)

STEP = Family(
    key="step",
    title="Step decay",
    canonical="1e-3, multiplied by 0.1 every 300 steps, for ever (no warmup)",
    entries=(
        Entry("schedlang", "step(1e-3, 0.1, 300)"),
        Entry("torch", "torch.StepLR(lr=1e-3, step_size=300, gamma=0.1)"),
        Entry("composer", "composer.StepScheduler(lr=1e-3, step_size=300ba, gamma=0.1)"),
        Entry("optax", "optax.exponential_decay(init_value=1e-3, transition_steps=300, decay_rate=0.1, "
                       "staircase=true)"),
        Entry("timm", "timm.StepLRScheduler(lr=1e-3, decay_t=300, decay_rate=0.1)"),
        Entry("mmengine", "mmengine.StepLR(lr=1e-3, step_size=300, gamma=0.1, by_epoch=false)"),
        Entry("keras", "keras.ExponentialDecay(initial_learning_rate=1e-3, decay_steps=300, decay_rate=0.1, "
                       "staircase=true)"),
        Entry("cerebras", "cerebras.StepLR(initial_learning_rate=1e-3, step_size=300, gamma=0.1)"),
    ),
    pitfalls=(
        Entry("keras", "keras.ExponentialDecay(initial_learning_rate=1e-3, decay_steps=300, decay_rate=0.1)",
              "staircase defaults to false: a smooth exponential", "staircase left at its default"),
        Entry("optax", "optax.exponential_decay(init_value=1e-3, transition_steps=300, decay_rate=0.1)",
              "staircase defaults to false: a smooth exponential", "staircase left at its default"),
    ),
    absent="hf, megatron, torchtitan, deepspeed",
    steps=None,
)

WSD = Family(
    key="wsd",
    title="Warmup-stable-decay (WSD)",
    canonical="linear warmup from 0 over 100 steps; 1e-3 until step 800; linear decay to 0 at step 1000; 0 "
              "after",
    entries=(
        Entry("schedlang", "warmup(linear, 100) >> constant(1e-3, 700) >> linear(1e-3, 0, 200)"),
        Entry("hf", 'hf.warmup_stable_decay(lr=1e-3, num_warmup_steps=100, num_training_steps=1000, '
                    'num_decay_steps=200, decay_type="linear")',
              "the stable phase is what num_training_steps leaves"),
        Entry("torch", "torch.SequentialLR(lr=1e-3, schedulers=[torch.LinearLR(start_factor=0.001, "
                       "total_iters=100), "
                       "torch.ConstantLR(factor=1.0, total_iters=700), torch.LinearLR(start_factor=1.0, "
                       "end_factor=0.0, total_iters=200)], milestones=[100, 800])",
              "the warmup cannot start at 0 (start_factor > 0)"),
        Entry("optax", "optax.join_schedules(schedules=[optax.linear_schedule(init_value=0.0, "
                       "end_value=1e-3, "
                       "transition_steps=100), optax.constant_schedule(value=1e-3), optax.linear_schedule("
                       "init_value=1e-3, end_value=0.0, transition_steps=200)], boundaries=[100, 800])"),
        Entry("megatron", 'megatron.OptimizerParamScheduler(max_lr=1e-3, min_lr=0.0, lr_warmup_steps=100, '
                          'lr_decay_steps=1000, lr_decay_style="WSD", wsd_decay_steps=200, '
                          'lr_wsd_decay_style="linear")',
              "the WSD style's decay is the last wsd_decay_steps of lr_decay_steps"),
        Entry("torchtitan", 'torchtitan.lr_scheduler(lr=1e-3, training_steps=1000, warmup_steps=100, '
                            'decay_ratio=0.2, decay_type="linear")',
              "decay_ratio is the decay's share of training_steps; " + TITAN_WARMUP),
        Entry("timm", 'timm.WSDLRScheduler(lr=1e-3, t_initial=900, decay_t=200, warmup_t=100, '
                      'decay_fn="linear")',
              "the warmup is always a prefix: t_initial is stable + decay"),
        Entry("mmengine", "mmengine.param_scheduler(schedulers=[mmengine.LinearLR(lr=1e-3, "
                          "start_factor=0.001, "
                          "by_epoch=false, end=100), mmengine.LinearLR(lr=1e-3, start_factor=1.0, "
                          "end_factor=0.0, "
                          "by_epoch=false, begin=800, end=1000)])",
              MMENGINE_WARMUP + MMENGINE_DECAY_END),
        Entry("cerebras", "cerebras.SequentialLR(schedulers=[cerebras.LinearLR(initial_learning_rate=0.0, "
                          "end_learning_rate=1e-3, total_iters=100), cerebras.ConstantLR(learning_rate=1e-3, "
                          "total_iters=700), cerebras.LinearLR(initial_learning_rate=1e-3, "
                          "end_learning_rate=0.0, "
                          "total_iters=200)])"),
    ),
    pitfalls=(
        Entry("hf", 'hf.warmup_stable_decay(lr=1e-3, num_warmup_steps=100, num_training_steps=1000, '
                    'num_decay_steps=200)',
              "HF's default decay_type is \"cosine\"", "decay_type left at its default"),
        Entry("timm", "timm.WSDLRScheduler(lr=1e-3, t_initial=900, decay_t=200, warmup_t=100)",
              "timm's default decay_fn is \"1-sqrt\"", "decay_fn left at its default"),
    ),
    absent="composer, deepspeed, keras",
)

ONECYCLE = Family(
    key="onecycle",
    title="One-cycle",
    canonical="torch's one-cycle: peak 1e-3 over 1000 steps, 30% up, cosine annealing, "
              "div_factor 25, final_div_factor 1e4",
    entries=(
        Entry("schedlang", "onecycle(1e-3, 1000)"),
        Entry("torch", "torch.OneCycleLR(max_lr=1e-3, total_steps=1000)"),
        Entry("optax", "optax.cosine_onecycle_schedule(transition_steps=1000, peak_value=1e-3)",
              "optax reaches the end value at transition_steps, torch one step earlier; the peak at "
              "`int(pct_start * T)`, torch at `pct_start * T - 1`"),
        Entry("mmengine", "mmengine.OneCycleLR(eta_max=1e-3, total_steps=1000, by_epoch=false, end=1000)",
              "end must be total_steps: mmengine raises one step past total_steps"),
        Entry("cerebras", "cerebras.OneCycleLR(initial_learning_rate=4e-5, max_lr=1e-3, total_steps=1000, "
                          "final_div_factor=10000.0)",
              "initial_learning_rate is the start (torch's max_lr / div_factor)"),
    ),
    absent="hf, composer, megatron, torchtitan, timm, keras; deepspeed's OneCycle is linear (a triangle)",
)

FAMILIES = (COSINE, COSINE_FLOOR, LINEAR, CONSTANT, INVERSE_SQRT, POLYNOMIAL, STEP, WSD, ONECYCLE)
