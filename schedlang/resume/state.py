"""Reading a checkpoint's scheduler state without running anything in it (SPEC §10).

A checkpoint is a pickle, and a pickle is a program: ``torch.load`` without
``weights_only`` runs whatever its ``GLOBAL``/``REDUCE`` opcodes name.  Here the
pickle is first *scanned* (``pickletools.genops`` reads opcodes, it executes
none): every import it would make must be one torch's restricted unpickler
allows (``collections.Counter`` for ``MultiStepLR``'s milestones, tensor
rebuilders), else the file is refused naming the import and its byte offset.
Only then is it read with ``torch.load(weights_only=True, map_location="cpu")``,
torch's own restricted unpickler, so both guards must fail for code to run.  A zip
checkpoint whose pickle is data alone (``_plain_data``: no import, no tensor) is read by
Python's unpickler with every import refused, without importing torch.
The pickle itself is bounded by ``limits.MAX_STATE_BYTES``; tensors in a zip
checkpoint (a Lightning ``.ckpt`` holds the model's weights) are mapped, not read.

What comes back is a ``State``: the step, the lr the state last set, and the
scheduler state dicts, whatever wrote them (a ``torch.save(scheduler.state_dict())``
file, an HF ``Trainer`` ``checkpoint-N/`` folder, a Lightning ``.ckpt``).
"""

from __future__ import annotations

import io
import json
import math
import os
import pickle
import pickletools
import re
import stat
import warnings
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import SchedlangError
from ..limits import MAX_STATE_BYTES, MAX_STATE_DEPTH, MAX_STATE_VALUES, MAX_STEP, MAX_TAG_BYTES

#: Imports a scheduler state's pickle may make (``module name``, as ``GLOBAL`` spells them)
#: when torch does not list its own (``allowed_globals``).
SAFE_GLOBALS = frozenset({
    "collections Counter", "collections OrderedDict", "builtins set", "torch Size",
    "torch._utils _rebuild_tensor_v2", "torch._utils _rebuild_parameter",
    "torch._tensor _rebuild_from_type_v2",
    *(f"torch {kind}Storage" for kind in ("Float", "Double", "Half", "BFloat16", "Long", "Int",
                                          "Short", "Char", "Byte", "Bool")),
})


class _Namespace:
    """Stands in for ``argparse.Namespace`` / ``types.SimpleNamespace`` (Megatron saves its
    ``args`` as one): the attributes are kept as data, no code of those classes runs."""

    def __setstate__(self, state):
        if isinstance(state, dict):
            self.__dict__.update(state)


class _Opaque:
    """Stands in for a data class a training framework saves beside the scheduler (numpy's
    arrays in an rng state, a path, Megatron's enums and config dataclass): its contents are
    dropped, since the scheduler state needs none of them, and no code of the class runs."""

    def __init__(self, *args, **kwargs):
        pass

    def __setstate__(self, state):
        pass


#: Imports (``module name``) that are read as inert stand-ins instead of being refused: the
#: classes megatron-core itself registers as safe for ``torch.load(weights_only=True)``
#: (``megatron/core/safe_globals.py``) and numpy's, which an rng state holds.  The real
#: classes are never imported.
STAND_INS = {
    "argparse Namespace": _Namespace, "types SimpleNamespace": _Namespace,
    **{f"pathlib {n}": _Opaque for n in ("Path", "PosixPath", "WindowsPath", "PurePosixPath")},
    **{f"{m} _reconstruct": _Opaque for m in ("numpy.core.multiarray", "numpy._core.multiarray")},
    "numpy ndarray": _Opaque, "numpy dtype": _Opaque,
    **{f"numpy.dtypes {n}DType": _Opaque for n in ("UInt32", "Int64", "Float64", "Float32", "Bool")},
    "io BytesIO": _Opaque, "signal Signals": _Opaque,
    "megatron.core.enums ModelType": _Opaque,
    "megatron.core.optimizer.optimizer_config OptimizerConfig": _Opaque,
    **{f"megatron.core.rerun_state_machine {n}": _Opaque
       for n in ("RerunDiagnostic", "RerunMode", "RerunState")},
    **{f"megatron.core.transformer.enums {n}": _Opaque for n in ("AttnBackend", "CudaGraphScope")},
}

_STRINGS = {"SHORT_BINUNICODE", "BINUNICODE", "UNICODE", "BINUNICODE8", "SHORT_BINSTRING",
            "BINSTRING", "STRING"}

