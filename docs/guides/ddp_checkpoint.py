"""Guide: DDP with two CPU processes, and the scheduler in ``torch.distributed.checkpoint``.

Run: ``python docs/guides/ddp_checkpoint.py`` (CPU, gloo, two processes started by
``torch.multiprocessing.spawn`` on a free local port).  Every rank builds the same
scheduler on its own optimizer: the schedule is a function of the step, so no
rank talks to another about it.  At ``SAVE_AT`` the ranks save model, optimizer
and scheduler with ``torch.distributed.checkpoint`` (DCP), rebuild everything
fresh, load and continue.  Exits non-zero unless on every rank the lr used at
every step k equals ``prog["lr"](k)`` and the ranks end with equal weights.

The scheduler goes into DCP as a ``Stateful`` beside the model and optimizer
(``get_state_dict`` / ``set_state_dict``): its state is plain Python data
(``last_epoch``, ``params``, torch's own fields), which DCP stores as objects.
"""

import os
import socket
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.multiprocessing as mp
from guide_check import check, record_lrs
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
from torch.distributed.checkpoint.stateful import Stateful
from torch.nn.parallel import DistributedDataParallel

import schedlang

SCHEDULE = "warmup(linear, 5) >> cosine(0.01, 0.001, 25)"
WORLD = 2
STEPS = 36  # past the end (30)
SAVE_AT = 13


class AppState(Stateful):
    """What one DCP checkpoint holds: model, optimizer and scheduler."""

    def __init__(self, model, optimizer, scheduler):
        self.model, self.optimizer, self.scheduler = model, optimizer, scheduler

    def state_dict(self):
        model, optimizer = get_state_dict(self.model, self.optimizer)
        return {"model": model, "optimizer": optimizer, "scheduler": self.scheduler.state_dict()}

    def load_state_dict(self, state):
        set_state_dict(self.model, self.optimizer, model_state_dict=state["model"],
                       optim_state_dict=state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])


def build(prog):
    torch.manual_seed(0)  # the same initial weights on every rank
    model = DistributedDataParallel(torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(),
                                                        torch.nn.Linear(8, 1)))
    opt = torch.optim.AdamW(model.parameters(), lr=0.0)
    return model, opt, prog.scheduler_class("Schedule")(opt)


def train(model, opt, scheduler, steps: range, rank: int) -> None:
    for k in steps:
        g = torch.Generator().manual_seed(1000 * k + rank)  # each rank its own shard of batch k
        x = torch.randn(8, 4, generator=g)
        loss = torch.nn.functional.mse_loss(model(x), x.sum(dim=1, keepdim=True))
        opt.zero_grad()
        loss.backward()  # DDP averages the gradients across ranks here
        opt.step()
        scheduler.step()


def worker(rank: int, port: int, ckpt_dir: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=WORLD)
    try:
        prog = schedlang.compile(SCHEDULE)
        model, opt, scheduler = build(prog)
        before = record_lrs(opt)
        train(model, opt, scheduler, range(SAVE_AT), rank)
        dcp.save({"app": AppState(model, opt, scheduler)}, checkpoint_id=ckpt_dir)
        del model, opt, scheduler

        model, opt, scheduler = build(prog)  # fresh objects: scheduler at step 0
        dcp.load({"app": AppState(model, opt, scheduler)}, checkpoint_id=ckpt_dir)
        assert scheduler.last_epoch == SAVE_AT, scheduler.last_epoch
        after = record_lrs(opt)
        train(model, opt, scheduler, range(SAVE_AT, STEPS), rank)

        ok = check(f"rank {rank}, before the save", before, prog["lr"])
        ok &= check(f"rank {rank}, after the DCP load", after, prog["lr"], start=SAVE_AT)
        ok &= len(before) + len(after) == STEPS
        weights = torch.cat([p.detach().flatten() for p in model.parameters()])
        gathered = [torch.empty_like(weights) for _ in range(WORLD)]
        dist.all_gather(gathered, weights)
        ok &= all(torch.equal(gathered[0], w) for w in gathered)
        if not ok:
            raise SystemExit(f"rank {rank}: the guide's check failed")
        # Every rank is past its last collective before any tears gloo down: without this,
        # a rank that destroys its group first can abort the other's pending work (SIGABRT,
        # seen on a loaded machine).
        dist.barrier()
    finally:
        dist.destroy_process_group()
    # Checked and torn down: leave without the interpreter's own teardown, where a worker thread
    # of gloo or DCP can still be joinable and std::terminate aborts the rank ("terminate called
    # without an active exception", SIGABRT, about one run in twenty on a loaded machine).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> int:
    with tempfile.TemporaryDirectory() as ckpt_dir:
        try:
            mp.spawn(worker, args=(free_port(), ckpt_dir), nprocs=WORLD, join=True)
        except Exception as exc:  # a rank failed: mp.spawn re-raises it here
            print(f"DDP guide failed: {exc}", file=sys.stderr)
            return 1
    print(f"DDP: {WORLD} ranks, DCP save at step {SAVE_AT} and load: lr == prog['lr'](k) on every rank")
    return 0


if __name__ == "__main__":
    sys.exit(main())
