# part: positions
# why: similarity via F.normalize; permutation check via (a - b).abs().max() <= atol

def position_similarity(pe):
    unit = F.normalize(pe, dim=-1)
    return unit @ unit.transpose(0, 1)


def is_permutation_equivariant(fn, x, perm, atol=1e-5):
    a = fn(x[:, perm])
    b = fn(x)[:, perm]
    return bool((a - b).abs().max() <= atol)
