"""OLMo-core 3.0.0 conformance cases (the cookbook's rows) and the loader of its real code.

``tools/install_frameworks.sh`` installs the ai2-olmo-core 3.0.0 wheel (no dependencies)
into ``.frameworks/ai2-olmo-core-3.0.0``; :func:`olmo` loads just
``olmo_core/optim/scheduler.py`` and ``olmo_core/exceptions.py`` from it, with the package
imports the scheduler module makes stubbed (``Config`` and ``Registrable`` as plain bases,
``get_rank`` giving 0).  A missing install skips locally and fails under CI.

Each case runs OLMo-core's trainer in steps: update ``k`` uses ``get_lr(lr, k + 1,
max_steps)`` (the trainer counts the step before the lr is set) for the run's ``max_steps``
updates.  ``test_olmo_core.py`` also runs every scheduler in tokens.
"""

from __future__ import annotations

import importlib.util
import sys
import types
import warnings
from enum import Enum
from pathlib import Path

from frameworks.framework_case import FrameworkCase
from frameworks.real import framework_file

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / ".frameworks/ai2-olmo-core-3.0.0/olmo_core"
_NAME = "_olmo_core_3_0_0"
WHAT = "ai2-olmo-core 3.0.0"


def _module(name: str, **attrs) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__path__ = []
    module.__dict__.update(attrs)
    sys.modules[name] = module
    return module


