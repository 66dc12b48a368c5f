"""The kernels a piece of GPU work runs, as the GPU ran them: start, duration and the gap before
each, from CUPTI's activity records through torch.profiler (which records every kernel of the
process, whichever library launched it, graph replays included).  For the probes:

    from _timeline import timeline
    timeline(lambda: g.replay(), sync, label="cudakit step")
"""


def timeline(run, sync, label, reps=3, show=40, out=None):
    """Profile `reps` calls of run() (each followed by sync()) and print the last `show` kernels of
    the last call, and its totals."""
    import torch
    from torch.profiler import profile, ProfilerActivity

    run(); sync()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            run(); sync()
    evs = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA and e.time_range.elapsed_us() >= 0]
    evs.sort(key=lambda e: e.time_range.start)
    # the last rep: the last 1/reps of the kernels
    n = len(evs) // reps
    last = evs[-n:] if n else evs
    t0 = last[0].time_range.start if last else 0
    print(f"## {label}: {len(last)} kernels, {last[-1].time_range.end - t0:.2f} us first start to last end"
          if last else f"## {label}: no kernels", flush=True)
    busy = 0.0
    prev = None
    for i, e in enumerate(last):
        s, d = e.time_range.start, e.time_range.elapsed_us()
        gap = s - prev if prev is not None else 0.0
        busy += d
        if i >= len(last) - show:
            print(f"  {s - t0:9.2f} +{d:7.2f} us  gap {gap:6.2f}  {e.name[:110]}")
        prev = e.time_range.end
    if last:
        print(f"  busy {busy:.2f} us, gaps {last[-1].time_range.end - t0 - busy:.2f} us", flush=True)
    if out:
        prof.export_chrome_trace(out)
