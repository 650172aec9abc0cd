"""Guide: a schedlang schedule in MosaicML Composer's ``Trainer``.

Run: ``python docs/guides/composer_trainer.py`` (needs ``mosaicml``; CPU, no
downloads: the model and its data are built here).  Two ways in:

1. ``prog["lr"].composer_scheduler()``, a native Composer scheduler that reads
   Composer time (``state.timestamp``, batches by default) and returns the
   multiplier Composer applies to the optimizer's initial lr; build the optimizer
   with ``lr=1.0`` and the multiplier is the lr.  Composer steps its schedulers after
   a batch but before it advances the timestamp, so batch k trains with the value at
   time ``max(k - 1, 0)``: the same lag as Composer's own schedulers, which the
   guide checks batch for batch against ``CosineAnnealingWithWarmupScheduler``.
2. The torch scheduler class with ``step_schedulers_every_batch=True``: stepped after
   every batch like any PyTorch scheduler, so batch k trains with ``prog["lr"](k)``.

Exits non-zero unless every run used the lr it should at every batch, past the end.
"""

import importlib.abc
import importlib.machinery
import importlib.util
import math
import sys
import types
import warnings


def stub_modules(*names):
    """Empty stand-ins for packages Composer imports but this run never uses.

    Composer 0.32 imports ``torchvision`` (its vision models and datasets; no build of
    it matches CPU torch 2.13 here) and ``mcli`` (the MosaicML platform logger, which
    pins an old ``rich``) at import time.  Any attribute of a stand-in is a class that
    accepts anything.
    """

    class Anything:
        def __init__(self, *args, **kwargs):
            pass

        def __call__(self, *args, **kwargs):
            return self

        def __getattr__(self, name):
            return Anything()

    class StubModule(types.ModuleType):
        def __getattr__(self, name):
            if name.startswith("__"):
                raise AttributeError(name)
            return type(name, (Anything,), {})

    class Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, fullname, path, target=None):
            if fullname.split(".")[0] in names:
                return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
            return None

        def create_module(self, spec):
            module = StubModule(spec.name)
            module.__path__ = []
            module.__version__ = "0.0.0"
            return module

        def exec_module(self, module):
            pass

    sys.meta_path.insert(0, Finder())


stub_modules(*(name for name in ("torchvision", "mcli")
               if importlib.util.find_spec(name) is None))

import torch  # noqa: E402
from composer import Trainer  # noqa: E402
from composer.models import ComposerModel  # noqa: E402
from composer.optim import CosineAnnealingWithWarmupScheduler  # noqa: E402
from guide_check import check, record_lrs, same_schedule  # noqa: E402

import schedlang  # noqa: E402
from schedlang import build as sb  # noqa: E402

# Composer's own spelling (the composer.* preset), so the native run can be compared
# with Composer's CosineAnnealingWithWarmupScheduler: lr = 1 * alpha.
SCHEDULE = """
schedule lr = composer.CosineAnnealingWithWarmupScheduler(t_warmup=4ba, t_max=24ba, alpha_f=0.1)
"""
BATCHES = 30  # past the end of the schedule (24); the loader has 16 batches an epoch


def built_schedule():
    """The same preset call in Python (``schedlang.build``): ``sb.time(4, "ba")`` is ``4ba``."""
    return sb.composer.CosineAnnealingWithWarmupScheduler(t_warmup=sb.time(4, "ba"),
                                                          t_max=sb.time(24, "ba"), alpha_f=0.1)


class TinyRegressor(ComposerModel):
    """What Composer needs from a model: ``forward(batch)`` and ``loss(outputs, batch)``."""

    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(4, 1)

    def forward(self, batch):
        x, _ = batch
        return self.net(x)

    def loss(self, outputs, batch):
        _, y = batch
        return torch.nn.functional.mse_loss(outputs, y)


def train(make_schedulers, batches=BATCHES, **trainer_options) -> list[float]:
    """Run the Trainer for ``batches`` batches; the lr each optimizer step used."""
    torch.manual_seed(0)
    xs = torch.randn(64, 4)
    data = torch.utils.data.TensorDataset(xs, xs.sum(dim=1, keepdim=True))
    loader = torch.utils.data.DataLoader(data, batch_size=4)
    model = TinyRegressor()
    opt = torch.optim.SGD(model.parameters(), lr=1.0)  # Composer's multipliers apply to 1.0
    used = record_lrs(opt)
    trainer = Trainer(model=model, train_dataloader=loader, max_duration=f"{batches}ba",
                      optimizers=opt, schedulers=make_schedulers(opt), device="cpu",
                      progress_bar=False, log_to_console=False, loggers=[], seed=0,
                      **trainer_options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer.fit()
    trainer.close()
    return used


def main() -> int:
    prog = schedlang.compile(SCHEDULE)
    lr = prog["lr"]
    if not same_schedule("Composer", built_schedule(), lr):
        return 1

    native = train(lambda opt: [lr.composer_scheduler(unit="ba")])
    # Batch 0 trains with the value at time 0, batch k + 1 with the value at time k.
    ok = native[0] == lr(0)
    ok &= check("Composer, native scheduler, batches 1.. (one batch late)", native[1:], lr)
    # Composer's own raises when max_duration passes its t_max: compare the first 24 batches.
    # The two differ by at most one rounding (the same formula, its terms in another order).
    theirs = train(lambda opt: [CosineAnnealingWithWarmupScheduler(t_warmup="4ba", t_max="24ba",
                                                                   alpha_f=0.1)], batches=24)
    same = all(math.isclose(ours, composer, rel_tol=1e-12, abs_tol=1e-15)
               for ours, composer in zip(native[:24], theirs, strict=True))
    print(f"Composer: the native scheduler and Composer's CosineAnnealingWithWarmupScheduler "
          f"{'agree' if same else 'DISAGREE'} at every batch")
    ok &= same

    exact = train(lambda opt: [prog.scheduler_class("Schedule")(opt)], step_schedulers_every_batch=True)
    ok &= check("Composer, torch scheduler class", exact, lr)
    ok &= len(native) == len(exact) == BATCHES
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
