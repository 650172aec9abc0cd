

class _SchedlangWarning(UserWarning):
    """What this module's classes warn with (``schedlang.SchedlangWarning`` in-process)."""


def _checked_params(values, where=""):
    """``values`` as the constructor takes them: every name a parameter of the file, an int
    one a whole number >= 0 (returned as an int), a float one finite, every ``where`` clause
    true.  Raises ValueError naming the parameter; ``where`` prefixes the message."""
    out = {}
    for name, value in values.items():
        kind = _PARAM_KINDS.get(name)
        if kind is None:
            raise ValueError(f"{where}unknown parameter {name!r}; this class takes "
                             f"{sorted(_PARAM_KINDS)}")
        if isinstance(value, (bool, str, bytes)) or not hasattr(value, "__float__"):
            raise ValueError(f"{where}parameter {name!r} must be a number, not {value!r}")
        number = float(value) if not isinstance(value, int) else value
        if not math.isfinite(number):
            raise ValueError(f"{where}parameter {name!r} must be finite, not {value!r}")
        if kind == "float":
            out[name] = value if isinstance(value, (int, float)) else number
        elif number < 0 or number != math.floor(number):
            raise ValueError(f"{where}parameter {name!r} is an int (a whole number >= 0), "
                             f"not {value!r}")
        else:
            out[name] = int(number)
    for name, clause, names in _where_failures(out):
        shown = ", ".join(f"{key} = {out[key]!r}" for key in names)
        raise ValueError(f"{where}parameter {name!r} must satisfy {clause} ({shown})")
    return out


def _restored_params(given, state_dict, rule):
    """The parameters a class runs with after ``load_state_dict(state_dict, params=rule)``:
    the constructor's (``rule="constructor"``, warning with each saved value that differs) or
    the saved ones (``"saved"``; the constructor's for any the state lacks, with a warning).
    The saved values are checked either way."""
    if rule not in ("constructor", "saved"):
        raise ValueError(f"load_state_dict(params=...) is 'constructor' or 'saved', not {rule!r}")
    saved = state_dict.get("params")
    saved = {} if saved is None else saved
    if not isinstance(saved, dict):
        raise ValueError(f"load_state_dict: the state's params is not a dict: {saved!r}")
    checked = _checked_params({**given, **saved}, "load_state_dict: ")
    if rule == "constructor":
        changed = [f"{name}={saved[name]!r} (constructor: {given[name]!r})"
                   for name in given if name in saved and saved[name] != given[name]]
        if changed:
            torch.optim.lr_scheduler.warnings.warn(_SchedlangWarning(
                "load_state_dict: the saved parameters differ from the constructor's: "
                + ", ".join(changed) + "; the constructor's are kept (the saved clock is restored); "
                "load_state_dict(state, params='saved') keeps the saved ones"), stacklevel=3)
        return given
    missing = [name for name in given if name not in saved]
    if missing:
        torch.optim.lr_scheduler.warnings.warn(_SchedlangWarning(
            "load_state_dict: the checkpoint has no value for " + ", ".join(map(repr, missing))
            + "; the constructor's value is kept"), stacklevel=3)
    return checked


class _StandInLRScheduler:
    """Plain-torch stand-in for ``cerebras.pytorch.optim.lr_scheduler.LRScheduler``.

    Used only when cstorch is not installed.  It keeps cstorch's mechanics:
    ``last_epoch`` is an int64 tensor advanced in place, the constructor's
    first step takes it from -1 to 0 and writes f(0), and ``step()`` writes
    ``_get_closed_form_lr()`` into every group's ``lr`` as a tensor.
    """

    def __init__(self, optimizer, total_iters=None, last_epoch=-1):
        self.optimizer = optimizer
        self.total_iters = total_iters
        device = next((p.device for group in optimizer.param_groups for p in group["params"]),
                      torch.device("cpu"))
        self.last_epoch = torch.full((), last_epoch, dtype=torch.int64, device=device)
        self.step()

    def step(self):
        self.last_epoch.add_(1)
        value = self._get_closed_form_lr()
        for group in self.optimizer.param_groups:
            if isinstance(group["lr"], torch.Tensor):
                group["lr"][...] = value  # not copy_: see _set in the torch class
            else:
                group["lr"] = value.clone()
        self._last_value = [group["lr"].clone() for group in self.optimizer.param_groups]

    def get_last_lr(self):
        return self._last_value

    def state_dict(self):
        return {key: value.clone() if isinstance(value, torch.Tensor) else value
                for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict):
        state = dict(state_dict)
        self.last_epoch.copy_(state.pop("last_epoch"))
        self.__dict__.update(state)


try:
    from cerebras.pytorch.optim.lr_scheduler import LRScheduler as _CerebrasLRScheduler
except ImportError:
    _CerebrasLRScheduler = _StandInLRScheduler


class WarmupCosine(_CerebrasLRScheduler):
    """Cerebras scheduler for schedule 'lr' of warmup_cosine.sched: closed form in ``last_epoch``.

    ``_get_closed_form_lr`` (and ``_get_closed_form``, its name in newer
    cstorch) is straight-line torch code on the int64 ``last_epoch`` tensor,
    computed in float32 as Cerebras lr tensors are.  Values are absolute.
    """

    def __init__(self, optimizer, *, last_epoch=-1):
        self.params = _checked_params({})
        super().__init__(optimizer, total_iters=1000, last_epoch=last_epoch)

    def _get_closed_form_lr(self):
        return lr(self.last_epoch, **self.params, _dtype=torch.float32, _compute=torch.float32)

    def _get_closed_form(self):
        return self._get_closed_form_lr()

    def load_state_dict(self, state_dict, params="constructor"):
        """Restore the step of ``state_dict`` and set the lr at it; keep the constructor's
        parameters (a warning names each saved value that differs), or the saved ones with
        ``params="saved"`` (the rule of the torch class)."""
        state = dict(state_dict)
        state["params"] = _restored_params(self.params, state_dict, params)
        super().load_state_dict(state)
        value = self._get_closed_form_lr()
        for group in self.optimizer.param_groups:
            if isinstance(group["lr"], torch.Tensor):
                group["lr"][...] = value  # not copy_: see _set in the torch class
            else:
                group["lr"] = value.clone()
        if hasattr(self, "_last_value"):  # the stand-in's get_last_lr()
            self._last_value = [group["lr"].clone() for group in self.optimizer.param_groups]
