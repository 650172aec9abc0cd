

def _warn_replaced_params(given, state_dict):
    saved = state_dict.get("params") or {}
    changed = [f"{name}={saved[name]!r} (constructor: {given[name]!r})"
               for name in given if name in saved and saved[name] != given[name]]
    if changed:
        torch.optim.lr_scheduler.warnings.warn(
            "load_state_dict: the checkpoint's parameters replace those given to the constructor: "
            + ", ".join(changed) + "; to change one on resume, set scheduler.params[name] after loading",
            stacklevel=3)


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
        self.params = {}
        super().__init__(optimizer, total_iters=1000, last_epoch=last_epoch)

    def _get_closed_form_lr(self):
        return lr(self.last_epoch, **self.params, _dtype=torch.float32, _compute=torch.float32)

    def _get_closed_form(self):
        return self._get_closed_form_lr()

    def load_state_dict(self, state_dict):
        _warn_replaced_params(self.params, state_dict)
        super().load_state_dict(state_dict)