HINT_SAFE = ("schedlang reads checkpoints as data only (torch.load(weights_only=True)); save the "
             "scheduler's state_dict(), not the scheduler object")


@dataclass
class State:
    """One checkpoint's scheduler state, and the counts the checkpoint keeps beside it.

    ``kind``: ``torch`` (a saved ``state_dict``), ``hf`` (a Trainer checkpoint folder),
    ``lightning``, ``checkpoint`` (a dict holding the scheduler's state under some key, e.g.
    ``{"model": ..., "optimizer": ..., "scheduler": ...}``), ``deepspeed``, ``megatron`` or
    ``olmo-core``; ``scheduler``: the scheduler's state dict (OLMo-core's: the trainer's, its
    schedulers keep none); ``shape``: which kind of state that dict is (``torch``, ``deepspeed``,
    ``megatron``, ``olmo-core``); ``key``: where in the file it was found (``""``: the file
    is the state); ``extra``: facts the checkpoint adds (HF's ``global_step``).

    ``step``, ``samples``, ``tokens``: the optimizer steps, samples and tokens the run had
    consumed when it saved, where the checkpoint records them (None where not), for comparing
    on the token clock (SPEC §12), and the keys the counts were read from (``samples_key``,
    ``tokens_key``); ``optimizer_lr``: the lr of the optimizer's first param group at save
    time, found at ``optimizer_lr_key``.
    """

    path: str
    kind: str
    scheduler: dict
    extra: dict = field(default_factory=dict)
    key: str = ""
    shape: str = "torch"
    step: int | None = None
    samples: int | None = None
    tokens: int | None = None
    optimizer_lr: float | None = None
    optimizer_lr_key: str | None = None
    config: dict | None = None
    samples_key: str | None = None
    tokens_key: str | None = None


def read_state(path) -> State:
    """The scheduler state at ``path`` (a file or a checkpoint folder), read as data.

    The scheduler's state is found by its shape under any key (``find_scheduler``), not by a
    key name, so a checkpoint saved the way each framework (or our guide) saves one works."""
    path = Path(path)
    if checked_type(path, _quoted(path)) == "dir":
        return _folder(path)
    return from_checkpoint(path, load(path), _quoted(path))


def checked_type(path: Path, shown: str) -> str:
    """``"file"`` or ``"dir"``; anything else is refused before it is opened: a FIFO without a
    writer would block the read forever, ``/dev/zero`` never ends, a socket cannot be read."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise SchedlangError(f"cannot read {shown}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISREG(mode):
        return "file"
    what = ("a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode)
            or stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")
    raise SchedlangError(f"cannot read {shown}: it is {what}, not a checkpoint file or folder",
                         hint="give the checkpoint file itself (saved with torch.save) or its folder")


def is_text_file(path) -> bool:
    """Whether ``path`` is a regular file whose start reads as text (UTF-8, no NUL byte): a
    schedule or a config, never a checkpoint (torch writes a zip or a binary pickle)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:  # a character cut at the 4096th byte is still text
        if exc.start < len(head) - 3:
            return False
    return bool(head) and b"\0" not in head


def _quoted(path: Path, inner: str = "") -> str:
    """How a message names the file: ``'PATH'`` as given (so the CLI's caret points at that
    argument), and the file inside an HF folder after it."""
    return f"'{path}'" + (f" ({inner})" if inner else "")


def load(path: Path, shown: str | None = None):
    """``torch.load(path, weights_only=True)`` after the opcode scan; every failure a
    ``SchedlangError`` naming the file (``shown``: how, default ``'path'``)."""
    shown = shown or _quoted(path)
    pickle_bytes = _pickle_bytes(path, shown)
    if zipfile.is_zipfile(path):
        plain = _plain_data(pickle_bytes)
        if plain is not _NOT_PLAIN:
            return plain
    import torch  # lazy: torch

    _scan(pickle_bytes, shown, allowed_globals() | frozenset(STAND_INS))

    stand_ins = [(cls, name.replace(" ", ".")) for name, cls in STAND_INS.items()]
    # Only our stand-ins: a library imported earlier (megatron.core registers numpy's real
    # ``_reconstruct``) must not decide, by the order of a set, which class a name loads.
    registered = torch.serialization.get_safe_globals()
    torch.serialization.clear_safe_globals()
    try:
        with warnings.catch_warnings(), torch.serialization.safe_globals(stand_ins):
            warnings.simplefilter("ignore")  # torch warns about pickle protocols it reads fine
            return torch.load(path, weights_only=True, map_location="cpu",
                              mmap=zipfile.is_zipfile(path))
    except Exception as exc:  # noqa: BLE001 - the boundary where a hostile file's error becomes ours
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise SchedlangError(f"{shown}: torch cannot read this checkpoint as data: {first[:300]}",
                             hint=HINT_SAFE) from None
    finally:
        torch.serialization.clear_safe_globals()
        torch.serialization.add_safe_globals(registered)