def olmo():
    """OLMo-core 3.0.0's ``olmo_core.optim.scheduler``, loaded from its file."""
    if f"{_NAME}.optim.scheduler" in sys.modules:
        return sys.modules[f"{_NAME}.optim.scheduler"]
    source = framework_file(PACKAGE / "optim" / "scheduler.py", WHAT)

    class Config:
        pass

    class Registrable:
        @classmethod
        def register(cls, name):
            return lambda subclass: subclass

    class StrEnum(str, Enum):
        def __str__(self):
            return self.value

    _module(_NAME)
    _module(f"{_NAME}.config", Config=Config, Registrable=Registrable, StrEnum=StrEnum)
    _module(f"{_NAME}.distributed")
    _module(f"{_NAME}.distributed.utils", get_rank=lambda: 0)
    _module(f"{_NAME}.optim")
    _module(f"{_NAME}.optim.config", INITIAL_LR_FIELD="initial_lr", LR_FIELD="lr")
    for name, path in (("exceptions", PACKAGE / "exceptions.py"), ("optim.scheduler", source)):
        spec = importlib.util.spec_from_file_location(f"{_NAME}.{name}", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    return sys.modules[f"{_NAME}.optim.scheduler"]


def build(name: str, kwargs: dict):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the deprecated warmup_steps / decay_steps
        return getattr(olmo(), name)(**kwargs)


def _value(v) -> str:
    return "[" + ", ".join(map(_value, v)) + "]" if isinstance(v, list) else repr(v)


def case(name: str, kwargs: dict, max_steps: int, lr: float = 8e-4, note: str = "") -> FrameworkCase:
    words = ", ".join(f"{k}={_value(v)}" for k, v in kwargs.items() if v is not None)
    olmo_words = ", ".join(f"{k}={_value(v)}" for k, v in kwargs.items())
    t_max = "" if name == "WSDS" else f", t_max={max_steps}"
    source = f"olmo_core.{name}(lr={lr!r}{t_max}, {words})" if words else \
        f"olmo_core.{name}(lr={lr!r}{t_max})"
    code = (f"scheduler = {name}({olmo_words})  # olmo_core.optim.scheduler\n"
            f"# the trainer, max_steps={max_steps}: global_step += 1, then\n"
            f"lr = scheduler.get_lr({lr!r}, trainer.global_step, {max_steps})")
    return FrameworkCase(f"olmo_core.{name}", source, "olmo_core", name, kwargs, max_steps, note=note,
                         code=code, anchor=lambda steps: [build(name, kwargs).get_lr(lr, k + 1, max_steps)
                                                          for k in steps])


OLMO_CORE = [
    case("ConstantScheduler", {}, 50),
    case("ConstantWithWarmup", {"warmup": 20}, 100),
    case("WSD", {"warmup": 20, "decay": 30, "decay_fraction": None}, 200,
         note="OLMo-core needs decay_fraction=None beside decay; schedlang takes decay alone"),
    case("WSD", {"warmup_fraction": 0.1, "decay_fraction": 0.25, "decay_min_lr": 1e-5}, 150),
    case("PowerLR", {"warmup": 20, "b": -0.51}, 200),
    case("LinearWithWarmup", {"warmup": 20, "alpha_f": 0.0}, 200),
    case("InvSqrtWithWarmup", {"warmup": 20}, 200),
    case("CosWithWarmup", {"warmup": 20}, 200),
    case("CosWithWarmup", {"warmup_fraction": 0.125, "alpha_f": 0.0}, 100,
         note="warmup = round(100 * 0.125) = 12: Python rounds 12.5 half to even"),
    case("HalfCosWithWarmup", {"warmup": 20}, 200),
    case("CosWithWarmupAndLinearDecay", {"warmup": 20}, 200),
    case("ExponentialScheduler", {"lr_min": 1e-6}, 200),
    case("WSDS", {"period_lengths": [100, 60, 80], "warmup": 10, "decay_fraction": 0.2,
                  "period_lr_multipliers": [1.0, 0.7, 0.5]}, 240),
]


def composite(preset: str, source: str, code: str, make, max_steps: int, lr: float = 8e-4,
              note: str = "") -> FrameworkCase:
    """A case of a scheduler of schedulers (or of one of its records): ``make(m)`` builds the
    real OLMo-core scheduler from the loaded module ``m``; the trainer reads it as above."""
    def anchor(steps):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ComposableScheduler warns that it ignores t_max
            scheduler = make(olmo())
            return [scheduler.get_lr(lr, k + 1, max_steps) for k in steps]

    return FrameworkCase(preset, source, "olmo_core", preset.split(".", 1)[1], {}, max_steps, note=note,
                         code=code, anchor=anchor)


_STAGE = "olmo_core.ComposableSchedulerStage"
COMPOSITES = [
    composite("olmo_core.SequentialScheduler",
              "olmo_core.SequentialScheduler(lr=0.0008, t_max=300, schedulers=[olmo_core.InvSqrtWithWarmup("
              "alpha_f=0.5, warmup=20), olmo_core.CosWithWarmup(warmup=0), olmo_core.LinearWithWarmup("
              "t_max=60, warmup=0)], schedulers_max=[50, 80])",
              "scheduler = SequentialScheduler(schedulers=[InvSqrtWithWarmup(alpha_f=0.5, warmup=20), "
              "CosWithWarmup(warmup=0), LinearWithWarmup(t_max=60, warmup=0)], schedulers_max=[50, 80])",
              lambda m: m.SequentialScheduler(schedulers=[m.InvSqrtWithWarmup(alpha_f=0.5, warmup=20),
                                                          m.CosWithWarmup(warmup=0),
                                                          m.LinearWithWarmup(t_max=60, warmup=0)],
                                              schedulers_max=[50, 80]), 300,
              note="each child starts from the lr the one before ended at; the last one keeps its own "
                   "t_max (60) and holds its end after it"),
    composite("olmo_core.SequentialScheduler",
              "olmo_core.SequentialScheduler(lr=0.0008, t_max=400, schedulers=[olmo_core.ConstantWithWarmup("
              "warmup=30), olmo_core.CosWithWarmup(warmup=0, alpha_f=0.1)], schedulers_max=[100], "
              'override_decay=olmo_core.OverrideDecay(start=250, duration=80, shape="cosine", '
              "end_lr_fraction=0.05))",
              "scheduler = SequentialScheduler(schedulers=[ConstantWithWarmup(warmup=30), CosWithWarmup("
              "warmup=0, alpha_f=0.1)], schedulers_max=[100], override_decay=OverrideDecay(start=250, "
              "duration=80, shape=ComposableSchedulerStageType.cosine, end_lr_fraction=0.05))",
              lambda m: m.SequentialScheduler(
                  schedulers=[m.ConstantWithWarmup(warmup=30), m.CosWithWarmup(warmup=0, alpha_f=0.1)],
                  schedulers_max=[100], override_decay=m.OverrideDecay(
                      start=250, duration=80, shape=m.ComposableSchedulerStageType.cosine,
                      end_lr_fraction=0.05)), 400),
    composite("olmo_core.ComposableScheduler",
              f"olmo_core.ComposableScheduler(lr=0.0008, t_max=350, stages=[{_STAGE}(duration=40, "
              f'shape="linear", start_lr_fraction=0.0, end_lr_fraction=1.0), {_STAGE}(duration=200, '
              f'shape="cosine", end_lr_fraction=0.1), {_STAGE}(duration=60, start_lr=0.0002, end_lr=0.0)], '
              "override_decay=olmo_core.OverrideDecay(start=150, duration=50, end_lr=0.0001))",
              "scheduler = ComposableScheduler(stages=[ComposableSchedulerStage(duration=40, "
              "start_lr_fraction=0.0, end_lr_fraction=1.0), ComposableSchedulerStage(duration=200, "
              "shape=ComposableSchedulerStageType.cosine, end_lr_fraction=0.1), ComposableSchedulerStage("
              "duration=60, start_lr=0.0002, end_lr=0.0)], override_decay=OverrideDecay(start=150, "
              "duration=50, end_lr=0.0001))",
              lambda m: m.ComposableScheduler(
                  stages=[m.ComposableSchedulerStage(duration=40, start_lr_fraction=0.0, end_lr_fraction=1.0),
                          m.ComposableSchedulerStage(duration=200, end_lr_fraction=0.1,
                                                     shape=m.ComposableSchedulerStageType.cosine),
                          m.ComposableSchedulerStage(duration=60, start_lr=0.0002, end_lr=0.0)],
                  override_decay=m.OverrideDecay(start=150, duration=50, end_lr=0.0001)), 350,
              note="t_max is not read (OLMo-core warns); the override replaces the stages from 150"),
    composite(_STAGE, f'{_STAGE}(duration=120, shape="cosine", start_lr=0.5, end_lr_fraction=0.1)',
              "scheduler = ComposableScheduler(stages=[ComposableSchedulerStage(duration=120, "
              "shape=ComposableSchedulerStageType.cosine, start_lr=0.5, end_lr_fraction=0.1)])",
              lambda m: m.ComposableScheduler(stages=[m.ComposableSchedulerStage(
                  duration=120, shape=m.ComposableSchedulerStageType.cosine, start_lr=0.5,
                  end_lr_fraction=0.1)]), 200, lr=1.0,
              note="alone, a stage is the ComposableScheduler of that stage at lr 1"),
    composite("olmo_core.OverrideDecay", "olmo_core.OverrideDecay(start=60, duration=90, end_lr=0.25)",
              "scheduler = ComposableScheduler(stages=[ComposableSchedulerStage(duration=1, "
              "end_lr_fraction=1.0)], override_decay=OverrideDecay(start=60, duration=90, end_lr=0.25))",
              lambda m: m.ComposableScheduler(
                  stages=[m.ComposableSchedulerStage(duration=1, end_lr_fraction=1.0)],
                  override_decay=m.OverrideDecay(start=60, duration=90, end_lr=0.25)),
              200, lr=1.0, note="alone, an override is the decay of a constant lr of 1"),
]


def batch_callback():
    """OLMo-core 3.0.0's ``BatchSizeSchedulerCallback`` (``train/callbacks/batch_size_scheduler.py``)
    and ``Duration`` (``train/common.py``), loaded from their files over :func:`olmo`'s modules.

    The callback imports ``olmo_core.optim`` and ``olmo_core.optim.scheduler`` by absolute name;
    those names point at the loaded scheduler module while it loads (restored after).  The train
    modules, ``Callback`` and ``SpeedMonitorCallback`` are plain stand-in classes (the callback only
    tests ``isinstance`` against them), as are the helpers ``common.py`` imports for its other
    classes.  The data loader's ``global_batch_size`` setter is the real one, taken from
    ``data/data_loader.py`` (:func:`batch_size_setter`).
    """
    name = f"{_NAME}.train.callbacks.batch_size_scheduler"
    if name in sys.modules:
        return sys.modules[name], sys.modules[f"{_NAME}.train.common"]
    scheduler = olmo()
    optim = sys.modules[f"{_NAME}.optim"]
    optim.INITIAL_LR_FIELD, optim.LR_FIELD = "initial_lr", "lr"
    optim.OLMoDDPOptimizer = type("OLMoDDPOptimizer", (), {})
    optim.SkipStepAdamW = type("SkipStepAdamW", (), {})
    _module(f"{_NAME}.data")
    _module(f"{_NAME}.data.utils", get_labels=None)
    _module(f"{_NAME}.utils", format_float=str, format_int=str, format_timedelta=str)
    _module(f"{_NAME}.train")
    _module(f"{_NAME}.train.train_module", **{n: type(n, (), {}) for n in (
        "OLMoDDPTrainModule", "TransformerPipelineTrainModule", "TransformerTrainModule")})
    _module(f"{_NAME}.train.callbacks")
    _module(f"{_NAME}.train.callbacks.callback", Callback=type("Callback", (), {}))
    _module(f"{_NAME}.train.callbacks.speed_monitor",
            SpeedMonitorCallback=type("SpeedMonitorCallback", (), {}))
    aliases = {"olmo_core": sys.modules[_NAME], "olmo_core.exceptions": sys.modules[f"{_NAME}.exceptions"],
               "olmo_core.optim": optim, "olmo_core.optim.scheduler": scheduler}
    saved = {alias: sys.modules.get(alias) for alias in aliases}
    sys.modules.update(aliases)
    try:
        for module_name, path in (("train.common", PACKAGE / "train" / "common.py"),
                                  ("train.callbacks.batch_size_scheduler",
                                   PACKAGE / "train" / "callbacks" / "batch_size_scheduler.py")):
            spec = importlib.util.spec_from_file_location(f"{_NAME}.{module_name}", path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module
            spec.loader.exec_module(module)
    finally:
        for alias, module in saved.items():
            if module is None:
                sys.modules.pop(alias, None)
            else:
                sys.modules[alias] = module
    return sys.modules[name], sys.modules[f"{_NAME}.train.common"]


def batch_size_setter():
    """The ``global_batch_size`` setter of OLMo-core's ``DataLoaderBase``, compiled from its own
    source (the rest of ``data/data_loader.py`` needs the whole package)."""
    import ast

    path = framework_file(PACKAGE / "data" / "data_loader.py", WHAT)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    base = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "DataLoaderBase")
    setter = next(f for f in base.body if isinstance(f, ast.FunctionDef) and f.name == "global_batch_size"
                  and any(isinstance(d, ast.Attribute) and d.attr == "setter" for d in f.decorator_list))
    setter.decorator_list = []
    namespace: dict = {}
    exec(compile(ast.Module([setter], []), str(path), "exec"), namespace)  # OLMo-core's own code
    return namespace["global_batch_size"]


# -- OLMo-core's config.json, written by its own Config.as_config_dict ---------------------------

_REAL = "_olmo_core_3_0_0_config"


def olmo_config():
    """OLMo-core 3.0.0's real ``olmo_core/config.py`` (``Config.as_config_dict``, the code that
    writes ``config.json``), its ``optim/scheduler.py`` on that ``Config``, and ``train/common.py``'s
    ``Duration`` / ``DurationUnit`` (taken from the file with ``ast``), as a namespace.  The two
    packages ``config.py`` imports and this environment lacks are stubbed: ``cached_path``
    (unused by ``as_dict``) and ``dataclass_extensions`` (``Registrable``: the registered name
    ``as_config_dict`` writes as ``type``).  Each class's ``__module__`` is OLMo-core's own, so
    the ``_CLASS_`` marks are those of a real run."""
    import ast

    if f"{_REAL}.namespace" in sys.modules:
        return sys.modules[f"{_REAL}.namespace"]
    framework_file(PACKAGE / "config.py", WHAT)
    names: dict[type, str] = {}

    class Registrable:
        @classmethod
        def register(cls, name):
            def record(subclass):
                names[subclass] = name
                return subclass
            return record

        def get_registered_name(self):
            if type(self) not in names:
                raise ValueError("not registered")
            return names[type(self)]

    _module("cached_path", cached_path=lambda path: path)
    _module("dataclass_extensions", Registrable=Registrable, decode=None)
    _module(_REAL)
    _module(f"{_REAL}.distributed")
    _module(f"{_REAL}.distributed.utils", get_rank=lambda: 0)
    _module(f"{_REAL}.optim")
    _module(f"{_REAL}.optim.config", INITIAL_LR_FIELD="initial_lr", LR_FIELD="lr")
    loaded = {}
    for name, path in (("aliases", "aliases.py"), ("exceptions", "exceptions.py"), ("config", "config.py"),
                       ("optim.scheduler", "optim/scheduler.py")):
        spec = importlib.util.spec_from_file_location(f"{_REAL}.{name}", PACKAGE / path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        loaded[name] = module
    for value in vars(loaded["optim.scheduler"]).values():
        if isinstance(value, type) and value.__module__ == f"{_REAL}.optim.scheduler":
            value.__module__ = "olmo_core.optim.scheduler"
    tree = ast.parse((PACKAGE / "train" / "common.py").read_text(encoding="utf-8"))
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name in ("DurationUnit", "Duration")]
    common = _module(f"{_REAL}.train.common", dataclass=__import__("dataclasses").dataclass,
                     StrEnum=loaded["config"].StrEnum).__dict__
    exec(compile(ast.Module(classes, []), str(PACKAGE / "train" / "common.py"), "exec"), common)  # noqa: S102
    common["Duration"].__module__ = "olmo_core.train.common"
    namespace = types.SimpleNamespace(Config=loaded["config"].Config, scheduler=loaded["optim.scheduler"],
                                      Duration=common["Duration"], DurationUnit=common["DurationUnit"])
    sys.modules[f"{_REAL}.namespace"] = namespace
    return namespace
