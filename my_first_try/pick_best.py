def pick_best(samples):
    return sorted(samples, key=lambda s: s['reward'])[-1]