#: The opcodes of a pickle that is data alone (containers, numbers, strings, memo), the ones
#: ``torch.load(weights_only=True)``'s own unpickler executes apart from imports and tensors
#: (``torch/_weights_only_unpickler.py``): what ``torch.save`` writes for a state dict that
#: holds no tensor (every schedlang class's with float entries, HF's ``scheduler.pt``).
_DATA_OPCODES = frozenset({
    "PROTO", "STOP", "MARK", "APPEND", "APPENDS", "SETITEM", "SETITEMS", "TUPLE", "TUPLE1",
    "TUPLE2", "TUPLE3", "NONE", "NEWFALSE", "NEWTRUE", "EMPTY_TUPLE", "EMPTY_LIST", "EMPTY_DICT",
    "EMPTY_SET", "BININT", "BININT1", "BININT2", "BINFLOAT", "BINUNICODE", "SHORT_BINSTRING",
    "BINGET", "LONG_BINGET", "BINPUT", "LONG_BINPUT", "LONG1",
})
_NOT_PLAIN = object()


class _DataUnpickler(pickle.Unpickler):
    """``pickle``'s unpickler with every import and persistent id refused: only ``_DATA_OPCODES``
    reach it (``_plain_data`` checks first), and were another opcode to, it could build
    nothing but containers, numbers and strings (the "restricting globals" of Python's
    ``pickle`` documentation, with nothing allowed)."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"import of {module}.{name} refused")

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("persistent id refused")


def _plain_data(data: bytes):
    """The object of a pickle made of ``_DATA_OPCODES`` alone, read without torch (importing
    torch costs about 2 s; ``resume`` of a class state needs none of it), else ``_NOT_PLAIN``:
    a pickle that imports anything, holds a tensor or is damaged is read by ``torch.load``
    after the scan, as before, and gets its answer or its refusal there."""
    try:
        for opcode, _, _ in pickletools.genops(data):
            if opcode.name not in _DATA_OPCODES:
                return _NOT_PLAIN
            if opcode.name == "STOP":
                break
        else:
            return _NOT_PLAIN
        return _DataUnpickler(io.BytesIO(data), encoding="utf-8").load()
    except Exception:  # noqa: BLE001 - torch's reading gives a damaged pickle its message
        return _NOT_PLAIN


def allowed_globals() -> frozenset:
    """The imports ``torch.load(weights_only=True)`` allows by default (``collections.Counter``,
    tensor rebuilders, storages, dtypes), spelled ``module name``: the scan refuses the rest
    before torch reads the file, naming what it refused.  torch keeps the list private, so
    ``SAFE_GLOBALS`` stands in where it is missing."""
    try:
        from torch._weights_only_unpickler import _get_allowed_globals  # lazy: torch

        names = frozenset(name.rpartition(".")[0] + " " + name.rpartition(".")[2]
                          for name in _get_allowed_globals())
    except (ImportError, AttributeError, TypeError):
        return SAFE_GLOBALS
    return names or SAFE_GLOBALS


def _pickle_bytes(path: Path, shown: str) -> bytes:
    """The pickle of a checkpoint: the file itself, or ``*/data.pkl`` of torch's zip format."""
    if checked_type(path, shown) != "file":
        raise SchedlangError(f"cannot read {shown}: it is a directory, not a checkpoint file")
    try:
        size = path.stat().st_size
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                names = [i for i in archive.infolist() if i.filename.endswith("/data.pkl")]
                if len(names) != 1:
                    raise SchedlangError(f"{shown} is a zip file but not a torch checkpoint "
                                         "(it has no single .../data.pkl)", hint=HINT_SAFE)
                info = names[0]
                _check_size(shown, info.file_size, "its pickle")
                return archive.read(info)
        _check_size(shown, size, "it")
        with open(path, "rb") as handle:
            if handle.read(4) == b"PK\x03\x04":
                raise SchedlangError(f"{shown} is a damaged or truncated zip checkpoint "
                                     "(no central directory)", hint="save it again")
            handle.seek(0)
            return handle.read(MAX_STATE_BYTES + 1)
    except (OSError, zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError) as exc:
        raise SchedlangError(f"cannot read {shown}: {getattr(exc, 'strerror', None) or exc}",
                             hint=HINT_SAFE) from None


