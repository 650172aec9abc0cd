"""Reading a checkpoint's scheduler state without running anything in it (SPEC §10).

A checkpoint is a pickle, and a pickle is a program: ``torch.load`` without
``weights_only`` runs whatever its ``GLOBAL``/``REDUCE`` opcodes name.  Here the
pickle is first *scanned* (``pickletools.genops`` reads opcodes, it executes
none): every import it would make must be one torch's restricted unpickler
allows (``collections.Counter`` for ``MultiStepLR``'s milestones, tensor
rebuilders), else the file is refused naming the import and its byte offset.
Only then is it read with ``torch.load(weights_only=True, map_location="cpu")``,
torch's own restricted unpickler, so both guards must fail for code to run.
The pickle itself is bounded by ``limits.MAX_STATE_BYTES``; tensors in a zip
checkpoint (a Lightning ``.ckpt`` holds the model's weights) are mapped, not read.

What comes back is a ``State``: the step, the lr the state last set, and the
scheduler state dicts, whatever wrote them (a ``torch.save(scheduler.state_dict())``
file, an HF ``Trainer`` ``checkpoint-N/`` folder, a Lightning ``.ckpt``).
"""

from __future__ import annotations

import json
import math
import pickletools
import warnings
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import SchedlangError
from ..limits import MAX_STATE_BYTES

#: Imports a scheduler state's pickle may make (``module name``, as ``GLOBAL`` spells them)
#: when torch does not list its own (``allowed_globals``).
SAFE_GLOBALS = frozenset({
    "collections Counter", "collections OrderedDict", "builtins set", "torch Size",
    "torch._utils _rebuild_tensor_v2", "torch._utils _rebuild_parameter",
    "torch._tensor _rebuild_from_type_v2",
    *(f"torch {kind}Storage" for kind in ("Float", "Double", "Half", "BFloat16", "Long", "Int",
                                          "Short", "Char", "Byte", "Bool")),
})
_STRINGS = {"SHORT_BINUNICODE", "BINUNICODE", "UNICODE", "BINUNICODE8", "SHORT_BINSTRING",
            "BINSTRING", "STRING"}

HINT_SAFE = ("schedlang reads checkpoints as data only (torch.load(weights_only=True)); save the "
             "scheduler's state_dict(), not the scheduler object")


@dataclass
class State:
    """One checkpoint's scheduler state.

    ``kind``: ``torch`` (a saved ``state_dict``), ``hf`` (a Trainer checkpoint folder) or
    ``lightning``; ``scheduler``: the state dict of the scheduler; ``extra``: facts the
    folder adds (HF's ``global_step``).
    """

    path: str
    kind: str
    scheduler: dict
    extra: dict = field(default_factory=dict)


def read_state(path) -> State:
    """The scheduler state at ``path`` (a file or an HF checkpoint folder), read as data."""
    path = Path(path)
    if path.is_dir():
        return _hf_folder(path)
    data = load(path)
    if not isinstance(data, dict):
        raise SchedlangError(f"{_quoted(path)} holds a {type(data).__name__}, not a scheduler state dict",
                             hint="save it with torch.save(scheduler.state_dict(), path)")
    if "lr_schedulers" in data:
        return _lightning(path, data)
    return State(str(path), "torch", data)


def _quoted(path: Path, inner: str = "") -> str:
    """How a message names the file: ``'PATH'`` as given (so the CLI's caret points at that
    argument), and the file inside an HF folder after it."""
    return f"'{path}'" + (f" ({inner})" if inner else "")


def load(path: Path, shown: str | None = None):
    """``torch.load(path, weights_only=True)`` after the opcode scan; every failure a
    ``SchedlangError`` naming the file (``shown``: how, default ``'path'``)."""
    shown = shown or _quoted(path)
    pickle_bytes = _pickle_bytes(path, shown)
    import torch  # lazy: torch

    _scan(pickle_bytes, shown, allowed_globals())

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch warns about pickle protocols it reads fine
            return torch.load(path, weights_only=True, map_location="cpu",
                              mmap=zipfile.is_zipfile(path))
    except Exception as exc:  # noqa: BLE001 - the boundary where a hostile file's error becomes ours
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise SchedlangError(f"{shown}: torch cannot read this checkpoint as data: {first[:300]}",
                             hint=HINT_SAFE) from None


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


def _hf_folder(path: Path) -> State:
    """An HF ``Trainer`` checkpoint folder: ``scheduler.pt`` and ``trainer_state.json``."""
    scheduler, trainer_state = path / "scheduler.pt", path / "trainer_state.json"
    missing = [p.name for p in (scheduler, trainer_state) if not p.is_file()]
    if missing:
        raise SchedlangError(f"{_quoted(path)} is a folder without {' and '.join(missing)}",
                             hint="give an HF Trainer checkpoint folder (checkpoint-N/), or the "
                                  "file torch.save(scheduler.state_dict()) wrote")
    data = load(scheduler, _quoted(path, scheduler.name))
    if not isinstance(data, dict):
        raise SchedlangError(f"{_quoted(path, scheduler.name)} holds a {type(data).__name__}, "
                             "not a scheduler state dict")
    try:
        with open(trainer_state, "rb") as handle:
            raw = handle.read(MAX_STATE_BYTES + 1)
        _check_size(_quoted(path, trainer_state.name), len(raw), "it")
        info = json.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise SchedlangError(f"cannot read {_quoted(path, trainer_state.name)}: {exc}") from None
    step = info.get("global_step") if isinstance(info, dict) else None
    if not isinstance(step, int) or isinstance(step, bool) or step < 0:
        raise SchedlangError(f"{_quoted(path, trainer_state.name)} has no whole global_step")
    extra = {"global_step": step}
    if isinstance(info.get("max_steps"), int):
        extra["max_steps"] = info["max_steps"]
    return State(str(path), "hf", data, extra)


def _lightning(path: Path, data: dict) -> State:
    schedulers = data["lr_schedulers"]
    if not isinstance(schedulers, list) or not schedulers:
        raise SchedlangError(f"{_quoted(path)}: the checkpoint's lr_schedulers is empty",
                             hint="configure_optimizers returned no lr scheduler")
    if len(schedulers) > 1:
        raise SchedlangError(f"{_quoted(path)}: the checkpoint has {len(schedulers)} lr schedulers; "
                             "schedlang resume checks one")
    if not isinstance(schedulers[0], dict):
        raise SchedlangError(f"{_quoted(path)}: lr_schedulers[0] is not a state dict")
    extra = {k: data[k] for k in ("global_step", "epoch") if isinstance(data.get(k), int)}
    lr = _optimizer_lr(data.get("optimizer_states"))
    if lr is not None:
        extra["optimizer_lr"] = lr
    return State(str(path), "lightning", schedulers[0], extra)


def _optimizer_lr(states) -> float | None:
    """The lr of the first optimizer's first param group at save time: what the scheduler last
    set, where its own state does not record it (schedlang's classes)."""
    try:
        lr = states[0]["param_groups"][0]["lr"]
    except (TypeError, KeyError, IndexError):
        return None
    if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not math.isfinite(lr):
        return None
    return float(lr)
