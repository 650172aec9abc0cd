"""Every program of ``examples/`` written once with ``schedlang.build`` (tests/test_build.py proves
each equal to its file).  One function per file, named after it; the docs quote some of them."""

from schedlang import build as sb


def bert_linear():
    peak = sb.param("peak", float, 1e-4, where="peak > 0")
    warmup = sb.param("warmup", int, 10_000, where="warmup >= 0")
    total = sb.param("total", int, 1_000_000, where="total > warmup")
    return sb.program(lr=sb.warmup(sb.linear, warmup) >> sb.linear(peak, 0, total - warmup),
                      weight_decay=sb.constant(0.01))


def chinchilla():
    peak = sb.param("peak", float, 1e-4, where="peak > 0")
    warmup = sb.param("warmup", int, 1500, where="warmup >= 0")
    total = sb.param("total", int, 470_000, where="total > warmup")
    return sb.program(lr=sb.warmup(sb.linear, warmup) >> sb.cosine(peak, peak / 10, total - warmup))


def gpt3():
    peak = sb.param("peak", float, 6e-4, where="peak > 0")
    warmup = sb.param("warmup", int, 750, where="warmup >= 0")
    decay = sb.param("decay", int, 520_000, where="decay > warmup")
    total = sb.param("total", int, 600_000, where="total >= decay")
    return sb.program(lr=sb.warmup(sb.linear, warmup)
                      >> sb.cosine(peak, 0.1 * peak, decay - warmup)
                      >> sb.constant(0.1 * peak, total - decay))


def gpt_pretrain():
    peak = sb.param("peak", float, 6e-4, where="peak > 0")
    warmup = sb.param("warmup", int, 2000, where="warmup >= 0")
    total = sb.param("total", int, 100_000, where="total > warmup")
    decay = sb.cosine(peak, 0.1 * peak, total - warmup)
    return sb.program(lr=sb.warmup(sb.linear, warmup) >> decay, weight_decay=sb.constant(0.1))


def llama_cosine():
    peak = sb.param("peak", float, 3e-4, where="peak > 0")
    warmup = sb.param("warmup", int, 2000, where="warmup >= 0")
    total = sb.param("total", int, 500_000, where="total > warmup")
    return sb.program(lr=sb.warmup(sb.linear, warmup) >> sb.cosine(peak, 0.1 * peak, total - warmup),
                      weight_decay=sb.constant(0.1))


def minicpm_wsd():
    peak = sb.param("peak", float, 1e-2, where="peak > 0")
    warmup = sb.param("warmup", int, 1000, where="warmup >= 0")
    total = sb.param("total", int, 100_000, where="total > warmup")
    cooldown = total / 10
    stable = total - warmup - cooldown
    return sb.program(
        lr=sb.warmup(sb.linear, warmup) >> sb.constant(peak, stable) >> sb.linear(peak, 0, cooldown),
        lr_sqrt=sb.warmup(sb.linear, warmup) >> sb.constant(peak, stable)
        >> (peak * (1 - sb.sqrt(sb.t / cooldown))).for_(cooldown))


def noam():
    d_model = sb.param("d_model", int, 512, where="d_model > 0")
    warmup = sb.param("warmup", int, 4000, where="warmup > 0")
    return sb.program(lr=sb.noam(d_model, warmup))


def one_cycle():
    total = sb.param("total", int, 10_000)
    return sb.program(lr=sb.onecycle(3e-3, total, pct_start=0.25))


def resnet_multistep():
    steps_per_epoch = sb.param("steps_per_epoch", int, 5005, where="steps_per_epoch > 0")
    base = sb.param("base", float, 0.1, where="base > 0")
    return sb.program(lr=sb.multistep(base, 0.1, [30 * steps_per_epoch, 60 * steps_per_epoch])
                      .for_(90 * steps_per_epoch),
                      momentum=sb.constant(0.9))


def sgdr():
    return sb.cosine_restarts(0.05, 1e-5, 1000, mult=2)


def step_decay():
    steps_per_epoch = sb.param("steps_per_epoch", int, 500, where="steps_per_epoch > 0")
    base = sb.param("base", float, 0.1)
    epochs = [sb.time(e, "ep", steps_per_epoch) for e in (25, 55, 75)]  # 25ep: as the file writes it
    return sb.program(lr=sb.warmup(sb.linear, sb.time(5, "ep", steps_per_epoch))
                      >> sb.multistep(base, 0.1, epochs),
                      momentum=sb.constant(0.9))


def user_functions():
    def halving(v, every):
        return v * 0.5 ** sb.floor(sb.t / every)

    floor_lr = sb.param("floor_lr", float, 1e-5)
    return sb.program(lr=sb.max(halving(1e-2, 2000), floor_lr),
                      momentum=sb.if_(sb.t < 1000, 0.85 + 0.1 * sb.t / 1000, 0.95))


def warmup_cosine():
    return sb.warmup(sb.linear, 500) >> sb.cosine(0.001, 1e-4, 500)


def wsd():
    peak = sb.param("peak", float, 1e-3, where="peak > 0")
    total = sb.param("total", int, 50_000)
    cooldown = total / 5
    lr = (sb.warmup(sb.linear, 1000)
          >> sb.constant(peak, total - 1000 - cooldown)
          >> sb.linear(peak, 0, cooldown))
    return sb.program(lr=lr, weight_decay=0.1 * lr / peak)


def deepseek_v3():
    seq_len = sb.param("seq_len", int, 4096)
    tok = [sb.time(n * 10**9, "tok") for n in (78, 156, 234, 312, 390, 469)]
    batch = sb.stages(3072, [3072 + 2048 * i for i in range(1, 7)], tok, seq_len)
    return sb.program(
        batch=batch,
        lr=sb.warmup(sb.linear, sb.time(2000, "ba"))
        >> sb.constant(2.2e-4, sb.time(10e12, "tok") - 2000 * 3072 * sb.time(4096, "tok"))
        >> sb.cosine(2.2e-4, 2.2e-5, sb.time(4.3e12, "tok"))
        >> sb.constant(2.2e-5, sb.time(333e9, "tok"))
        >> sb.jump(sb.constant(7.3e-6, sb.time(167e9, "tok"))))


def llama3_405b():
    seq_len = sb.param("seq_len", int, 4096)
    batch = sb.stages(1024, [2048, 4096], [sb.time(252e6, "tok"), sb.time(2.87e12, "tok")], seq_len)
    return sb.program(batch=batch, lr=sb.warmup(sb.linear, 8000) >> sb.cosine(8e-5, 8e-7, 1_192_000)
                      >> sb.constant(8e-7))


def wsd_trunk():
    peak = sb.param("peak", float, 1e-3, where="peak > 0")
    return sb.program(run=200_000, lr=sb.warmup(sb.linear, 1000) >> sb.constant(peak))


def olmo2_trunk():
    seq_len = sb.param("seq_len", int, 4096)
    return sb.program(batch=sb.stages(1024, [], [], seq_len), run=sb.time(5e12, "tok"),
                      lr=sb.warmup(sb.linear, sb.time(2000, "ba")) >> sb.constant(3e-4))