def _check_size(shown: str, size: int, what: str) -> None:
    if size > MAX_STATE_BYTES:
        raise SchedlangError(f"{shown}: {what} is {size} bytes; a scheduler state is read only up "
                             f"to {MAX_STATE_BYTES} bytes", hint="pass the file that holds the "
                             "scheduler's state_dict() alone")


def _scan(data: bytes, shown: str, allowed: frozenset) -> None:
    """Refuse a pickle that imports anything outside ``allowed`` (read, never run)."""
    strings: list[str] = []
    try:
        for opcode, arg, offset in pickletools.genops(data):
            if opcode.name in _STRINGS:
                strings = (strings + [arg if isinstance(arg, str) else repr(arg)])[-2:]
            elif opcode.name in ("GLOBAL", "INST"):
                _allowed(str(arg), offset, shown, allowed)
            elif opcode.name == "STACK_GLOBAL":
                _allowed(" ".join(strings) if len(strings) == 2 else "<computed name>", offset, shown,
                         allowed)
            if opcode.name == "STOP":
                return
    except SchedlangError:
        raise
    except Exception as exc:  # noqa: BLE001 - pickletools' errors on a damaged file
        raise SchedlangError(f"{shown}: not a readable pickle ({exc})", hint=HINT_SAFE) from None
    raise SchedlangError(f"{shown}: the pickle is truncated (no STOP opcode)", hint=HINT_SAFE)


def _allowed(name: str, offset: int, shown: str, allowed: frozenset) -> None:
    if name not in allowed:
        dotted = name.replace(" ", ".")[:120]
        raise SchedlangError(f"{shown}: refused: the pickle imports {dotted!r} (at byte {offset}); "
                             "a scheduler state needs no code, and nothing in it was run",
                             hint=HINT_SAFE)


# -- finding the scheduler's state in a checkpoint ---------------------------------------------

#: Scheduler states told by their shape: torch's ``LRScheduler`` (schedlang's classes
#: included), DeepSpeed's ``lr_schedules`` (``last_batch_iteration`` alone), megatron-core's
#: ``OptimizerParamScheduler`` (its ``state_dict``, old key names too); and OLMo-core's trainer
#: state, whose schedulers keep no state (a function of the step or the tokens).
TORCH_MARKERS = frozenset({"base_lrs", "_last_lr", "_schedulers", "params"})
MEGATRON_KEYS = frozenset({"num_steps", "lr_decay_style", "min_lr"})
OLMO_KEYS = frozenset({"global_step", "global_train_tokens_seen"})
_SCHEDULER_NAME = re.compile(r"sched", re.IGNORECASE)


def shape_of(value) -> str | None:
    """Which kind of scheduler state ``value`` is, or None: the keys tell, never a class name."""
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        return None
    keys = set(value)
    if "last_epoch" in keys and keys & TORCH_MARKERS or keys == {"_schedulers", "_last_lr"}:
        return "torch"
    if keys == {"last_batch_iteration"}:
        return "deepspeed"
    if MEGATRON_KEYS <= keys and keys & {"max_lr", "start_lr"}:
        return "megatron"
    if OLMO_KEYS <= keys:
        return "olmo-core"
    return None


@dataclass(frozen=True)
class Found:
    """One scheduler state in a checkpoint: its key path (``("lr_schedulers", 0)``), its dict,
    its ``shape_of``."""

    path: tuple
    value: dict
    shape: str

    @property
    def key(self) -> str:
        return key_text(self.path)

    @property
    def named(self) -> bool:
        """Whether a key on its path is named like a scheduler (``scheduler``, ``lr_scheduler``,
        ``lr_schedulers``, ``opt_param_scheduler``): what decides between several states."""
        return any(isinstance(p, str) and _SCHEDULER_NAME.search(p) for p in self.path)


