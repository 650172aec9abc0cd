"""Fixed text of the scheduler classes that ``emit`` writes into generated modules.

Kept apart from the emitter so the class bodies read as ordinary Python.
Only ``{...}`` fields are filled in, and only with checked identifiers
(``codegen.base.mangle``) and numbers printed by our own printers.
"""

# ``load_state_dict`` restores the checkpoint's parameters over the constructor's, as every
# PyTorch scheduler restores its own attributes: a resumed run continues the saved schedule.
# Silently doing so surprised users, so it warns, naming each parameter that changes.
RESUME_HELPER = '''

def _warn_replaced_params(given, state_dict):
    saved = state_dict.get("params") or {{}}
    changed = [f"{{name}}={{saved[name]!r}} (constructor: {{given[name]!r}})"
               for name in given if name in saved and saved[name] != given[name]]
    if changed:
        torch.optim.lr_scheduler.warnings.warn(
            "load_state_dict: the checkpoint's parameters replace those given to the constructor: "
            + ", ".join(changed) + "; to change one on resume, set scheduler.params[name] after loading",
            stacklevel=3)
'''

TORCH_CLASS = RESUME_HELPER + '''

_PLAIN = (float, int)


class {class_name}(torch.optim.lr_scheduler.LRScheduler):
    """Sets {keys} in every optimizer param group from {source}.

    Values are {mode}.  As with any PyTorch scheduler, call ``step()`` after
    ``optimizer.step()``: after k calls a group holds the value at step k.
    Float entries are set from plain-Python functions (no torch op per step);
    tensor entries (``lr=torch.tensor(1e-3)``) are filled in place on their
    device from branch-free torch code and a device-side int64 step counter,
    so a compiled or CUDA-graph-captured step never waits for the host.
    """

    SCHEDULES = {{{table}}}
    RELATIVE = {relative}

    def __init__(self, optimizer, *{signature}, last_epoch=-1):
        self.params = {{{params}}}
        self._device_steps = {{}}
        for index, group in enumerate(optimizer.param_groups):
            for key in self.SCHEDULES:
                if key not in group:
                    raise KeyError(f"optimizer param group {{index}} has no {{key!r}} to schedule")
                if self.RELATIVE and last_epoch == -1 and key != "lr":
                    value = group[key]
                    group.setdefault("initial_" + key,
                                     value.clone() if isinstance(value, torch.Tensor) else value)
        super().__init__(optimizer, last_epoch)

    def _device_step(self, device):
        step = self._device_steps.get(device)
        if step is None:
            step = torch.full((), self.last_epoch, dtype=torch.int64, device=device)
            self._device_steps[device] = step
        return step

    def values(self, key):
        """The value of schedule ``key`` for every param group at ``self.last_epoch``."""
        torch_function, python_function = self.SCHEDULES[key]
        plain = None
        found = {{}}
        out = []
        for group in self.optimizer.param_groups:
            current = group[key]
            if isinstance(current, _PLAIN):  # cheaper than isinstance(current, torch.Tensor)
                if plain is None:
                    plain = float(python_function(self.last_epoch, **self.params))
                value = plain
            else:
                where = (current.device, current.dtype)
                value = found.get(where)
                if value is None:
                    value = torch_function(self._device_step(current.device), **self.params,
                                           _dtype=current.dtype)
                    found[where] = value
            if self.RELATIVE:
                value = value * group["initial_" + key]
            out.append(value)
        return out

    def get_lr(self):
        if "lr" not in self.SCHEDULES:
            return [group["lr"] for group in self.optimizer.param_groups]
        return self.values("lr")

    _get_closed_form_lr = get_lr

    def step(self, epoch=None):
        self._step_count += 1
        if epoch is None:
            self.last_epoch += 1
            for step in self._device_steps.values():
                step.add_(1)
        else:
            self.last_epoch = epoch
            for step in self._device_steps.values():
                step.fill_(epoch)
        groups = self.optimizer.param_groups
        for key in self.SCHEDULES:
            for group, value in zip(groups, self.values(key)):
                if isinstance(group[key], _PLAIN):
                    group[key] = value
                else:
                    group[key].copy_(value)
        self._last_lr = [group["lr"] if isinstance(group["lr"], _PLAIN) else group["lr"].clone()
                         for group in groups]

    def state_dict(self):
        for step in self._device_steps.values():
            # A replayed CUDA graph advances only the device counter: it is the truth.
            self.last_epoch = int(step)
            break
        return {{key: value for key, value in self.__dict__.items()
                if key not in ("optimizer", "_device_steps")}}

    def load_state_dict(self, state_dict):
        _warn_replaced_params(self.params, state_dict)
        self.__dict__.update(state_dict)
        for step in self._device_steps.values():
            step.fill_(self.last_epoch)
'''

CEREBRAS_BASE = RESUME_HELPER + '''

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
                group["lr"].copy_(value)
            else:
                group["lr"] = value.clone()
        self._last_value = [group["lr"].clone() for group in self.optimizer.param_groups]

    def get_last_lr(self):
        return self._last_value

    def state_dict(self):
        return {{key: value.clone() if isinstance(value, torch.Tensor) else value
                for key, value in self.__dict__.items() if key != "optimizer"}}

    def load_state_dict(self, state_dict):
        state = dict(state_dict)
        self.last_epoch.copy_(state.pop("last_epoch"))
        self.__dict__.update(state)


try:
    from cerebras.pytorch.optim.lr_scheduler import LRScheduler as _CerebrasLRScheduler
except ImportError:
    _CerebrasLRScheduler = _StandInLRScheduler
'''

CEREBRAS_CLASS = '''

class {class_name}(_CerebrasLRScheduler):
    """Cerebras scheduler for schedule {key!r} of {source}: closed form in ``last_epoch``.

    ``_get_closed_form_lr`` (and ``_get_closed_form``, its name in newer
    cstorch) is straight-line torch code on the int64 ``last_epoch`` tensor,
    computed in float32 as Cerebras lr tensors are.  Values are {mode}.
    """

    def __init__(self, optimizer, *{signature}, last_epoch=-1):
        self.params = {{{params}}}
        super().__init__(optimizer, total_iters={total_iters}, last_epoch=last_epoch)

    def _get_closed_form_lr(self):
        return {function}(self.last_epoch, **self.params, _dtype=torch.float32, _compute=torch.float32)

    def _get_closed_form(self):
        return self._get_closed_form_lr()

    def load_state_dict(self, state_dict):
        _warn_replaced_params(self.params, state_dict)
        super().load_state_dict(state_dict)
'''