def key_text(path: tuple) -> str:
    """``("lr_schedulers", 0)`` as ``lr_schedulers[0]``, ``("a", "b")`` as ``a.b``."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def find_scheduler(data, shown: str) -> Found:
    """The one scheduler state in ``data``, searched by shape to ``MAX_STATE_DEPTH`` levels.

    Several: the one under a key named like a scheduler, when exactly one is; else refused,
    listing them.  A state inside a state (``SequentialLR``'s children) is part of it."""
    found = _search(data, shown)
    schedulers = [f for f in found if f.shape != "olmo-core"] or found
    if len(schedulers) == 1:
        return schedulers[0]
    if not schedulers:
        keys = ", ".join(sorted(map(str, data))[:20]) if isinstance(data, dict) else ""
        raise SchedlangError(f"{shown} holds no scheduler state: no value in it (to {MAX_STATE_DEPTH} "
                             "levels) has the keys of one (torch's last_epoch and base_lrs, "
                             "DeepSpeed's last_batch_iteration, Megatron's num_steps and max_lr)"
                             + (f"; its keys are {keys}" if keys else ""),
                             hint="save the scheduler's state_dict() in the checkpoint, e.g. "
                                  "torch.save({..., \"scheduler\": scheduler.state_dict()}, path)")
    named = [f for f in schedulers if f.named]
    if len(named) == 1:
        return named[0]
    listed = ", ".join(f.key or "(the file)" for f in (named or schedulers)[:10])
    raise SchedlangError(f"{shown} holds {len(named or schedulers)} scheduler states (at {listed}); "
                         "schedlang resume checks one",
                         hint="save the state of the scheduler to check alone: "
                              "torch.save(scheduler.state_dict(), path)")


def _search(data, shown: str) -> list[Found]:
    """Every value of ``data`` with a scheduler's shape, breadth first, in bounded work."""
    found, level, seen = [], [((), data)], 0
    for depth in range(MAX_STATE_DEPTH + 1):
        deeper = []
        for path, value in level:
            shape = shape_of(value)
            if shape:
                found.append(Found(path, value, shape))
                continue
            if depth == MAX_STATE_DEPTH:
                continue
            items = value.items() if isinstance(value, dict) else \
                enumerate(value) if isinstance(value, (list, tuple)) else ()
            for key, child in items:
                seen += 1
                if seen > MAX_STATE_VALUES:
                    raise SchedlangError(f"{shown} holds more than {MAX_STATE_VALUES} values; schedlang "
                                         "stops searching it for the scheduler's state",
                                         hint="save the scheduler's state_dict() alone")
                if isinstance(child, (dict, list, tuple)) and isinstance(key, (str, int)):
                    deeper.append((path + (key,), child))
        level = deeper
    return found


def from_checkpoint(path: Path, data, shown: str, kind: str | None = None) -> State:
    """The ``State`` of a loaded checkpoint: its scheduler state, where it was, and the counts
    and optimizer lr the checkpoint keeps beside it."""
    if not isinstance(data, dict):
        raise SchedlangError(f"{shown} holds a {type(data).__name__}, not a scheduler state dict",
                             hint="save it with torch.save(scheduler.state_dict(), path)")
    _lightning_schedulers(data, shown)
    found = find_scheduler(data, shown)
    kind = kind or _kind(data, found)
    state = State(str(path), kind, found.value, key=found.key, shape=found.shape)
    _counts(state, data, found, shown)
    lr, key = optimizer_lr(data)
    if lr is not None:
        state.optimizer_lr, state.optimizer_lr_key = lr, key
        if kind == "lightning":
            state.extra["optimizer_lr"] = lr
    return state


def _kind(data: dict, found: Found) -> str:
    """What wrote the checkpoint, as far as its keys tell."""
    if not found.path:
        return "torch"
    if found.path[0] == "lr_schedulers" and "state_dict" in data:
        return "lightning"
    if found.shape == "deepspeed" or "ds_version" in data:
        return "deepspeed"
    if found.shape in ("megatron", "olmo-core"):
        return found.shape
    return "checkpoint"


def _lightning_schedulers(data: dict, shown: str) -> None:
    """A Lightning checkpoint's ``lr_schedulers``: one, as schedlang resume checks one."""
    schedulers = data.get("lr_schedulers")
    if "lr_schedulers" not in data or not isinstance(schedulers, list):
        return
    if not schedulers:
        raise SchedlangError(f"{shown}: the checkpoint's lr_schedulers is empty",
                             hint="configure_optimizers returned no lr scheduler")
    if len(schedulers) > 1:
        raise SchedlangError(f"{shown}: the checkpoint has {len(schedulers)} lr schedulers; "
                             "schedlang resume checks one")


def _counts(state: State, data: dict, found: Found, shown: str) -> None:
    """The step, samples and tokens the checkpoint recorded, where it did: each framework keeps
    them under its own keys (the trainer's, not the scheduler's).  A consumed count that is
    there but damaged, or two records of one count that disagree, is refused naming the key
    (``_record``): never dropped for the plan."""
    sched = found.value

    def own(name: str) -> str:
        return f"{found.key}.{name}" if found.key else name

    if found.shape == "olmo-core":
        state.step = _count(sched, "global_step")
        _record(state, "tokens", sched, "global_train_tokens_seen", own("global_train_tokens_seen"), shown)
        _keep(state, sched, "max_steps")
        return
    if state.kind == "lightning":
        _keep(state, data, "global_step", "epoch")
    _step(state, data)
    _framework_samples(state, data, found, shown)
    _record(state, "samples", data, "consumed_train_samples", "consumed_train_samples", shown)
    _record(state, "tokens", data, "num_input_tokens_seen", "num_input_tokens_seen", shown)
    if isinstance(sched, dict):  # schedlang's classes count them on a batch schedule (SPEC §12)
        _record(state, "samples", sched, "samples", own("samples"), shown)
        _record(state, "tokens", sched, "tokens", own("tokens"), shown)


def _step(state: State, data: dict) -> None:
    """The step under the first of the keys the user, Megatron or DeepSpeed keep it in (kept
    in ``extra`` under that key too)."""
    for key in ("step", "global_step", "iteration", "global_steps"):  # the user's, Megatron's, DeepSpeed's
        if _count(data, key) is not None:
            state.step = _count(data, key)
            state.extra.setdefault(key, state.step)
            break


def _framework_samples(state: State, data: dict, found: Found, shown: str) -> None:
    """The samples Megatron's or DeepSpeed's checkpoint records, each under its own keys (and
    DeepSpeed's config with them); kept apart because they are the only two that say it."""
    if found.shape == "megatron":
        args = getattr(data.get("args"), "__dict__", None)
        _record(state, "samples", args, "consumed_train_samples", "args.consumed_train_samples", shown)
        if state.samples is None:  # Megatron-LM steps the scheduler by the global batch: samples
            _record(state, "samples", found.value, "num_steps", f"{found.key}.num_steps", shown)
    if found.shape == "deepspeed" or state.kind == "deepspeed":
        _record(state, "samples", data, "global_samples", "global_samples", shown)
        if isinstance(data.get("ds_config"), dict):
            state.config = data["ds_config"]


def _record(state: State, name: str, data, key: str, shown_key: str, shown: str) -> None:
    """Set ``state.<name>`` (``samples`` or ``tokens``) from ``data[key]`` where it is there
    (``consumed``); a second record of the same count must agree with the first."""
    value = consumed(data, key, f"{shown}: {shown_key}")
    if value is None:
        return
    before = getattr(state, name)
    if before is None:
        setattr(state, name, value)
        setattr(state, f"{name}_key", shown_key)
    elif before != value:
        first = getattr(state, f"{name}_key")
        raise SchedlangError(f"{shown}: {first} is {before:,} but {shown_key} is {value:,}: two "
                             f"records of the {name} consumed disagree",
                             hint="the checkpoint's counts were changed or damaged: restore them")


def consumed(data, key: str, where: str) -> int | None:
    """``data[key]`` as a count of samples or tokens consumed: None where the key is absent (or
    None); a whole number >= 0 (an ``int``, a whole finite float, a one-element integer
    tensor); anything else is refused at ``where``: a damaged count must not be replaced by
    the plan without a word."""
    value = data.get(key) if isinstance(data, dict) else None
    if value is None:
        return None
    shown = shown_value(value)
    if type(value).__name__ == "Tensor":
        try:
            value = value.item() if value.numel() == 1 else value
        except (RuntimeError, TypeError, ValueError):
            pass
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        kind = "" if isinstance(value, (int, float)) and not isinstance(value, bool) else \
            f" (a {type(value).__name__})"
        raise SchedlangError(f"{where} is {shown}{kind}, not a count: the samples or tokens consumed "
                             "are a whole number >= 0",
                             hint="the checkpoint's counts were changed or damaged: restore them, or "
                                  "drop the key to count by the original's batch schedule")
    return value


def shown_value(value) -> str:
    """A value from a checkpoint as a message shows it: its repr, cut at 60 characters."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _count(data, key: str) -> int | None:
    """``data[key]`` when it is a whole number >= 0 (a float that is whole too), else None: a
    step or a trainer's fact, which a consumed count is not (``consumed``)."""
    value = data.get(key) if isinstance(data, dict) else None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def _keep(state: State, data: dict, *keys: str) -> None:
    for key in keys:
        if _count(data, key) is not None:
            state.extra[key] = _count(data, key)


def optimizer_lr(data) -> tuple[float | None, str | None]:
    """The lr of the first param group of the checkpoint's optimizer state, and where it is:
    what the scheduler last set (torch's schedulers write it there), for states that do not
    record it themselves.  Searched by shape (a dict with ``param_groups``), optimizers under a
    key named like one first."""
    found = []
    level = [((), data)]
    for _ in range(MAX_STATE_DEPTH):
        deeper = []
        for path, value in level:
            if isinstance(value, dict) and isinstance(value.get("param_groups"), list):
                found.append(path)
                continue
            items = value.items() if isinstance(value, dict) else \
                enumerate(value) if isinstance(value, (list, tuple)) and len(value) <= 16 else ()
            deeper += [(path + (k,), v) for k, v in items
                       if isinstance(v, (dict, list, tuple)) and isinstance(k, (str, int))][:MAX_STATE_VALUES]
        level = deeper[:MAX_STATE_VALUES]
    found.sort(key=lambda p: not any(isinstance(k, str) and "optim" in k.lower() for k in p))
    for path in found:
        value = data
        for part in path:
            value = value[part]
        lr = _group_lr(value["param_groups"])
        if lr is not None:
            return lr, key_text(path + ("param_groups", 0, "lr"))
    return None, None


def _group_lr(groups: list) -> float | None:
    try:
        lr = groups[0]["lr"]
    except (TypeError, KeyError, IndexError):
        return None
    if type(lr).__name__ == "Tensor":
        try:
            lr = float(lr.item()) if lr.numel() == 1 and lr.is_floating_point() else None
        except (RuntimeError, TypeError, ValueError):
            return None
    if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not math.isfinite(lr):
        return None
    return float(lr)


# -- checkpoint folders --------------------------------------------------------------------------


def _folder(path: Path) -> State:
    """A checkpoint folder: HF ``Trainer``'s ``checkpoint-N/``, DeepSpeed's (``latest`` names
    the tag folder), Megatron's (``latest_checkpointed_iteration.txt``), or one tag folder of
    either."""
    if (path / "scheduler.pt").exists() or (path / "trainer_state.json").exists():
        return _hf_folder(path)
    if (path / "latest").exists():
        return _checkpoint_file(path, path / _tag(path / "latest", path), "deepspeed")
    if (path / "latest_checkpointed_iteration.txt").exists():
        tag = _tag(path / "latest_checkpointed_iteration.txt", path, iteration=True)
        name = f"iter_{int(tag):07d}" if tag.isdigit() else tag
        return _checkpoint_file(path, path / name, "megatron")
    for kind, name in (("deepspeed", "mp_rank_00_model_states.pt"),
                       ("megatron", "mp_rank_00/model_optim_rng.pt")):
        if (path / name).exists():
            return _checkpoint_file(path, path, kind)
    raise SchedlangError(f"{_quoted(path)} is a folder without scheduler.pt and trainer_state.json "
                         "(an HF Trainer checkpoint), latest (DeepSpeed) or "
                         "latest_checkpointed_iteration.txt (Megatron)",
                         hint="give a checkpoint folder, or the file torch.save wrote")


#: Bytes of one folder name (NAME_MAX of Linux's and macOS's file systems): a longer tag names no
#: folder, and looking it up is ``OSError: File name too long``, not "no such folder".
_NAME_MAX = 255


def _tag(file: Path, folder: Path, iteration: bool = False) -> str:
    """The tag a ``latest`` file names: one folder name, read bounded, never a path out.

    With ``iteration`` (Megatron's tracker file, whose digits are the iteration ``iter_NNNNNNN``
    is named after) a number of digits is a step, within ``MAX_STEP`` like every step."""
    shown = _quoted(folder, file.name)
    if checked_type(file, shown) != "file":
        raise SchedlangError(f"{shown} is not a file")
    try:
        with open(file, "rb") as handle:
            raw = handle.read(MAX_TAG_BYTES + 1)
        tag = raw.decode("utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise SchedlangError(f"cannot read {shown}: {exc}") from None
    if len(raw) > MAX_TAG_BYTES or not re.fullmatch(r"[A-Za-z0-9_.-]+", tag) or tag in (".", ".."):
        raise SchedlangError(f"{shown} does not name a checkpoint folder: {tag[:60]!r}")
    if iteration and tag.isdigit() and (len(tag) > 20 or int(tag) > MAX_STEP):
        raise SchedlangError(f"{shown} names iteration {tag[:20]}{'...' if len(tag) > 20 else ''} "
                             f"({len(tag)} digits), beyond the largest step schedlang counts (2**62)",
                             hint="the file holds the number of the last iteration saved, e.g. 1000")
    if len(tag.encode("utf-8")) > _NAME_MAX:
        raise SchedlangError(f"{shown} does not name a checkpoint folder: {tag[:60]!r}... is "
                             f"{len(tag)} characters long, and a folder name at most {_NAME_MAX}")
    return tag


def _checkpoint_file(folder: Path, tag_folder: Path, kind: str) -> State:
    """The file of a DeepSpeed or Megatron tag folder that holds the scheduler's state (rank 0's)."""
    names = {"deepspeed": ("mp_rank_00_model_states.pt", "zero_pp_rank_0_mp_rank_00_model_states.pt"),
             "megatron": ("mp_rank_00/model_optim_rng.pt", "mp_rank_00_000/model_optim_rng.pt",
                          "common.pt")}[kind]
    for name in names:
        file = tag_folder / name
        if file.exists():
            inner = str(file.relative_to(folder))
            return from_checkpoint(folder, load(file, _quoted(folder, inner)), _quoted(folder, inner),
                                   kind)
    raise SchedlangError(f"{_quoted(folder)}: {tag_folder.name} has none of {', '.join(names)}",
                         hint=f"a {kind} checkpoint folder holds its rank 0 state there")


def _hf_folder(path: Path) -> State:
    """An HF ``Trainer`` checkpoint folder: ``scheduler.pt`` and ``trainer_state.json``."""
    scheduler, trainer_state = path / "scheduler.pt", path / "trainer_state.json"
    missing = [p.name for p in (scheduler, trainer_state) if not p.exists()]
    if missing:
        raise SchedlangError(f"{_quoted(path)} is a folder without {' and '.join(missing)}",
                             hint="give an HF Trainer checkpoint folder (checkpoint-N/), or the "
                                  "file torch.save(scheduler.state_dict()) wrote")
    state = from_checkpoint(path, load(scheduler, _quoted(path, scheduler.name)),
                            _quoted(path, scheduler.name), "hf")
    info = _trainer_state(trainer_state, _quoted(path, trainer_state.name))
    step = info.get("global_step")
    if not isinstance(step, int) or isinstance(step, bool) or step < 0:
        raise SchedlangError(f"{_quoted(path, trainer_state.name)} has no whole global_step")
    state.key = "scheduler.pt" + (f":{state.key}" if state.key else "")
    state.step, state.extra = step, {"global_step": step}
    _keep(state, info, "max_steps")
    # HF writes 0 unless include_num_input_tokens_seen is on: a run of steps counted none
    if not (info.get("num_input_tokens_seen") == 0 and step > 0):
        _record(state, "tokens", info, "num_input_tokens_seen",
                f"num_input_tokens_seen ({trainer_state.name})", _quoted(path))
    return state


def _trainer_state(file: Path, shown: str) -> dict:
    """HF's ``trainer_state.json``, read bounded."""
    if checked_type(file, shown) != "file":
        raise SchedlangError(f"{shown} is not a file")
    try:
        with open(file, "rb") as handle:
            raw = handle.read(MAX_STATE_BYTES + 1)
        _check_size(shown, len(raw), "it")
        info = json.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise SchedlangError(f"cannot read {shown}: {exc}") from None
    return info if isinstance(info, dict) else {}
